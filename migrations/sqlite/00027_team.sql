-- +goose Up
-- Teammates, roles and the audit log.
--
-- A member logs in with its own address and password and acts on the
-- account (users.id) it belongs to, with a role: admin, editor or viewer
-- (the account's own login is its owner). An address is the login of one
-- account or one member, never both (service/team.go).
CREATE TABLE members (
    id            INTEGER PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    email         TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    role          TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE UNIQUE INDEX members_email ON members (email);
CREATE INDEX members_user ON members (user_id, id);

-- Invitations waiting for the link mailed to their address (7 days);
-- only the SHA-256 of the link's token is kept. Times are Unix ms.
CREATE TABLE invitations (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email       TEXT NOT NULL,
    role        TEXT NOT NULL,
    token_hash  BLOB NOT NULL,
    invited_by  TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX invitations_token ON invitations (token_hash);
CREATE UNIQUE INDEX invitations_email ON invitations (user_id, email);

-- A session is the owner's (member_id 0) or a member's; removing a member
-- deletes its sessions in the same transaction.
ALTER TABLE sessions ADD COLUMN member_id INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_member ON sessions (member_id);

-- Who did what on an account, newest first by (user_id, created_at, id).
-- member_id 0 with actor "API key or command line" when no one was
-- logged in; created_at is Unix ms.
CREATE TABLE audit_log (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    member_id  INTEGER NOT NULL,
    actor      TEXT NOT NULL,
    action     TEXT NOT NULL,
    target     TEXT NOT NULL,
    detail     TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX audit_log_account ON audit_log (user_id, created_at, id);

-- +goose Down
DROP TABLE audit_log;
DROP INDEX sessions_member;
ALTER TABLE sessions DROP COLUMN member_id;
DROP TABLE invitations;
DROP TABLE members;
