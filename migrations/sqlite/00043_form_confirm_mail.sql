-- A form's own confirmation mail (decisions.md 10): confirm_subject and
-- confirm_body as the account wrote them ('' : herald's default wording,
-- in the person's language). The body is plain text holding the
-- ((confirm_url)) placeholder. A confirmation keeps the person's language
-- picked at the sign-up (language, '' for older rows), so that the link's
-- page answers in it.

-- +goose Up
ALTER TABLE forms ADD COLUMN confirm_subject TEXT NOT NULL DEFAULT '';
ALTER TABLE forms ADD COLUMN confirm_body TEXT NOT NULL DEFAULT '';
ALTER TABLE form_confirmations ADD COLUMN language TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE form_confirmations DROP COLUMN language;
ALTER TABLE forms DROP COLUMN confirm_body;
ALTER TABLE forms DROP COLUMN confirm_subject;
