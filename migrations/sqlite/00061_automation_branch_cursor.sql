-- +goose Up
-- Where the early pass of an automation's branch goes on from: the last
-- enrolment id it looked at (0: from the first). Kept in the database, not
-- in each process, so that the processes sharing the database take turns
-- along the contacts waiting at the branch and a restart does not start
-- over from the first (a process restarted more often than one pass over
-- them took would never reach the last ones before the wait ran out).
ALTER TABLE automations ADD COLUMN branch_cursor BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE automations DROP COLUMN branch_cursor;
