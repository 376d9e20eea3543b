-- The dashboard's human opens and clicks (the machine rules of
-- docs/MACHINE_ACTIVITY.md): per account and UTC day,
-- the messages first opened (human_opens) and first clicked (human_clicks)
-- by a person, unique per message as opens and clicks are. Kept current
-- in Tracking.count (service/tracking.go), where a message's first human
-- open or click is counted, and taken back with a click rule 12 takes
-- back.

-- +goose Up
ALTER TABLE account_daily ADD COLUMN human_opens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE account_daily ADD COLUMN human_clicks INTEGER NOT NULL DEFAULT 0;

-- What was counted before this version, from the ledger: human_opened_at
-- and human_clicked_at are Unix ms (0: never), so the day is a division.
-- A day may have a first human open and no other figure (a proxy opened
-- the mail the day before): the upsert makes its row. ("WHERE true": the
-- upsert form of INSERT … SELECT needs a WHERE in SQLite's grammar.)
INSERT INTO account_daily (user_id, day, human_opens, human_clicks)
SELECT user_id, day, SUM(o), SUM(c)
FROM (
    SELECT user_id, human_opened_at / 86400000 AS day, 1 AS o, 0 AS c FROM send_messages WHERE human_opened_at > 0
    UNION ALL SELECT user_id, human_clicked_at / 86400000, 0, 1 FROM send_messages WHERE human_clicked_at > 0
) figures
WHERE true
GROUP BY user_id, day
ON CONFLICT (user_id, day) DO UPDATE SET human_opens = excluded.human_opens, human_clicks = excluded.human_clicks;

-- +goose Down
ALTER TABLE account_daily DROP COLUMN human_clicks;
ALTER TABLE account_daily DROP COLUMN human_opens;
