-- +goose Up
-- Two-factor recovery codes: ten one-time codes made when a login turns
-- two-factor login on (and again on request, which deletes the old ones),
-- each accepted once in place of an authenticator's code. A login is the
-- account's owner (member_id 0) or one of its members.
--
-- code_hash is HMAC-SHA256 of the code under a key derived from
-- HERALD_SECRET_KEY (never in the database) with the login as context:
-- the code itself is never stored, and a dump alone cannot be searched
-- for codes. used_at (Unix ms) is set by the one login that uses it.
CREATE TABLE recovery_codes (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    member_id  INTEGER NOT NULL DEFAULT 0,
    code_hash  BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE UNIQUE INDEX recovery_codes_login ON recovery_codes (user_id, member_id, code_hash);

-- +goose Down
DROP TABLE recovery_codes;
