-- +goose Up
-- Sender verification links expire 7 days after they are issued
-- (decisions.md 8). Links issued before this column existed count from
-- their last mail.
ALTER TABLE senders ADD COLUMN verify_issued_at DATETIME;
UPDATE senders SET verify_issued_at = COALESCE(send_at, created_at);

-- Every verification mail handed over (save, update of from_email,
-- resend), kept for an hour: at most 3 per sender per 10 minutes and 20
-- per account per hour, counted here so every process shares the count.
-- sender_id is null while the mail of a sender not yet stored is out.
CREATE TABLE verification_mails (
    id        INTEGER PRIMARY KEY,
    user_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    sender_id INTEGER,
    email     TEXT NOT NULL,
    sent_at   DATETIME NOT NULL
);
CREATE INDEX verification_mails_user_sent ON verification_mails (user_id, sent_at);

-- The CSV uploads in progress: at most a few per account at once across
-- every process. A slot whose holder stopped refreshing it (a crash) is
-- taken over once stale.
CREATE TABLE upload_slots (
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    slot    INTEGER NOT NULL,
    holder  TEXT NOT NULL,
    seen_at DATETIME NOT NULL,
    PRIMARY KEY (user_id, slot)
);

-- +goose Down
DROP TABLE upload_slots;
DROP TABLE verification_mails;
ALTER TABLE senders DROP COLUMN verify_issued_at;
