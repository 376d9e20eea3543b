-- Each tracked link counts its own clicks: a click row says whether it
-- counts for its link (link_raw, and link_human when a person's), apart from
-- the message's once-a-minute counters (raw, human). A scanner that follows
-- every link of a mail within a second counts once for the message and once
-- for each link. Rows from before count for their link as they did for the
-- message.

-- +goose Up
ALTER TABLE send_events ADD COLUMN link_raw INTEGER NOT NULL DEFAULT 0;
ALTER TABLE send_events ADD COLUMN link_human INTEGER NOT NULL DEFAULT 0;
UPDATE send_events SET link_raw = raw, link_human = human WHERE kind = 2;

-- +goose Down
ALTER TABLE send_events DROP COLUMN link_human;
ALTER TABLE send_events DROP COLUMN link_raw;
