-- +goose Up
-- An automation that starts from a date field of its contacts (trigger_kind
-- 'date'): date_field names a datetime-local custom field of the account,
-- date_offset_days moves the day (-365..365: before, after, 0 on the day),
-- date_yearly 1 repeats it on each anniversary (0: once, on the date).
-- date_day is the account-local day (YYYYMMDD) the engine is enrolling
-- for and date_cursor the last contact id it read that day: both move by
-- conditional updates, so two processes never read a batch twice and a
-- restart goes on where the last one stopped.
ALTER TABLE automations ADD COLUMN date_field TEXT NOT NULL DEFAULT '';
ALTER TABLE automations ADD COLUMN date_offset_days INTEGER NOT NULL DEFAULT 0;
ALTER TABLE automations ADD COLUMN date_yearly INTEGER NOT NULL DEFAULT 0;
ALTER TABLE automations ADD COLUMN date_day INTEGER NOT NULL DEFAULT 0;
ALTER TABLE automations ADD COLUMN date_cursor BIGINT NOT NULL DEFAULT 0;

-- Which occurrence of a date automation an enrolment is for (the year of a
-- yearly one, the date YYYYMMDD of a one-off; 0 other triggers): a
-- finished enrolment of an earlier occurrence is started again.
ALTER TABLE automation_contacts ADD COLUMN occurrence INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE automation_contacts DROP COLUMN occurrence;
ALTER TABLE automations DROP COLUMN date_cursor;
ALTER TABLE automations DROP COLUMN date_day;
ALTER TABLE automations DROP COLUMN date_yearly;
ALTER TABLE automations DROP COLUMN date_offset_days;
ALTER TABLE automations DROP COLUMN date_field;
