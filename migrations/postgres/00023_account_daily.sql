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
-- Room on the pages for the row versions of the counters (as single_sends,
-- 00018): the updates stay HOT.
CREATE TABLE account_daily (
    user_id          BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day              INTEGER NOT NULL,
    sent             BIGINT NOT NULL DEFAULT 0,
    delivered        BIGINT NOT NULL DEFAULT 0,
    bounces          BIGINT NOT NULL DEFAULT 0,
    opens            BIGINT NOT NULL DEFAULT 0,
    clicks           BIGINT NOT NULL DEFAULT 0,
    unsubscribes     BIGINT NOT NULL DEFAULT 0,
    complaints       BIGINT NOT NULL DEFAULT 0,
    contacts_added   BIGINT NOT NULL DEFAULT 0,
    contacts_removed BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, day)
) WITH (fillfactor = 50);

-- The figures of what happened before this version, read once from the
-- ledger and the contacts.
INSERT INTO account_daily (user_id, day, sent, delivered, bounces, opens, clicks, unsubscribes, complaints, contacts_added, contacts_removed)
SELECT user_id, day, SUM(sent), SUM(delivered), SUM(bounces), SUM(opens), SUM(clicks), SUM(unsubscribes), SUM(complaints), SUM(added), SUM(removed)
FROM (
    SELECT user_id, ((sent_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01') AS day,
        1 AS sent, 1 AS delivered, 0 AS bounces, 0 AS opens, 0 AS clicks, 0 AS unsubscribes, 0 AS complaints, 0 AS added, 0 AS removed
        FROM send_messages WHERE state = 2 AND sent_at IS NOT NULL
    UNION ALL SELECT user_id, ((opened_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01'), 0, 0, 0, 1, 0, 0, 0, 0, 0 FROM send_messages WHERE opened_at IS NOT NULL
    UNION ALL SELECT user_id, ((clicked_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01'), 0, 0, 0, 0, 1, 0, 0, 0, 0 FROM send_messages WHERE clicked_at IS NOT NULL
    UNION ALL SELECT user_id, ((unsubscribed_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01'), 0, 0, 0, 0, 0, 1, 0, 0, 0 FROM send_messages WHERE unsubscribed_at IS NOT NULL
    UNION ALL SELECT user_id, ((complained_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01'), 0, 0, 0, 0, 0, 0, 1, 0, 0 FROM send_messages WHERE complained_at IS NOT NULL
    UNION ALL SELECT user_id, ((created_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01'), 0, 0, 1, 0, 0, 0, 0, 0, 0 FROM feedback WHERE kind = 'hard_bounce' AND source <> 'smtp'
    UNION ALL SELECT user_id, ((created_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01'), 1, 0, 1, 0, 0, 0, 0, 0, 0 FROM suppressions WHERE source = 'smtp' AND send_id IS NOT NULL
    UNION ALL SELECT user_id, ((created_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01'), 0, 0, 0, 0, 0, 0, 0, 1, 0 FROM contacts
    UNION ALL SELECT user_id, ((deleted_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01'), 0, 0, 0, 0, 0, 0, 0, 0, 1 FROM contacts WHERE deleted_at IS NOT NULL
) figures
WHERE day IS NOT NULL
GROUP BY user_id, day;

-- +goose Down
DROP TABLE account_daily;
