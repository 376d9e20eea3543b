-- +goose Up
-- What the DNS checks last found for each sending domain of an account
-- (read by the pre-send checklist): the checks one by one as JSON, when, and the daily queue:
-- due_at (Unix ms) is when the domain is checked again, lease_until
-- (Unix ms) holds it for the process checking it now.
CREATE TABLE domain_checks (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    domain      TEXT NOT NULL,
    checked_at  DATETIME,
    results     TEXT NOT NULL DEFAULT '[]',
    sending_ips TEXT NOT NULL DEFAULT '',
    due_at      BIGINT NOT NULL DEFAULT 0,
    lease_until BIGINT NOT NULL DEFAULT 0,
    created_at  DATETIME NOT NULL
);
CREATE UNIQUE INDEX domain_checks_domain ON domain_checks (user_id, domain);
CREATE INDEX domain_checks_due ON domain_checks (due_at);

-- One selector per key and rotation through a second one: a domain may
-- hold several keys, numbered by generation; the newest whose record was
-- seen published (published_at) or that may sign anyway signs. Every key
-- made before this migration keeps signing (sign_anyway = 1).
ALTER TABLE sender_domains ADD COLUMN generation INTEGER NOT NULL DEFAULT 1;
ALTER TABLE sender_domains ADD COLUMN published_at DATETIME;
ALTER TABLE sender_domains ADD COLUMN sign_anyway INTEGER NOT NULL DEFAULT 0;
UPDATE sender_domains SET sign_anyway = 1;
DROP INDEX sender_domains_domain;
CREATE UNIQUE INDEX sender_domains_domain ON sender_domains (user_id, domain, generation);

-- +goose Down
DELETE FROM sender_domains WHERE generation > 1;
DROP INDEX sender_domains_domain;
CREATE UNIQUE INDEX sender_domains_domain ON sender_domains (user_id, domain);
ALTER TABLE sender_domains DROP COLUMN sign_anyway;
ALTER TABLE sender_domains DROP COLUMN published_at;
ALTER TABLE sender_domains DROP COLUMN generation;
DROP TABLE domain_checks;
