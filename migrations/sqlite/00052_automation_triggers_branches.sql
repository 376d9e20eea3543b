-- +goose Up
-- How an automation starts. trigger_kind 'target': the contacts that enter
-- its contact type or segment after it goes live (as before); 'api': the
-- contacts an API call names (POST api/automations/trigger), each of which
-- must be a contact of the automation's contact type.
ALTER TABLE automations ADD COLUMN trigger_kind TEXT NOT NULL DEFAULT 'target';

-- A step is an email or a branch. A branch waits until the contact opens
-- or clicks (as a person) an email of the automation, or until its waiting
-- period passes, then sends the contact down path 'a' (did) or 'b' (did
-- not). path '' is the main line; an automation has at most one branch,
-- the last step of its main line, so path alone places a step (position
-- orders the steps within their path).
ALTER TABLE automation_schedules ADD COLUMN kind TEXT NOT NULL DEFAULT 'email';
ALTER TABLE automation_schedules ADD COLUMN path TEXT NOT NULL DEFAULT '';

-- An enrolment's path ('' main line, 'a', 'b'): step is the index of its
-- next step within that path. data: the JSON object of strings an API
-- trigger gave, filling ((data.<key>)) in this automation's emails.
ALTER TABLE automation_contacts ADD COLUMN path TEXT NOT NULL DEFAULT '';
ALTER TABLE automation_contacts ADD COLUMN data TEXT;

-- The contacts standing at one step (the console's list, the branch's
-- wait for an open or click), in id order for paging.
CREATE INDEX automation_contacts_step ON automation_contacts (automation_id, state, path, step, id);

-- +goose Down
DROP INDEX automation_contacts_step;
ALTER TABLE automation_contacts DROP COLUMN data;
ALTER TABLE automation_contacts DROP COLUMN path;
ALTER TABLE automation_schedules DROP COLUMN path;
ALTER TABLE automation_schedules DROP COLUMN kind;
ALTER TABLE automations DROP COLUMN trigger_kind;
