-- Addresses erased at the person's request (decisions.md 10), kept only as
-- a keyed hash (hex HMAC-SHA256 of the lowercased address under the
-- server's erasure key): contacts/add refuses them and imports skip them,
-- until the person signs up again through a form. The rows of the
-- address's history (ledger, events, feedback, suppressions, …) carry
-- the same hash in place of the address.

-- +goose Up
CREATE TABLE erasures (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email_hash TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX erasures_email ON erasures (user_id, email_hash);

-- Contacts still unconfirmed are deleted 30 days after they came: the
-- purge finds them by this index alone.
CREATE INDEX contacts_unconfirmed ON contacts (created_at) WHERE status = 'unconfirmed';

-- +goose Down
DROP INDEX contacts_unconfirmed;
DROP TABLE erasures;
