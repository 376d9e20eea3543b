-- +goose Up
-- A contact's engagement: when a person (not a machine, by the tracking's
-- rules) last opened or clicked a mail to its address, as Unix ms (0
-- never). The tracking moves it forward in the transaction that counts a
-- person's open or click; the levels (engaged, lapsing, not engaged, new)
-- are read from it against the current time, so no query scans the
-- events. Indexed per account for the segments and the list.
ALTER TABLE contacts ADD COLUMN last_engaged_at BIGINT NOT NULL DEFAULT 0;

-- Backfill from the ledger: each address's latest counted human open or
-- click (human_*_counted_at, kept per message).
UPDATE contacts SET last_engaged_at = e.at
FROM (SELECT user_id, email, MAX(GREATEST(human_open_counted_at, human_click_counted_at)) AS at
      FROM send_messages WHERE human_open_counted_at > 0 OR human_click_counted_at > 0
      GROUP BY user_id, email) AS e
WHERE contacts.user_id = e.user_id AND contacts.email = e.email;

CREATE INDEX contacts_user_engaged ON contacts (user_id, last_engaged_at);

-- +goose Down
DROP INDEX contacts_user_engaged;
ALTER TABLE contacts DROP COLUMN last_engaged_at;
