-- +goose Up
-- Only the addresses added to a segment by hand (contact_id NULL) carry an
-- email of their own, and every query that looks one up says contact_id
-- IS NULL: the index holds those rows only. Before, each of a segment's
-- contact rows (email '') was one more entry to write when the segment was
-- materialised or kept current (68,320 of them for the three-condition
-- segment of the audience benchmark, over 1,000,000 contacts).
DROP INDEX segment_emails_email;
CREATE INDEX segment_emails_email ON segment_emails (segment_id, email) WHERE contact_id IS NULL;

-- +goose Down
DROP INDEX segment_emails_email;
CREATE INDEX segment_emails_email ON segment_emails (segment_id, email);
