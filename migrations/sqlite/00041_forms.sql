-- Sign-up forms (decisions.md 10): a form adds the people who fill it to
-- one contact type, shows the custom fields named in fields (a JSON array
-- of names) and lets the person choose among the unsubscribe groups of
-- group_ids (a JSON array of ids). public_id names it in its public
-- address (/f/<public_id>); double_opt_in 1 sends a confirmation mail
-- first.

-- +goose Up
CREATE TABLE forms (
    id              INTEGER PRIMARY KEY,
    user_id         INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    public_id       TEXT NOT NULL,
    name            TEXT NOT NULL,
    contact_type_id INTEGER NOT NULL REFERENCES contact_types (id) ON DELETE CASCADE,
    double_opt_in   INTEGER NOT NULL DEFAULT 1,
    fields          TEXT NOT NULL DEFAULT '[]',
    group_ids       TEXT NOT NULL DEFAULT '[]',
    redirect_url    TEXT NOT NULL DEFAULT '',
    language        TEXT NOT NULL DEFAULT '',
    created_at      DATETIME NOT NULL,
    updated_at      DATETIME NOT NULL
);
CREATE UNIQUE INDEX forms_public ON forms (public_id);
CREATE INDEX forms_user ON forms (user_id, id);
CREATE INDEX forms_type ON forms (contact_type_id);

-- One confirmation mail of a double-opt-in sign-up: the token of its link
-- is kept as its hex SHA-256 only; groups are the ids the person chose
-- (joined on confirmation). sent_at is when the mail went out (NULL: not
-- sent, so the next sign-up of the address may send one).
CREATE TABLE form_confirmations (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    form_id      INTEGER NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    contact_id   INTEGER NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    email        TEXT NOT NULL,
    token_hash   TEXT NOT NULL,
    groups       TEXT NOT NULL DEFAULT '[]',
    sent_at      DATETIME,
    expires_at   DATETIME NOT NULL,
    confirmed_at DATETIME,
    created_at   DATETIME NOT NULL
);
CREATE UNIQUE INDEX form_confirmations_token ON form_confirmations (token_hash);
-- At most one mail per address per 10 minutes: the last sent_at of the
-- account's address.
CREATE INDEX form_confirmations_email ON form_confirmations (user_id, email, sent_at);
CREATE INDEX form_confirmations_contact ON form_confirmations (contact_id);
CREATE INDEX form_confirmations_form ON form_confirmations (form_id);

-- Posts to public forms counted per fixed window, by key ("ip:<address>",
-- "form:<id>"), so every process sharing the database applies the same
-- limits. Windows older than an hour are swept.
CREATE TABLE form_hits (
    key       TEXT NOT NULL,
    win       INTEGER NOT NULL,
    hits      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (key, win)
);
CREATE INDEX form_hits_win ON form_hits (win);

-- +goose Down
DROP TABLE form_hits;
DROP TABLE form_confirmations;
DROP TABLE forms;
