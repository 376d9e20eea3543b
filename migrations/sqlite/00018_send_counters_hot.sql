-- PostgreSQL sending: PostgreSQL leaves room on the pages of
-- single_sends for the row versions of its counters (see the PostgreSQL
-- migration). SQLite updates rows in place: nothing to do, the version
-- keeps the two sets in step.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
