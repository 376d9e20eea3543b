-- +goose Up
CREATE TABLE contact_types (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    deleted_at DATETIME,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE INDEX contact_types_user ON contact_types (user_id, id);

-- Reserved fields have user_id NULL; custom fields belong to an account.
CREATE TABLE fields (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER REFERENCES users (id) ON DELETE CASCADE,
    field_name  TEXT NOT NULL,
    field_type  TEXT NOT NULL,
    is_reserved INTEGER NOT NULL DEFAULT 0,
    created_at  DATETIME,
    updated_at  DATETIME
);
CREATE UNIQUE INDEX fields_custom_name ON fields (user_id, field_name) WHERE user_id IS NOT NULL;
INSERT INTO fields (field_name, field_type, is_reserved) VALUES
    ('first_name', 'text', 1), ('last_name', 'text', 1), ('email', 'text', 1), ('alt_email', 'text', 1),
    ('country', 'text', 1), ('state', 'text', 1), ('city', 'text', 1), ('address_line1', 'text', 1),
    ('address_line2', 'text', 1), ('state_province_region', 'text', 1), ('postal_code', 'text', 1);

-- custom_fields holds the contact's custom values as a JSON object
-- {field_name: value}. country holds a country id (as text) when known.
CREATE TABLE contacts (
    id                    INTEGER PRIMARY KEY,
    user_id               INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    contact_type_id       INTEGER NOT NULL REFERENCES contact_types (id) ON DELETE CASCADE,
    first_name            TEXT NOT NULL DEFAULT '',
    last_name             TEXT NOT NULL DEFAULT '',
    email                 TEXT NOT NULL,
    alt_email             TEXT,
    country               TEXT NOT NULL DEFAULT '',
    state                 TEXT NOT NULL DEFAULT '',
    city                  TEXT NOT NULL DEFAULT '',
    address_line1         TEXT NOT NULL DEFAULT '',
    address_line2         TEXT NOT NULL DEFAULT '',
    state_province_region TEXT NOT NULL DEFAULT '',
    postal_code           TEXT NOT NULL DEFAULT '',
    custom_fields         TEXT NOT NULL DEFAULT '{}',
    deleted_at            DATETIME,
    created_at            DATETIME NOT NULL,
    updated_at            DATETIME NOT NULL
);
CREATE UNIQUE INDEX contacts_type_email ON contacts (contact_type_id, email) WHERE deleted_at IS NULL;
CREATE INDEX contacts_user ON contacts (user_id, id);
CREATE INDEX contacts_user_type ON contacts (user_id, contact_type_id, id);

CREATE TABLE segments (
    id              INTEGER PRIMARY KEY,
    user_id         INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    contact_type_id INTEGER NOT NULL REFERENCES contact_types (id) ON DELETE CASCADE,
    segment_name    TEXT NOT NULL,
    select_field    TEXT NOT NULL DEFAULT '[]',
    select_operator TEXT NOT NULL DEFAULT '[]',
    value           TEXT NOT NULL DEFAULT '[]',
    query_type      TEXT,
    deleted_at      DATETIME,
    created_at      DATETIME NOT NULL,
    updated_at      DATETIME NOT NULL
);
CREATE INDEX segments_user ON segments (user_id, id);
CREATE INDEX segments_type ON segments (contact_type_id);

-- A segment's recipients: contacts that match (contact_id set, kept
-- current as contacts change) and addresses added by hand (contact_id NULL).
CREATE TABLE segment_emails (
    id            INTEGER PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    segment_id    INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    contact_id    INTEGER REFERENCES contacts (id) ON DELETE CASCADE,
    first_name    TEXT NOT NULL DEFAULT '',
    last_name     TEXT NOT NULL DEFAULT '',
    email         TEXT NOT NULL DEFAULT '',
    created_at    DATETIME NOT NULL,
    updated_at    DATETIME NOT NULL
);
CREATE UNIQUE INDEX segment_emails_contact ON segment_emails (segment_id, contact_id) WHERE contact_id IS NOT NULL;
CREATE INDEX segment_emails_segment ON segment_emails (segment_id, id);
CREATE INDEX segment_emails_contact_id ON segment_emails (contact_id);

-- +goose Down
DROP TABLE segment_emails;
DROP TABLE segments;
DROP TABLE contacts;
DROP TABLE fields;
DROP TABLE contact_types;
