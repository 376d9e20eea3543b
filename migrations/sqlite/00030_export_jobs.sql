-- Exports that run in the background: one row per
-- export an account started, the queue the runner claims from, and the
-- file kept in the database as parts of about 1 MB, so that any herald
-- process on a shared PostgreSQL can serve the download (a file on one
-- process's disk would not do).
--
-- kind is what is exported (contacts_type, contacts_segment,
-- send_recipients) and target_id its parameter (the contact type's, the
-- segment's or the send's id); member_id is who started it (0: the
-- owner). state: queued, running, done, failed. worker and lease_until
-- (Unix ms) hold a running export for the process writing it: once the
-- lease runs out another process takes it over and starts again. Times
-- are Unix ms; expires_at is when a finished export and its file go.

-- +goose Up
CREATE TABLE export_jobs (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    member_id   INTEGER NOT NULL DEFAULT 0,
    kind        TEXT NOT NULL,
    target_id   INTEGER NOT NULL,
    name        TEXT NOT NULL,
    file_name   TEXT NOT NULL,
    state       TEXT NOT NULL DEFAULT 'queued',
    rows_done   INTEGER NOT NULL DEFAULT 0,
    rows_total  INTEGER NOT NULL DEFAULT 0,
    bytes       INTEGER NOT NULL DEFAULT 0,
    parts       INTEGER NOT NULL DEFAULT 0,
    error       TEXT NOT NULL DEFAULT '',
    worker      TEXT NOT NULL DEFAULT '',
    lease_until BIGINT NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0,
    created_at  BIGINT NOT NULL,
    finished_at BIGINT NOT NULL DEFAULT 0,
    expires_at  BIGINT NOT NULL DEFAULT 0
);
-- The account's exports, newest first (the Exports page), and its count
-- of unfinished ones (the cap).
CREATE INDEX export_jobs_user ON export_jobs (user_id, id);
-- The runner's claim: unfinished exports whose lease ran out.
CREATE INDEX export_jobs_due ON export_jobs (lease_until) WHERE state IN ('queued', 'running');
-- The expiry of finished exports.
CREATE INDEX export_jobs_expires ON export_jobs (expires_at) WHERE state IN ('done', 'failed');

CREATE TABLE export_parts (
    export_id INTEGER NOT NULL REFERENCES export_jobs (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    data      BLOB NOT NULL,
    PRIMARY KEY (export_id, seq)
);

-- +goose Down
DROP TABLE export_parts;
DROP TABLE export_jobs;
