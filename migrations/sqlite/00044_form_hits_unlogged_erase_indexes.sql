-- Two access paths of the sign-up forms and the privacy erasure.
--
-- On PostgreSQL form_hits (the forms' post counters) becomes UNLOGGED here;
-- SQLite has no such tables, and its commits in WAL mode with
-- synchronous=NORMAL wait for no flush already: nothing to do.
--
-- events and untied_reports had no index by address: the erasure of an
-- address (UPDATE events … WHERE user_id = ? AND email = ?, UPDATE
-- untied_reports … WHERE email = ?) read every row of every account.

-- +goose Up
CREATE INDEX events_user_email ON events (user_id, email);
CREATE INDEX untied_reports_email ON untied_reports (email);

-- +goose Down
DROP INDEX untied_reports_email;
DROP INDEX events_user_email;
