-- +goose Up
-- One row per CSV import: its progress while it runs and its report after.
CREATE TABLE imports (
    id              INTEGER PRIMARY KEY,
    user_id         INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    contact_type_id INTEGER NOT NULL REFERENCES contact_types (id) ON DELETE CASCADE,
    file_name       TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL DEFAULT 'running',
    bytes_total     INTEGER NOT NULL DEFAULT 0,
    bytes_read      INTEGER NOT NULL DEFAULT 0,
    rows_read       INTEGER NOT NULL DEFAULT 0,
    created         INTEGER NOT NULL DEFAULT 0,
    updated         INTEGER NOT NULL DEFAULT 0,
    skipped         INTEGER NOT NULL DEFAULT 0,
    problems        TEXT NOT NULL DEFAULT '[]',
    message         TEXT NOT NULL DEFAULT '',
    created_at      DATETIME NOT NULL,
    updated_at      DATETIME NOT NULL,
    finished_at     DATETIME
);
CREATE INDEX imports_user ON imports (user_id, id);

-- +goose Down
DROP TABLE imports;
