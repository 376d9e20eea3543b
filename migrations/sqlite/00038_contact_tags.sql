-- Tags on contacts: one row per tag a contact carries. Tags are stored
-- normalised (trimmed, lower-cased), so a tag is one row whatever case it
-- was given in. The primary key reads the tags of a page of contacts and
-- serves the foreign key's cascade; contact_tags_tag finds the contacts of
-- an account that carry a tag (segment conditions, the console's list of
-- the account's tags).

-- +goose Up
CREATE TABLE contact_tags (
    contact_id INTEGER NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    tag        TEXT NOT NULL,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (contact_id, tag)
);
CREATE INDEX contact_tags_tag ON contact_tags (user_id, tag, contact_id);

-- +goose Down
DROP TABLE contact_tags;
