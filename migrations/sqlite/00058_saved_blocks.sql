-- +goose Up
-- Saved blocks: a piece of a design (a section, a button, a footer) that
-- the account's team saved from the editor under a name, to insert into
-- other designs. html is the block's markup as the editor exports it, css
-- the editor's style rules that apply to it ('' for none). name_key is the
-- name in lower case (folded by the service): names are unique per account
-- whatever their case (saved_blocks_name, which also lists them by name;
-- one block is read by its id and account).
CREATE TABLE saved_blocks (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    name_key   TEXT NOT NULL,
    html       TEXT NOT NULL,
    css        TEXT NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX saved_blocks_name ON saved_blocks (user_id, name_key);

-- +goose Down
DROP TABLE saved_blocks;
