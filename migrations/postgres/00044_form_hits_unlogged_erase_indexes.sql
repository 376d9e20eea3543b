-- Two access paths of the sign-up forms and the privacy erasure.
--
-- form_hits holds the public forms' post counters (per client address and
-- per form, per minute). On PostgreSQL each counted post was a commit that
-- waited for its WAL flush: two flushes of three per single-opt-in post,
-- and most of its time. The table becomes UNLOGGED: its writes skip the
-- WAL, so a commit touching only it waits for no flush. The trade: after a
-- crash of PostgreSQL (not of herald) the table comes back empty, so the
-- limits forget the posts of the current minute, and a standby has no copy
-- of it. The sign-up itself (contact, consent, confirmation row, events)
-- is written in its own transaction, logged and flushed as before.
--
-- events and untied_reports had no index by address: the erasure of an
-- address (UPDATE events … WHERE user_id = ? AND email = ?, UPDATE
-- untied_reports … WHERE email = ?) read every row of every account.

-- +goose Up
ALTER TABLE form_hits SET UNLOGGED;
CREATE INDEX events_user_email ON events (user_id, email);
CREATE INDEX untied_reports_email ON untied_reports (email);

-- +goose Down
DROP INDEX untied_reports_email;
DROP INDEX events_user_email;
ALTER TABLE form_hits SET LOGGED;
