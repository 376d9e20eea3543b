-- Human opens and clicks: each open and click is
-- classified as a person's or a machine's (delivery.MachineRules,
-- docs/MACHINE_ACTIVITY.md). The spec's counters stay as they were (raw);
-- the human counters are kept beside them.

-- +goose Up
-- Per send (and so per automation step, whose messages are sends too):
-- the human counters, under the same once-a-minute rule as the raw ones.
ALTER TABLE single_sends ADD COLUMN human_unique_opens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN human_total_opens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN human_unique_clicks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN human_total_clicks INTEGER NOT NULL DEFAULT 0;

-- Per message (unix ms, 0 = never): the first human open and click, when
-- a human open and click last counted, and the last click of any kind
-- with its link (the every-link-at-once rule reads it).
-- human_click_event: the send_events row of the last human click, taken
-- back when a second link follows it within 2 s.
ALTER TABLE send_messages ADD COLUMN human_opened_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE send_messages ADD COLUMN human_clicked_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE send_messages ADD COLUMN human_open_counted_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE send_messages ADD COLUMN human_click_counted_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE send_messages ADD COLUMN last_click_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE send_messages ADD COLUMN last_click_link INTEGER NOT NULL DEFAULT -1;
ALTER TABLE send_messages ADD COLUMN human_click_event INTEGER;

-- Per open or click row of the statistics: raw = it counted in the raw
-- totals (every row written before this migration did), human = it
-- counted in the human totals.
ALTER TABLE send_events ADD COLUMN raw INTEGER NOT NULL DEFAULT 1;
ALTER TABLE send_events ADD COLUMN human INTEGER NOT NULL DEFAULT 0;

-- Open and click events of the events webhook carry "machine" (NULL for
-- the other kinds).
ALTER TABLE events ADD COLUMN machine INTEGER;

-- +goose Down
ALTER TABLE events DROP COLUMN machine;
ALTER TABLE send_events DROP COLUMN human;
ALTER TABLE send_events DROP COLUMN raw;
ALTER TABLE send_messages DROP COLUMN human_click_event;
ALTER TABLE send_messages DROP COLUMN last_click_link;
ALTER TABLE send_messages DROP COLUMN last_click_at;
ALTER TABLE send_messages DROP COLUMN human_click_counted_at;
ALTER TABLE send_messages DROP COLUMN human_open_counted_at;
ALTER TABLE send_messages DROP COLUMN human_clicked_at;
ALTER TABLE send_messages DROP COLUMN human_opened_at;
ALTER TABLE single_sends DROP COLUMN human_total_clicks;
ALTER TABLE single_sends DROP COLUMN human_unique_clicks;
ALTER TABLE single_sends DROP COLUMN human_total_opens;
ALTER TABLE single_sends DROP COLUMN human_unique_opens;
