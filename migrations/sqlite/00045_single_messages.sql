-- Single messages (POST api/mail/send): each one is a send of one address,
-- a single_sends row marked message = 1 (out of every list of sends) with
-- its one ledger row in send_messages marked lane = 1. The lane's rows are
-- claimed by a claimer of their own before campaign rows, through the
-- partial index below, which holds only queued lane rows. message_data is
-- the JSON object whose keys fill the message's ((key)) placeholders;
-- idempotency_key answers a repeated call with the same message (unique per
-- account, so concurrent calls and several processes agree).

-- +goose Up
ALTER TABLE single_sends ADD COLUMN message INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN message_data TEXT NOT NULL DEFAULT '{}';
ALTER TABLE single_sends ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX single_sends_idempotency ON single_sends (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX single_sends_messages ON single_sends (user_id, id) WHERE message = 1;
ALTER TABLE send_messages ADD COLUMN lane INTEGER NOT NULL DEFAULT 0;
CREATE INDEX send_messages_lane ON send_messages (next_at, id) WHERE lane = 1 AND state = 0;

-- +goose Down
DROP INDEX send_messages_lane;
ALTER TABLE send_messages DROP COLUMN lane;
DROP INDEX single_sends_messages;
DROP INDEX single_sends_idempotency;
ALTER TABLE single_sends DROP COLUMN idempotency_key;
ALTER TABLE single_sends DROP COLUMN message_data;
ALTER TABLE single_sends DROP COLUMN message;
