-- +goose Up
-- The organisation profile of an account: the company name and postal
-- address, a brand colour and a logo, shown on the recipients' preference
-- page, the public archive and invitations, and filled into designs by
-- the ((org_name)), ((org_address)) and ((org_logo_url)) placeholders.
--
-- country_id is an ISO 3166-1 numeric code (the world package's ids), 0
-- for none. brand_color is '#rrggbb' in lower case, '' for none. logo
-- holds the image as herald re-encoded it (PNG or JPEG, never what was
-- uploaded), logo_type its content type, logo_hash the hex SHA-256 prefix
-- that names it in its public address (/brand/logo/<hash>.<ext>), '' for
-- none: org_profiles_logo finds it by that name.
CREATE TABLE org_profiles (
    user_id       BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    company_name  TEXT NOT NULL DEFAULT '',
    address_line1 TEXT NOT NULL DEFAULT '',
    address_line2 TEXT NOT NULL DEFAULT '',
    city          TEXT NOT NULL DEFAULT '',
    postal_code   TEXT NOT NULL DEFAULT '',
    country_id    BIGINT NOT NULL DEFAULT 0,
    brand_color   TEXT NOT NULL DEFAULT '',
    logo          BYTEA,
    logo_type     TEXT NOT NULL DEFAULT '',
    logo_hash     TEXT NOT NULL DEFAULT '',
    updated_at    TIMESTAMPTZ(6) NOT NULL
);
CREATE INDEX org_profiles_logo ON org_profiles (logo_hash) WHERE logo_hash <> '';

-- +goose Down
DROP TABLE org_profiles;
