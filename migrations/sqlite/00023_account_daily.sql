-- The dashboard: each account's figures per UTC day, kept
-- current in the transactions that change them (service/daily.go), so the
-- dashboard reads about thirty rows instead of scanning contacts or the
-- ledger. day: days since 1970-01-01 (UTC). sent: messages the relay
-- answered for good (delivered, bounced or blocked during the send);
-- bounces: hard bounces (during the send or reported later; the feedback
-- rows of source 'smtp', written since 00035, repeat the ledger's); opens and
-- clicks: unique per message; unsubscribes: through a message (link,
-- one-click, mailto, complaint); contacts_added / contacts_removed: the
-- audience's growth (their sum over every day is the live audience).

-- +goose Up
CREATE TABLE account_daily (
    user_id          INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day              INTEGER NOT NULL,
    sent             INTEGER NOT NULL DEFAULT 0,
    delivered        INTEGER NOT NULL DEFAULT 0,
    bounces          INTEGER NOT NULL DEFAULT 0,
    opens            INTEGER NOT NULL DEFAULT 0,
    clicks           INTEGER NOT NULL DEFAULT 0,
    unsubscribes     INTEGER NOT NULL DEFAULT 0,
    complaints       INTEGER NOT NULL DEFAULT 0,
    contacts_added   INTEGER NOT NULL DEFAULT 0,
    contacts_removed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, day)
);

-- The figures of what happened before this version, read once from the
-- ledger and the contacts (times are stored as UTC text; the first 19
-- characters are the second).
INSERT INTO account_daily (user_id, day, sent, delivered, bounces, opens, clicks, unsubscribes, complaints, contacts_added, contacts_removed)
SELECT user_id, day, SUM(sent), SUM(delivered), SUM(bounces), SUM(opens), SUM(clicks), SUM(unsubscribes), SUM(complaints), SUM(added), SUM(removed)
FROM (
    SELECT user_id, CAST(julianday(substr(sent_at, 1, 19)) - 2440587.5 AS INTEGER) AS day,
        1 AS sent, 1 AS delivered, 0 AS bounces, 0 AS opens, 0 AS clicks, 0 AS unsubscribes, 0 AS complaints, 0 AS added, 0 AS removed
        FROM send_messages WHERE state = 2 AND sent_at IS NOT NULL
    UNION ALL SELECT user_id, CAST(julianday(substr(opened_at, 1, 19)) - 2440587.5 AS INTEGER), 0, 0, 0, 1, 0, 0, 0, 0, 0 FROM send_messages WHERE opened_at IS NOT NULL
    UNION ALL SELECT user_id, CAST(julianday(substr(clicked_at, 1, 19)) - 2440587.5 AS INTEGER), 0, 0, 0, 0, 1, 0, 0, 0, 0 FROM send_messages WHERE clicked_at IS NOT NULL
    UNION ALL SELECT user_id, CAST(julianday(substr(unsubscribed_at, 1, 19)) - 2440587.5 AS INTEGER), 0, 0, 0, 0, 0, 1, 0, 0, 0 FROM send_messages WHERE unsubscribed_at IS NOT NULL
    UNION ALL SELECT user_id, CAST(julianday(substr(complained_at, 1, 19)) - 2440587.5 AS INTEGER), 0, 0, 0, 0, 0, 0, 1, 0, 0 FROM send_messages WHERE complained_at IS NOT NULL
    UNION ALL SELECT user_id, CAST(julianday(substr(created_at, 1, 19)) - 2440587.5 AS INTEGER), 0, 0, 1, 0, 0, 0, 0, 0, 0 FROM feedback WHERE kind = 'hard_bounce' AND source <> 'smtp'
    UNION ALL SELECT user_id, CAST(julianday(substr(created_at, 1, 19)) - 2440587.5 AS INTEGER), 1, 0, 1, 0, 0, 0, 0, 0, 0 FROM suppressions WHERE source = 'smtp' AND send_id IS NOT NULL
    UNION ALL SELECT user_id, CAST(julianday(substr(created_at, 1, 19)) - 2440587.5 AS INTEGER), 0, 0, 0, 0, 0, 0, 0, 1, 0 FROM contacts
    UNION ALL SELECT user_id, CAST(julianday(substr(deleted_at, 1, 19)) - 2440587.5 AS INTEGER), 0, 0, 0, 0, 0, 0, 0, 0, 1 FROM contacts WHERE deleted_at IS NOT NULL
) figures
WHERE day IS NOT NULL
GROUP BY user_id, day;

-- +goose Down
DROP TABLE account_daily;
