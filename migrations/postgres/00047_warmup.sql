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
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    domain       TEXT NOT NULL,
    start_volume BIGINT NOT NULL,
    growth       DOUBLE PRECISION NOT NULL,
    until_volume BIGINT NOT NULL,
    first_day    BIGINT NOT NULL,
    created_at   TIMESTAMPTZ(6) NOT NULL,
    PRIMARY KEY (user_id, domain)
);
CREATE TABLE warmup_counts (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    domain  TEXT NOT NULL,
    day     BIGINT NOT NULL,
    count   BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, domain, day)
);

-- +goose Down
DROP TABLE warmup_counts;
DROP TABLE warmup_plans;
