-- +goose Up
-- Automations. enrol_cursor is the last id of the target (contact or
-- segment_emails row) already looked at: rows after it entered the target
-- after the automation went live and are enrolled.
CREATE TABLE automations (
    id                   INTEGER PRIMARY KEY,
    user_id              INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    automation_for       INTEGER NOT NULL DEFAULT 0,
    automation_for_table TEXT NOT NULL DEFAULT '',
    automation_name      TEXT NOT NULL,
    exit_criteria        INTEGER NOT NULL DEFAULT 0,
    unsubscribe_group_id TEXT NOT NULL DEFAULT '0',
    automation_type      INTEGER NOT NULL DEFAULT 1,
    utr                  TEXT NOT NULL,
    status               INTEGER NOT NULL DEFAULT 0,
    live_at              DATETIME,
    deleted_at           DATETIME,
    created_at           DATETIME NOT NULL,
    updated_at           DATETIME NOT NULL,
    enrol_cursor         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX automations_user ON automations (user_id, id);
CREATE UNIQUE INDEX automations_utr ON automations (utr);
CREATE INDEX automations_live ON automations (status) WHERE deleted_at IS NULL;

-- The emails of an automation, in position order. send_id is the
-- single_sends row that carries the step's messages in the send ledger
-- (one ledger row per step and address: a step never goes twice to one
-- address, whatever the number of processes).
CREATE TABLE automation_schedules (
    id             INTEGER PRIMARY KEY,
    user_id        INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    automation_id  INTEGER NOT NULL REFERENCES automations (id) ON DELETE CASCADE,
    sender_id      INTEGER NOT NULL DEFAULT 0,
    subject        TEXT NOT NULL DEFAULT '',
    waiting_period INTEGER NOT NULL DEFAULT 0,
    waiting_type   TEXT NOT NULL DEFAULT 'instantly',
    utr            TEXT NOT NULL,
    template_id    INTEGER NOT NULL DEFAULT 1,
    preview_img    TEXT NOT NULL DEFAULT '',
    template_json  TEXT,
    template_html  TEXT,
    position       INTEGER NOT NULL DEFAULT 0,
    send_id        INTEGER,
    created_at     DATETIME NOT NULL,
    updated_at     DATETIME NOT NULL
);
CREATE INDEX automation_schedules_automation ON automation_schedules (automation_id, position, id);
CREATE UNIQUE INDEX automation_schedules_utr ON automation_schedules (utr);

-- Contacts enrolled in an automation. step is the index of the next email
-- (in position order), due at due_at (unix ms). state: 0 active, 1 done
-- (after the last email), 2 exited (criteria, unsubscribe, bounce).
CREATE TABLE automation_contacts (
    id            INTEGER PRIMARY KEY,
    automation_id INTEGER NOT NULL REFERENCES automations (id) ON DELETE CASCADE,
    user_id       INTEGER NOT NULL,
    contact_id    INTEGER,
    email         TEXT NOT NULL,
    first_name    TEXT NOT NULL DEFAULT '',
    last_name     TEXT NOT NULL DEFAULT '',
    step          INTEGER NOT NULL DEFAULT 0,
    due_at        INTEGER NOT NULL,
    state         INTEGER NOT NULL DEFAULT 0,
    enrolled_at   DATETIME NOT NULL,
    updated_at    DATETIME NOT NULL
);
CREATE UNIQUE INDEX automation_contacts_email ON automation_contacts (automation_id, email);
CREATE INDEX automation_contacts_due ON automation_contacts (automation_id, state, due_at);

-- A single send row that carries an automation step has automation_id
-- set; lists of single sends leave them out.
ALTER TABLE single_sends ADD COLUMN automation_id INTEGER;
CREATE INDEX single_sends_automation ON single_sends (automation_id);

-- +goose Down
DROP INDEX single_sends_automation;
ALTER TABLE single_sends DROP COLUMN automation_id;
DROP TABLE automation_contacts;
DROP TABLE automation_schedules;
DROP TABLE automations;
