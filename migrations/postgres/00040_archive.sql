-- The public archive: a single send may be marked archive (shown, once
-- sent, on the account's public archive page and Atom feed), and each
-- account gets one random public id that names its archive (made the
-- first time it is asked for). single_sends_archive serves the archive's
-- one access path: an account's archived sends, newest sent first.

-- +goose Up
ALTER TABLE single_sends ADD COLUMN archive INTEGER NOT NULL DEFAULT 0;
CREATE INDEX single_sends_archive ON single_sends (user_id, sent_at, id) WHERE archive = 1;
CREATE TABLE archive_ids (
    user_id    BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    public_id  TEXT NOT NULL,
    created_at TIMESTAMPTZ(6) NOT NULL
);
CREATE UNIQUE INDEX archive_ids_public ON archive_ids (public_id);

-- +goose Down
DROP TABLE archive_ids;
DROP INDEX single_sends_archive;
ALTER TABLE single_sends DROP COLUMN archive;
