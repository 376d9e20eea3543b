-- +goose Up
-- The built-in outbox: with no HERALD_SMTP_URL every message is stored
-- here (and shown in the console) instead of leaving the machine.
CREATE TABLE outbox_messages (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL DEFAULT 0,
    mail_from  TEXT NOT NULL,
    rcpt_to    TEXT NOT NULL,
    subject    TEXT NOT NULL DEFAULT '',
    message    BLOB NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE INDEX outbox_messages_user ON outbox_messages (user_id, id);

-- +goose Down
DROP TABLE outbox_messages;
