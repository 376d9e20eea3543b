-- Hardening (decisions.md 8): opens and clicks counted at most once a
-- minute per message, and deleted sends kept until purged.

-- +goose Up
-- Opens and clicks of one message count once per minute per kind in the
-- send's totals: when each was last counted (Unix milliseconds).
ALTER TABLE send_messages ADD COLUMN open_counted_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE send_messages ADD COLUMN click_counted_at INTEGER NOT NULL DEFAULT 0;

-- A deleted single send keeps its row and the ledger rows of its sent
-- messages, so that the unsubscribe and preference links of its mails keep
-- working; it is purged a year after (and more) with its ledger.
ALTER TABLE single_sends ADD COLUMN deleted_at DATETIME;
CREATE INDEX single_sends_deleted ON single_sends (deleted_at) WHERE deleted_at IS NOT NULL;

-- +goose Down
DROP INDEX single_sends_deleted;
ALTER TABLE single_sends DROP COLUMN deleted_at;
ALTER TABLE send_messages DROP COLUMN click_counted_at;
ALTER TABLE send_messages DROP COLUMN open_counted_at;
