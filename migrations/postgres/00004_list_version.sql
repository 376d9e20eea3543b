-- +goose Up
-- Bumped by every change to an account's suppression lists (unsubscribers,
-- groups, notification recipients): the API answers a list from its cache
-- while the version it was built at is still current.
ALTER TABLE users ADD COLUMN list_version BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE users DROP COLUMN list_version;
