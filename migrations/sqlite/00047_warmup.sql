-- Warm-up plans (decisions.md 11): warmup_plans holds an account's plan for
-- one From domain (day 1's volume, the daily growth factor, the volume at
-- which the plan ends, and day 1 as a day number in the account's time
-- zone: days since 1970-01-01 of the local date). warmup_counts counts the
-- messages of that domain handed to relays per local day: campaign claims
-- add to it in the claim's transaction under the day's cap (the row is
-- locked, so every process sharing the database sees one counter), single
-- messages add to it without waiting.

-- +goose Up
CREATE TABLE warmup_plans (
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    domain       TEXT NOT NULL,
    start_volume INTEGER NOT NULL,
    growth       REAL NOT NULL,
    until_volume INTEGER NOT NULL,
    first_day    INTEGER NOT NULL,
    created_at   DATETIME NOT NULL,
    PRIMARY KEY (user_id, domain)
);
CREATE TABLE warmup_counts (
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    domain  TEXT NOT NULL,
    day     INTEGER NOT NULL,
    count   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, domain, day)
);

-- +goose Down
DROP TABLE warmup_counts;
DROP TABLE warmup_plans;
