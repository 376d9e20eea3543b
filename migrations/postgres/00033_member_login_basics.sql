-- +goose Up
-- A member's password reset by mail and two-factor login: the same as the
-- owner's, for each login of an account.
--
-- A reset link names the login it resets: the account's owner
-- (member_id 0) or one of its members. Links are found by their token
-- and deleted per login (user_id, member_id).
ALTER TABLE password_resets ADD COLUMN member_id BIGINT NOT NULL DEFAULT 0;
DROP INDEX password_resets_user;
CREATE INDEX password_resets_login ON password_resets (user_id, member_id);

-- A member's TOTP key, as users' (00025): sealed with a key derived from
-- HERALD_SECRET_KEY, the associated data naming the account and the
-- member, so a sealed key moved to another login does not open.
ALTER TABLE members ADD COLUMN totp_secret BYTEA;
ALTER TABLE members ADD COLUMN totp_pending BYTEA;
ALTER TABLE members ADD COLUMN totp_last_step BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE members DROP COLUMN totp_last_step;
ALTER TABLE members DROP COLUMN totp_pending;
ALTER TABLE members DROP COLUMN totp_secret;
DELETE FROM password_resets WHERE member_id <> 0;
DROP INDEX password_resets_login;
ALTER TABLE password_resets DROP COLUMN member_id;
CREATE INDEX password_resets_user ON password_resets (user_id);
