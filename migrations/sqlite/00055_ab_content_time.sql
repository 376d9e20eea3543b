-- A/B tests of content and of send time.
--
-- ab_designs: each variant of a single send's A/B test may carry its own
-- design (by variant, the HTML copied when the send is saved as
-- template_html is; '' takes the send's own design). A send whose
-- variants all have '' (every test before this migration) is a subject
-- test as before.
--
-- ab_time_after: a send-time test (minutes, 0 for none): the whole
-- audience is split evenly in two halves, variant 1 goes when the send
-- starts and variant 2 ab_time_after minutes later (its rows' next_at);
-- ab_wait minutes after the second half, the half with more unique opens
-- or clicks by people is marked the better (ab_winner). Nothing is held
-- back and nothing is sent again.

-- +goose Up
ALTER TABLE single_sends ADD COLUMN ab_designs TEXT NOT NULL DEFAULT '[]';
ALTER TABLE single_sends ADD COLUMN ab_time_after INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE single_sends DROP COLUMN ab_time_after;
ALTER TABLE single_sends DROP COLUMN ab_designs;
