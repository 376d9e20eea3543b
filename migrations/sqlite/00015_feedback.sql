-- Hearing back (decisions.md 7): what relays, mailbox providers
-- and recipients report after a message was accepted.

-- +goose Up
-- Per send (extra fields soft_bounces and spam_reports), and when its
-- hard-bounce and complaint rate alerts were mailed (once per send).
ALTER TABLE single_sends ADD COLUMN soft_bounces INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN spam_reports INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN bounce_alerted_at DATETIME;
ALTER TABLE single_sends ADD COLUMN complaint_alerted_at DATETIME;

-- Per message: each kind of report counts once.
ALTER TABLE send_messages ADD COLUMN hard_bounced_at DATETIME;
ALTER TABLE send_messages ADD COLUMN soft_bounced_at DATETIME;
ALTER TABLE send_messages ADD COLUMN complained_at DATETIME;
-- A report that names no token finds its message by address.
CREATE INDEX send_messages_address ON send_messages (email, id);

-- A suppression keeps the status code, the diagnostic and the source of
-- the report that made it (smtp: the relay refused during the send).
ALTER TABLE suppressions ADD COLUMN status_code TEXT NOT NULL DEFAULT '';
ALTER TABLE suppressions ADD COLUMN diagnostic TEXT NOT NULL DEFAULT '';
ALTER TABLE suppressions ADD COLUMN source TEXT NOT NULL DEFAULT 'smtp';

-- Every report handled, per account: the console's bounces and
-- complaints page, and the soft-bounce limit (HERALD_SOFT_BOUNCE_LIMIT
-- soft bounces of one address in 30 days suppress it).
CREATE TABLE feedback (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    send_id     INTEGER,
    message_id  INTEGER,
    email       TEXT NOT NULL,
    kind        TEXT NOT NULL,
    status_code TEXT NOT NULL DEFAULT '',
    diagnostic  TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL,
    created_at  DATETIME NOT NULL
);
CREATE INDEX feedback_user ON feedback (user_id, id);
CREATE INDEX feedback_kind ON feedback (user_id, kind, id);
CREATE INDEX feedback_address ON feedback (user_id, email, kind, created_at);
CREATE INDEX feedback_time ON feedback (user_id, created_at);

-- +goose Down
DROP TABLE feedback;
ALTER TABLE suppressions DROP COLUMN source;
ALTER TABLE suppressions DROP COLUMN diagnostic;
ALTER TABLE suppressions DROP COLUMN status_code;
DROP INDEX send_messages_address;
ALTER TABLE send_messages DROP COLUMN complained_at;
ALTER TABLE send_messages DROP COLUMN soft_bounced_at;
ALTER TABLE send_messages DROP COLUMN hard_bounced_at;
ALTER TABLE single_sends DROP COLUMN complaint_alerted_at;
ALTER TABLE single_sends DROP COLUMN bounce_alerted_at;
ALTER TABLE single_sends DROP COLUMN spam_reports;
ALTER TABLE single_sends DROP COLUMN soft_bounces;
