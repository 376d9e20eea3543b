-- +goose Up
-- Named API keys: beside the account's own PublicKey/
-- SecretKey pair (users.public_key, which keeps every right), keys with a
-- name and a scope: 'full', 'read' (reads only) or the areas they may use,
-- separated by commas ('contacts,segments'). As for the account's pair,
-- only the SHA-256 of the secret is kept; the public key starts with
-- 'pkn_', so the API knows which table to read. Revoking deletes the row:
-- every process reads the row on every request, so it takes effect at
-- once. last_used_on is the UTC day (YYYY-MM-DD) of the last request, ''
-- before the first.
CREATE TABLE api_keys (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    public_key   TEXT NOT NULL,
    secret_hash  BLOB NOT NULL,
    scope        TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_on TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX api_keys_public_key ON api_keys (public_key);
CREATE UNIQUE INDEX api_keys_user_name ON api_keys (user_id, name);

-- +goose Down
DROP TABLE api_keys;
