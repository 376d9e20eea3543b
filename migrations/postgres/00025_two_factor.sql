-- +goose Up
-- TOTP two-factor login (RFC 6238). totp_secret is the authenticator's
-- key once a code has confirmed it, totp_pending the key being set up;
-- both are sealed (AES-256-GCM) with a key derived from HERALD_SECRET_KEY,
-- which is never in the database, so a dump alone gives neither.
-- totp_last_step is the time step of the last code accepted: a code is
-- accepted once, and never one of an earlier step.
ALTER TABLE users ADD COLUMN totp_secret BYTEA;
ALTER TABLE users ADD COLUMN totp_pending BYTEA;
ALTER TABLE users ADD COLUMN totp_last_step BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE users DROP COLUMN totp_last_step;
ALTER TABLE users DROP COLUMN totp_pending;
ALTER TABLE users DROP COLUMN totp_secret;
