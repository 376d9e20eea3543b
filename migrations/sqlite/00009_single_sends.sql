-- +goose Up
-- Single sends. The columns up to updated_at are the API's fields; the
-- rest is the engine's: armed (1 = may trigger; a duplicate is 0 until it
-- is updated), send_after (UTC trigger time of a scheduled send),
-- resolved (the audience is in the ledger), links (the tracked links of
-- the design, by index), completed_at.
CREATE TABLE single_sends (
    id                            INTEGER PRIMARY KEY,
    user_id                       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    template_id                   INTEGER NOT NULL,
    recipient_id                  TEXT NOT NULL DEFAULT '[]',
    exclude_specific_recipient_id TEXT NOT NULL DEFAULT '[]',
    sender_id                     INTEGER NOT NULL,
    unsubscribe_group_id          INTEGER NOT NULL,
    single_send_name              TEXT NOT NULL,
    from_sender                   TEXT NOT NULL DEFAULT '',
    reply_to                      TEXT NOT NULL DEFAULT '',
    sender_name                   TEXT,
    sender_address                TEXT,
    subject                       TEXT NOT NULL DEFAULT '',
    preheader                     TEXT NOT NULL DEFAULT '',
    schedule_type                 INTEGER NOT NULL DEFAULT 0,
    schedule_date                 TEXT NOT NULL DEFAULT '0000-00-00',
    schedule_time                 TEXT NOT NULL DEFAULT '00:00:00',
    status                        INTEGER NOT NULL DEFAULT 0,
    utr                           TEXT NOT NULL,
    template_json                 TEXT,
    template_html                 TEXT,
    triggered                     INTEGER NOT NULL DEFAULT 0,
    delivered                     INTEGER NOT NULL DEFAULT 0,
    unique_opens                  INTEGER NOT NULL DEFAULT 0,
    total_opens                   INTEGER NOT NULL DEFAULT 0,
    unique_clicks                 INTEGER NOT NULL DEFAULT 0,
    total_clicks                  INTEGER NOT NULL DEFAULT 0,
    bounces                       INTEGER NOT NULL DEFAULT 0,
    unsubscribes                  INTEGER NOT NULL DEFAULT 0,
    unique_open_token             TEXT NOT NULL DEFAULT '{}',
    sent_at                       DATETIME,
    created_at                    DATETIME NOT NULL,
    updated_at                    DATETIME NOT NULL,
    armed                         INTEGER NOT NULL DEFAULT 0,
    send_after                    DATETIME,
    resolved                      INTEGER NOT NULL DEFAULT 0,
    links                         TEXT NOT NULL DEFAULT '[]',
    completed_at                  DATETIME
);
CREATE INDEX single_sends_user ON single_sends (user_id, id);
CREATE UNIQUE INDEX single_sends_utr ON single_sends (utr);
CREATE INDEX single_sends_due ON single_sends (status, armed, send_after);

-- The send ledger: one row per (send, address). state: 0 queued, 1
-- claimed by a worker (worker, claimed_at), 2 delivered, 3 bounced
-- (permanent failure), 4 skipped. next_at (unix ms) delays a retry.
CREATE TABLE send_messages (
    id              INTEGER PRIMARY KEY,
    send_id         INTEGER NOT NULL REFERENCES single_sends (id) ON DELETE CASCADE,
    user_id         INTEGER NOT NULL,
    contact_id      INTEGER,
    email           TEXT NOT NULL,
    first_name      TEXT NOT NULL DEFAULT '',
    last_name       TEXT NOT NULL DEFAULT '',
    state           INTEGER NOT NULL DEFAULT 0,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_at         INTEGER NOT NULL DEFAULT 0,
    worker          TEXT,
    error           TEXT NOT NULL DEFAULT '',
    sent_at         DATETIME,
    opened_at       DATETIME,
    clicked_at      DATETIME,
    unsubscribed_at DATETIME
);
CREATE UNIQUE INDEX send_messages_email ON send_messages (send_id, email);
CREATE INDEX send_messages_claim ON send_messages (send_id, state, next_at, id);
CREATE INDEX send_messages_worker ON send_messages (worker) WHERE state = 1;

-- Opens and clicks over time (the statistics chart and per-link counts).
-- kind: 1 open, 2 click; link is the index in single_sends.links.
CREATE TABLE send_events (
    id      INTEGER PRIMARY KEY,
    send_id INTEGER NOT NULL REFERENCES single_sends (id) ON DELETE CASCADE,
    kind    INTEGER NOT NULL,
    link    INTEGER NOT NULL DEFAULT -1,
    at      DATETIME NOT NULL
);
CREATE INDEX send_events_send ON send_events (send_id, kind, at);

-- Addresses that bounced for good: left out of every later send of the
-- account until a person lifts them.
CREATE TABLE suppressions (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email      TEXT NOT NULL,
    reason     TEXT NOT NULL DEFAULT '',
    send_id    INTEGER,
    created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX suppressions_email ON suppressions (user_id, email);

-- Sending processes alive: a claim of a process whose heartbeat stopped
-- goes back to the queue.
CREATE TABLE send_workers (
    id           TEXT PRIMARY KEY,
    heartbeat_at INTEGER NOT NULL
);

CREATE INDEX segment_emails_email ON segment_emails (segment_id, email);

-- +goose Down
DROP INDEX segment_emails_email;
DROP TABLE send_workers;
DROP TABLE suppressions;
DROP TABLE send_events;
DROP TABLE send_messages;
DROP TABLE single_sends;
