-- PostgreSQL sending: every group commit of a send adds to
-- its counters (single_sends.delivered, …), one new row version per
-- commit. When the version finds no room on its page the update is not
-- HOT: it adds an entry to each of the table's seven indexes, and every
-- later lookup by id walks those dead entries until a vacuum (measured:
-- 63 to 200 single_sends_pkey entries read per message of a 100,000-
-- message send with autovacuum off). Half of each page is left free for
-- the versions of its rows. SQLite updates in place: its migration is
-- empty, so that the two sets keep the same versions.

-- +goose Up
ALTER TABLE single_sends SET (fillfactor = 50);

-- +goose Down
ALTER TABLE single_sends RESET (fillfactor);
