-- +goose Up
CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    email         TEXT NOT NULL,
    password_hash TEXT NOT NULL DEFAULT '',
    public_key    TEXT NOT NULL,
    secret_hash   BLOB NOT NULL,
    time_zone     TEXT NOT NULL DEFAULT 'UTC',
    created_at    DATETIME NOT NULL,
    updated_at    DATETIME NOT NULL
);
CREATE UNIQUE INDEX users_email ON users (email);
CREATE UNIQUE INDEX users_public_key ON users (public_key);

CREATE TABLE unsubscribe_groups (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    rand_id     TEXT NOT NULL,
    group_name  TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    is_display  INTEGER NOT NULL DEFAULT 0,
    created_at  DATETIME NOT NULL,
    updated_at  DATETIME NOT NULL
);
CREATE INDEX unsubscribe_groups_user ON unsubscribe_groups (user_id, id);
CREATE UNIQUE INDEX unsubscribe_groups_rand ON unsubscribe_groups (rand_id);

-- One table for global unsubscribers (group NULL) and group recipients.
CREATE TABLE unsubscribers (
    id                    INTEGER PRIMARY KEY,
    user_id               INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    unsubscribe_groups_id INTEGER REFERENCES unsubscribe_groups (id) ON DELETE CASCADE,
    email_address         TEXT NOT NULL,
    created_at            DATETIME NOT NULL,
    updated_at            DATETIME NOT NULL
);
CREATE UNIQUE INDEX unsubscribers_global ON unsubscribers (user_id, email_address) WHERE unsubscribe_groups_id IS NULL;
CREATE UNIQUE INDEX unsubscribers_group ON unsubscribers (unsubscribe_groups_id, email_address) WHERE unsubscribe_groups_id IS NOT NULL;
CREATE INDEX unsubscribers_user_group ON unsubscribers (user_id, unsubscribe_groups_id, id);

CREATE TABLE notification_recipients (
    id            INTEGER PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email_address TEXT NOT NULL,
    email_owner   TEXT NOT NULL,
    created_at    DATETIME NOT NULL,
    updated_at    DATETIME NOT NULL
);
CREATE UNIQUE INDEX notification_recipients_email ON notification_recipients (user_id, email_address);

CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- +goose Down
DROP TABLE settings;
DROP TABLE notification_recipients;
DROP TABLE unsubscribers;
DROP TABLE unsubscribe_groups;
DROP TABLE users;
