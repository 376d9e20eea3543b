-- A contact's timeline: each open or click row of the
-- statistics names its ledger row (message_id) and keeps how the machine
-- rules judged the hit (machine: 1 a machine's, 0 a person's), so the
-- contact page lists every open and click of a mail with its time, its
-- link and who made it. Rows written before this migration have neither
-- (NULL): the page shows those mails' first open and click from the
-- ledger instead.
--
-- send_events.human is not the judgement: a person's hit that came less
-- than a minute after the last human count is written with human = 0, and
-- a machine's first click taken back (rule 12) turns human to 0 later;
-- machine is set once from the judgement and to 1 on a take-back.

-- +goose Up
ALTER TABLE send_events ADD COLUMN message_id BIGINT;
ALTER TABLE send_events ADD COLUMN machine INTEGER;
-- The events of one page of a contact's mails, in time order; the rows of
-- before this migration stay out of it.
CREATE INDEX send_events_message ON send_events (message_id, at) WHERE message_id IS NOT NULL;

-- +goose Down
DROP INDEX send_events_message;
ALTER TABLE send_events DROP COLUMN machine;
ALTER TABLE send_events DROP COLUMN message_id;
