-- A contact's standing and how it came: status is confirmed (the default:
-- API callers and imports vouch for their contacts) or unconfirmed (signed
-- up through a double-opt-in form and not yet confirmed); consent is a JSON
-- document of its source (form, api, import, console), when, from where and,
-- for a form, the text shown and the time of confirmation; language is the
-- IETF tag the public pages and the confirmation mail speak to it ('' none).

-- +goose Up
ALTER TABLE contacts ADD COLUMN status TEXT NOT NULL DEFAULT 'confirmed';
ALTER TABLE contacts ADD COLUMN consent TEXT NOT NULL DEFAULT '{}';
ALTER TABLE contacts ADD COLUMN language TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE contacts DROP COLUMN language;
ALTER TABLE contacts DROP COLUMN consent;
ALTER TABLE contacts DROP COLUMN status;
