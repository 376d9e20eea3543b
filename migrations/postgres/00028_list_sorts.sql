-- +goose Up
-- The console's lists sort by these columns, a page at a time (LIMIT and
-- OFFSET, the id breaking ties): each is read within one account, so the
-- index leads with user_id. A single send's sent_at has one (00022).
CREATE INDEX single_sends_user_name ON single_sends (user_id, single_send_name);
CREATE INDEX single_sends_user_status ON single_sends (user_id, status);
CREATE INDEX single_sends_user_created ON single_sends (user_id, created_at);
-- The calendar reads a month of scheduled sends by their time.
CREATE INDEX single_sends_user_send_after ON single_sends (user_id, send_after);
CREATE INDEX contacts_user_email ON contacts (user_id, email);
CREATE INDEX contacts_user_first_name ON contacts (user_id, first_name);
CREATE INDEX contacts_user_created ON contacts (user_id, created_at);
CREATE INDEX segments_user_name ON segments (user_id, segment_name);
CREATE INDEX segments_user_created ON segments (user_id, created_at);
CREATE INDEX senders_user_name ON senders (user_id, from_name);
CREATE INDEX senders_user_nickname ON senders (user_id, nickname);
CREATE INDEX senders_user_email ON senders (user_id, from_email);
CREATE INDEX senders_user_created ON senders (user_id, created_at);
CREATE INDEX automations_user_name ON automations (user_id, automation_name);
CREATE INDEX automations_user_created ON automations (user_id, created_at);

-- +goose Down
DROP INDEX automations_user_created;
DROP INDEX automations_user_name;
DROP INDEX senders_user_created;
DROP INDEX senders_user_email;
DROP INDEX senders_user_nickname;
DROP INDEX senders_user_name;
DROP INDEX segments_user_created;
DROP INDEX segments_user_name;
DROP INDEX contacts_user_created;
DROP INDEX contacts_user_first_name;
DROP INDEX contacts_user_email;
DROP INDEX single_sends_user_send_after;
DROP INDEX single_sends_user_created;
DROP INDEX single_sends_user_status;
DROP INDEX single_sends_user_name;
