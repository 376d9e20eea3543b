-- Several relays (HERALD_SMTP_URL): relay_rates counts the messages handed
-- to each relay per calendar window (per: its length in seconds, start:
-- unix seconds), so that a relay's rate= holds for every process sharing
-- the database, and the console reads a relay's day and last hour.
-- send_messages.relay names the relay that took a message (NULL: the one
-- relay of a plain HERALD_SMTP_URL, or the outbox).

-- +goose Up
CREATE TABLE relay_rates (
    relay TEXT NOT NULL,
    per   INTEGER NOT NULL,
    start INTEGER NOT NULL,
    count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (relay, per, start)
);
ALTER TABLE send_messages ADD COLUMN relay TEXT;

-- +goose Down
ALTER TABLE send_messages DROP COLUMN relay;
DROP TABLE relay_rates;
