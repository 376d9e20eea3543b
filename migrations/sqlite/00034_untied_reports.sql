-- Reports that could not be tied to one of herald's messages
-- (decisions.md 9): a report changes something only when a VERP token, a
-- Message-ID of herald's, or what a signed provider webhook carries back
-- verifies. Every other report changes nothing and is kept here, server
-- wide, for the setup page to count by why and by where it came from (a
-- relay that strips the return path shows up as one sender IP). Rows
-- older than 30 days are pruned.

-- +goose Up
CREATE TABLE untied_reports (
    id         INTEGER PRIMARY KEY,
    kind       TEXT NOT NULL,
    source     TEXT NOT NULL,
    remote_ip  TEXT NOT NULL DEFAULT '',
    email      TEXT NOT NULL DEFAULT '',
    why        TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
-- The page counts the last 30 days by why and by source and sender IP:
-- both read from this index alone; the pruning uses it too.
CREATE INDEX untied_reports_time ON untied_reports (created_at, source, remote_ip, why);

-- Mails of the bounce mailbox that yielded no report (unreadable, too
-- large, or not a report at all): they stay in the mailbox, set aside,
-- and are counted here once each (the mailbox without its password, and
-- the mail's IMAP UIDVALIDITY/UID or POP3 UIDL). Pruned after 30 days.
CREATE TABLE bounce_mailbox_kept (
    mailbox    TEXT NOT NULL,
    mail_id    TEXT NOT NULL,
    why        TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (mailbox, mail_id)
);
CREATE INDEX bounce_mailbox_kept_time ON bounce_mailbox_kept (created_at, why);

-- Tokens of provider webhook signatures already taken (Mailgun's), kept
-- until their signature's timestamp is too old to be taken anyway: a
-- captured request cannot be replayed, on any herald process. The token
-- is kept as its hex SHA-256.
CREATE TABLE webhook_tokens (
    source     TEXT NOT NULL,
    token      TEXT NOT NULL,
    expires_at DATETIME NOT NULL,
    PRIMARY KEY (source, token)
);
CREATE INDEX webhook_tokens_expiry ON webhook_tokens (expires_at);

-- +goose Down
DROP TABLE webhook_tokens;
DROP TABLE bounce_mailbox_kept;
DROP TABLE untied_reports;
