-- +goose Up
-- The pre-send checklist. checklist_blocks: 1 when the
-- account's failed checks refuse a send or an automation's set-live
-- (warnings only by default).
ALTER TABLE users ADD COLUMN checklist_blocks INTEGER NOT NULL DEFAULT 0;

-- The checklist's rates read the counters of the account's sends first
-- sent in the last 30 days (and Feedback.Summary its delivered count).
CREATE INDEX single_sends_user_sent ON single_sends (user_id, sent_at);

-- +goose Down
DROP INDEX single_sends_user_sent;
ALTER TABLE users DROP COLUMN checklist_blocks;
