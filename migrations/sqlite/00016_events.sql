-- Events webhook (decisions.md 7): an account's endpoints, the
-- queue of events each endpoint is owed, and every POST made to one.

-- +goose Up
-- events: the kinds the endpoint wants, a comma list of the nine names.
-- failing_since: since when every POST failed (NULL while it answers
-- 2xx); failure_alerted_at: when the "failing for an hour" mail went out
-- (once per failing period). retry_at (unix ms): after a failed POST,
-- none of the endpoint's events go before it (the backoff holds for the
-- endpoint, not only for the failed batch). cursor_id: every event of the
-- endpoint up to it is settled or claimed; claims and the due check start
-- after it, so they do not walk the index entries of settled rows that
-- VACUUM has not removed yet (measured: 30 million entries read for a
-- 100,000-message send on PostgreSQL without it).
CREATE TABLE event_webhooks (
    id                 INTEGER PRIMARY KEY,
    user_id            INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    url                TEXT NOT NULL,
    events             TEXT NOT NULL,
    enabled            INTEGER NOT NULL DEFAULT 1,
    secret             TEXT NOT NULL,
    failing_since      DATETIME,
    retry_at           INTEGER NOT NULL DEFAULT 0,
    cursor_id          INTEGER NOT NULL DEFAULT 0,
    failure_alerted_at DATETIME,
    created_at         DATETIME NOT NULL,
    updated_at         DATETIME NOT NULL
);
CREATE INDEX event_webhooks_user ON event_webhooks (user_id, id);

-- One row per (event, endpoint), written in the transaction of the change
-- it reports. state: 0 pending, 1 delivered, 2 failed (given up after 24
-- hours). next_at (unix ms): when it is due; a claim moves it one lease
-- ahead, so rows held by a process that died come due again (at least
-- once). worker: the process holding the claim.
CREATE TABLE events (
    id              INTEGER PRIMARY KEY,
    webhook_id      INTEGER NOT NULL REFERENCES event_webhooks (id) ON DELETE CASCADE,
    user_id         INTEGER NOT NULL,
    kind            TEXT NOT NULL,
    send_id         INTEGER,
    send_message_id INTEGER,
    email           TEXT NOT NULL DEFAULT '',
    url             TEXT NOT NULL DEFAULT '',
    reason          TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL DEFAULT '',
    group_id        INTEGER,
    state           INTEGER NOT NULL DEFAULT 0,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_at         INTEGER NOT NULL DEFAULT 0,
    worker          TEXT,
    created_at      DATETIME NOT NULL,
    delivered_at    DATETIME
);
CREATE INDEX events_due ON events (webhook_id, id) WHERE state = 0;
CREATE INDEX events_webhook ON events (webhook_id, id);

-- One POST to an endpoint: which events it carried (first..last of the
-- endpoint's rows, count), how it went and how long it took.
CREATE TABLE event_deliveries (
    id             INTEGER PRIMARY KEY,
    webhook_id     INTEGER NOT NULL REFERENCES event_webhooks (id) ON DELETE CASCADE,
    user_id        INTEGER NOT NULL,
    first_event_id INTEGER,
    last_event_id  INTEGER,
    events         INTEGER NOT NULL DEFAULT 0,
    status_code    INTEGER NOT NULL DEFAULT 0,
    error          TEXT NOT NULL DEFAULT '',
    latency_ms     INTEGER NOT NULL DEFAULT 0,
    created_at     DATETIME NOT NULL
);
CREATE INDEX event_deliveries_webhook ON event_deliveries (webhook_id, id);

-- +goose Down
DROP TABLE event_deliveries;
DROP TABLE events;
DROP TABLE event_webhooks;
