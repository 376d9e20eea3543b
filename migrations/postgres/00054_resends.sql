-- Resends to those who did not open: a resend is a single send of its
-- own (its own ledger, statistics, page and events) whose resend_of names
-- the completed send it follows. Its audience is not its targets but the
-- original's ledger rows delivered and not opened or clicked by a person
-- (human_opened_at and human_clicked_at still 0), read when it starts.

-- +goose Up
ALTER TABLE single_sends ADD COLUMN resend_of BIGINT;
-- A send has at most one resend that is not deleted (deleting a resend
-- that has not gone out cancels it and lets another be chosen); the
-- original's page finds its resend by it.
CREATE UNIQUE INDEX single_sends_resend_of ON single_sends (resend_of) WHERE resend_of IS NOT NULL AND deleted_at IS NULL;
-- A send's ledger rows in id order: a resend's audience is read from the
-- original's rows in chunks by id (the unique (send_id, email) index
-- orders by address).
CREATE INDEX send_messages_send_id ON send_messages (send_id, id);

-- +goose Down
DROP INDEX send_messages_send_id;
DROP INDEX single_sends_resend_of;
ALTER TABLE single_sends DROP COLUMN resend_of;
