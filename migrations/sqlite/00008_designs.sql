-- +goose Up
-- An account's own designs, made in the editor: the editor's project JSON
-- and the HTML it exports (the template_json / template_html pair).
CREATE TABLE designs (
    id            INTEGER PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    template_id   INTEGER NOT NULL DEFAULT 1,
    template_json TEXT NOT NULL DEFAULT '',
    template_html TEXT NOT NULL DEFAULT '',
    created_at    DATETIME NOT NULL,
    updated_at    DATETIME NOT NULL
);
CREATE INDEX designs_user ON designs (user_id, id);

-- +goose Down
DROP TABLE designs;
