-- The one verdict rule keeps, with every verdict, its reason in Sisimai's
-- vocabulary (userunknown, blocked, mailboxfull, …) beside the status code
-- and the diagnostic: on the suppression it made and on the feedback row
-- the console's bounces and complaints page lists. Rows made before keep
-- '' (the repair that follows reads them again).

-- +goose Up
ALTER TABLE suppressions ADD COLUMN reason_code TEXT NOT NULL DEFAULT '';
ALTER TABLE feedback ADD COLUMN reason_code TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE feedback DROP COLUMN reason_code;
ALTER TABLE suppressions DROP COLUMN reason_code;
