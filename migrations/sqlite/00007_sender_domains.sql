-- +goose Up
-- The DKIM key of each sending domain of an account, made by herald the
-- first time it is needed (PEM, PKCS#8).
CREATE TABLE sender_domains (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    domain      TEXT NOT NULL,
    selector    TEXT NOT NULL,
    algorithm   TEXT NOT NULL,
    private_key TEXT NOT NULL,
    created_at  DATETIME NOT NULL
);
CREATE UNIQUE INDEX sender_domains_domain ON sender_domains (user_id, domain);

-- +goose Down
DROP TABLE sender_domains;
