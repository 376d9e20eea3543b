-- A/B tests of content: each variant of a single send's A/B test may
-- carry its own design (ab_designs, by variant, the HTML copied when the
-- send is saved as template_html is; '' takes the send's own design).
-- A send whose variants all have '' (every test before this migration)
-- is a subject test as before.

-- +goose Up
ALTER TABLE single_sends ADD COLUMN ab_designs TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE single_sends DROP COLUMN ab_designs;
