-- +goose Up
CREATE TABLE senders (
    id               INTEGER PRIMARY KEY,
    user_id          INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    from_name        TEXT NOT NULL,
    from_email       TEXT NOT NULL,
    reply_to_email   TEXT NOT NULL,
    country_id       INTEGER NOT NULL DEFAULT 0,
    state_id         INTEGER NOT NULL DEFAULT 0,
    city_id          INTEGER NOT NULL DEFAULT 0,
    zip_code         TEXT NOT NULL DEFAULT '',
    company_address  TEXT NOT NULL DEFAULT '',
    company_address2 TEXT NOT NULL DEFAULT '',
    nickname         TEXT NOT NULL DEFAULT '',
    is_verified      INTEGER NOT NULL DEFAULT 0,
    utr              TEXT NOT NULL,
    verify_token     TEXT NOT NULL,
    send_at          DATETIME,
    deleted_at       DATETIME,
    created_at       DATETIME NOT NULL,
    updated_at       DATETIME NOT NULL
);
CREATE INDEX senders_user ON senders (user_id, id);
CREATE UNIQUE INDEX senders_utr ON senders (utr);
CREATE UNIQUE INDEX senders_verify_token ON senders (verify_token);

-- +goose Down
DROP TABLE senders;
