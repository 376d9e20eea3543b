-- +goose Up
-- An automation email's preheader: the hidden line mail apps show after
-- the subject ('' none: they show the start of the mail). Set in the
-- console (the API's automation email has no such field, api.md) and
-- copied onto the email's send, which puts it into each mail.
ALTER TABLE automation_schedules ADD COLUMN preheader TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE automation_schedules DROP COLUMN preheader;
