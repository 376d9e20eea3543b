-- +goose Up
-- Console sessions (decisions.md 8: revocable). The cookie carries a
-- random token; only its SHA-256 is kept. A row is a live session: logout,
-- a password change and "log out everywhere" delete rows. Times are Unix
-- milliseconds. started_at + 7 days = expires_at (absolute lifetime);
-- last_used_at + 24 h is the idle limit.
CREATE TABLE sessions (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash   BLOB NOT NULL,
    started_at   INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE UNIQUE INDEX sessions_token ON sessions (token_hash);
CREATE INDEX sessions_user ON sessions (user_id, last_used_at);
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE INDEX sessions_last_used ON sessions (last_used_at);

-- Growing delays after failed logins, per address and per client IP,
-- shared by every process (service/throttle.go). key is "email:<address>",
-- "ip:<address or IPv6 /64>" or "signup:<address>" (sign-up mails).
CREATE TABLE auth_throttle (
    key           TEXT PRIMARY KEY,
    failures      INTEGER NOT NULL,
    last_at       INTEGER NOT NULL,
    blocked_until INTEGER NOT NULL
);
CREATE INDEX auth_throttle_last ON auth_throttle (last_at);

-- Sign-ups waiting for the link mailed to their address (24 hours).
CREATE TABLE pending_signups (
    id            INTEGER PRIMARY KEY,
    token_hash    BLOB NOT NULL,
    name          TEXT NOT NULL,
    email         TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
);
CREATE UNIQUE INDEX pending_signups_token ON pending_signups (token_hash);
CREATE INDEX pending_signups_email ON pending_signups (email);
CREATE INDEX pending_signups_expires ON pending_signups (expires_at);

-- +goose Down
DROP TABLE pending_signups;
DROP TABLE auth_throttle;
DROP TABLE sessions;
