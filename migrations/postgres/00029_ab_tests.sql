-- A/B subject tests: a single send may test two to four
-- subjects (ab_subjects, with their preheaders in ab_preheaders, '' for
-- the send's own) on ab_share per cent of its audience; after ab_wait
-- minutes (ab_decide_at, Unix ms, fixed when the audience is resolved) the
-- variant with the most unique opens or clicks (ab_metric) wins
-- (ab_winner, 1-based; 0 not chosen yet) and the rest of the audience gets
-- it, released in chunks (ab_released once all are). Each ledger row
-- carries its variant (0: none, or held back until the winner is chosen).

-- +goose Up
ALTER TABLE single_sends ADD COLUMN ab_subjects TEXT NOT NULL DEFAULT '[]';
ALTER TABLE single_sends ADD COLUMN ab_preheaders TEXT NOT NULL DEFAULT '[]';
ALTER TABLE single_sends ADD COLUMN ab_share INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN ab_metric TEXT NOT NULL DEFAULT '';
ALTER TABLE single_sends ADD COLUMN ab_wait INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN ab_decide_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN ab_winner INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN ab_released INTEGER NOT NULL DEFAULT 0;
ALTER TABLE send_messages ADD COLUMN variant INTEGER NOT NULL DEFAULT 0;
-- The tests waiting for their winner or the release of their rest (the
-- scheduler's look-up).
CREATE INDEX single_sends_ab_pending ON single_sends (ab_decide_at) WHERE ab_share > 0 AND ab_released = 0;
-- The rows of a test by variant (the winner's counts, the statistics);
-- ordinary sends' rows (variant 0) stay out of it.
CREATE INDEX send_messages_variant ON send_messages (send_id, variant) WHERE variant > 0;

-- +goose Down
DROP INDEX send_messages_variant;
DROP INDEX single_sends_ab_pending;
ALTER TABLE send_messages DROP COLUMN variant;
ALTER TABLE single_sends DROP COLUMN ab_released;
ALTER TABLE single_sends DROP COLUMN ab_winner;
ALTER TABLE single_sends DROP COLUMN ab_decide_at;
ALTER TABLE single_sends DROP COLUMN ab_wait;
ALTER TABLE single_sends DROP COLUMN ab_metric;
ALTER TABLE single_sends DROP COLUMN ab_share;
ALTER TABLE single_sends DROP COLUMN ab_preheaders;
ALTER TABLE single_sends DROP COLUMN ab_subjects;
