-- +goose Up
-- Password reset links mailed from the login page ("Forgot your
-- password?"). The mail carries a random token; only its SHA-256 is kept.
-- A link works once (its row is deleted when used, with every other link
-- of the account) and until expires_at (an hour; Unix milliseconds).
CREATE TABLE password_resets (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX password_resets_token ON password_resets (token_hash);
CREATE INDEX password_resets_user ON password_resets (user_id);
CREATE INDEX password_resets_expires ON password_resets (expires_at);

-- +goose Down
DROP TABLE password_resets;
