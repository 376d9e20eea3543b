-- +goose Up
-- What became of a message, told apart (decisions.md 8): a refusal by
-- policy is not a bounce, a message herald could not send is not the
-- recipient's fault. Ledger states beside 0..4: 5 blocked (the relay refused the
-- sender, the content, or by a 5.7.x policy code: never a bounce, never a
-- suppression; resuming a paused send queues it again), 6 failed (the
-- message could not be built, or herald could not put it on the wire: a
-- failure of the send). On the send: blocks (an API extra field) with the
-- last refusal; failures with the first and the last reason; the pause
-- after repeated blocks (paused_at, pause_reason; status stays 2) and the
-- streak that decides it (block_streak: blocks since a delivery was last
-- recorded; streak_delivered: delivered when the last block was counted).
ALTER TABLE single_sends ADD COLUMN blocks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN first_failure TEXT NOT NULL DEFAULT '';
ALTER TABLE single_sends ADD COLUMN last_failure TEXT NOT NULL DEFAULT '';
ALTER TABLE single_sends ADD COLUMN last_block TEXT NOT NULL DEFAULT '';
ALTER TABLE single_sends ADD COLUMN block_streak INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN streak_delivered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE single_sends ADD COLUMN paused_at DATETIME;
ALTER TABLE single_sends ADD COLUMN pause_reason TEXT NOT NULL DEFAULT '';

-- Repair. Herald before this version counted every permanent failure as a
-- bounce (ledger state 3, `bounces`) and suppressed the address for good,
-- with the reason `delivery: permanent failure at <stage>: <code> <text>`
-- (the enhanced code taken out of the text), `delivery: temporary failure
-- at <stage>: …` at the end of the retry window, or the build error
-- (`delivery: invalid message: …`, `delivery: DKIM signing for …`). Only
-- an answer to the recipient at RCPT stays a bounce, and of those not a
-- policy refusal (a 5.7. or 4.7. code left in a line of the text, Postfix's
-- policy phrases, "blocked", "blacklist", "policy", "spam") nor a code that
-- is not a mailbox's (other than 550, 551, 552, 553). The rest of Record's
-- making becomes a block (kind 5) or a failure (kind 6), is counted so, and
-- its suppression is lifted. Suppressions that Record did not make (their
-- reason does not start with "delivery: ") are left alone.
CREATE TEMP TABLE repair_outcomes AS
SELECT id, send_id, error, CASE
        -- an answer to the sender (MAIL FROM) or to the content (DATA): a block
        WHEN error LIKE 'delivery: % failure at mail: 4__ %' OR error LIKE 'delivery: % failure at mail: 5__ %' OR error LIKE 'delivery: % failure at data: 4__ %' OR error LIKE 'delivery: % failure at data: 5__ %' THEN 5
        -- an answer to the recipient (RCPT): a bounce, unless it is policy or
        -- not a mailbox's code
        WHEN error LIKE 'delivery: % failure at rcpt: 4__ %' OR error LIKE 'delivery: % failure at rcpt: 5__ %' THEN
            CASE WHEN error LIKE '%5.7.%' OR error LIKE '%4.7.%'
              OR error LIKE '%Sender address rejected%' OR error LIKE '%Relay access denied%'
              OR error LIKE '%Client host rejected%' OR error LIKE '%Helo command rejected%'
              OR LOWER(error) LIKE '%blocked%' OR LOWER(error) LIKE '%blacklist%' OR LOWER(error) LIKE '%blocklist%'
              OR LOWER(error) LIKE '%policy%' OR LOWER(error) LIKE '%spam%'
              OR (error LIKE 'delivery: permanent failure at rcpt: 5__ %'
                  AND error NOT LIKE 'delivery: permanent failure at rcpt: 550 %'
                  AND error NOT LIKE 'delivery: permanent failure at rcpt: 551 %'
                  AND error NOT LIKE 'delivery: permanent failure at rcpt: 552 %'
                  AND error NOT LIKE 'delivery: permanent failure at rcpt: 553 %'
              )
            THEN 5 ELSE 3 END
        -- a policy code at the connection or the login (end of the retry window)
        WHEN (error LIKE 'delivery: % failure at connect: 4__ %' OR error LIKE 'delivery: % failure at connect: 5__ %' OR error LIKE 'delivery: % failure at auth: 4__ %' OR error LIKE 'delivery: % failure at auth: 5__ %') AND (error LIKE '%5.7.%' OR error LIKE '%4.7.%') THEN 5
        -- the rest: build errors (invalid message, DKIM), the envelope, the
        -- connection, the login, the outbox, failures without an answer
        ELSE 6
    END AS kind
FROM send_messages
WHERE state = 3 AND error LIKE 'delivery: %';
DELETE FROM repair_outcomes WHERE kind = 3;
CREATE INDEX repair_outcomes_send ON repair_outcomes (send_id, kind, id);

UPDATE single_sends SET
    blocks = (SELECT COUNT(*) FROM repair_outcomes r WHERE r.send_id = single_sends.id AND r.kind = 5),
    failures = (SELECT COUNT(*) FROM repair_outcomes r WHERE r.send_id = single_sends.id AND r.kind = 6),
    last_block = COALESCE((SELECT r.error FROM repair_outcomes r WHERE r.send_id = single_sends.id AND r.kind = 5 ORDER BY r.id DESC LIMIT 1), ''),
    first_failure = COALESCE((SELECT r.error FROM repair_outcomes r WHERE r.send_id = single_sends.id AND r.kind = 6 ORDER BY r.id LIMIT 1), ''),
    last_failure = COALESCE((SELECT r.error FROM repair_outcomes r WHERE r.send_id = single_sends.id AND r.kind = 6 ORDER BY r.id DESC LIMIT 1), '')
WHERE id IN (SELECT send_id FROM repair_outcomes);
-- blocks and failures are new: what they now count leaves bounces.
UPDATE single_sends SET bounces = MAX(bounces - blocks - failures, 0)
WHERE id IN (SELECT send_id FROM repair_outcomes);
UPDATE send_messages SET state = (SELECT r.kind FROM repair_outcomes r WHERE r.id = send_messages.id)
WHERE id IN (SELECT id FROM repair_outcomes);
DROP TABLE repair_outcomes;

DELETE FROM suppressions WHERE id IN (
    SELECT id FROM (
        SELECT id, CASE
            -- an answer to the sender (MAIL FROM) or to the content (DATA): a block
            WHEN reason LIKE 'delivery: % failure at mail: 4__ %' OR reason LIKE 'delivery: % failure at mail: 5__ %' OR reason LIKE 'delivery: % failure at data: 4__ %' OR reason LIKE 'delivery: % failure at data: 5__ %' THEN 5
            -- an answer to the recipient (RCPT): a bounce, unless it is policy or
            -- not a mailbox's code
            WHEN reason LIKE 'delivery: % failure at rcpt: 4__ %' OR reason LIKE 'delivery: % failure at rcpt: 5__ %' THEN
                CASE WHEN reason LIKE '%5.7.%' OR reason LIKE '%4.7.%'
                  OR reason LIKE '%Sender address rejected%' OR reason LIKE '%Relay access denied%'
                  OR reason LIKE '%Client host rejected%' OR reason LIKE '%Helo command rejected%'
                  OR LOWER(reason) LIKE '%blocked%' OR LOWER(reason) LIKE '%blacklist%' OR LOWER(reason) LIKE '%blocklist%'
                  OR LOWER(reason) LIKE '%policy%' OR LOWER(reason) LIKE '%spam%'
                  OR (reason LIKE 'delivery: permanent failure at rcpt: 5__ %'
                      AND reason NOT LIKE 'delivery: permanent failure at rcpt: 550 %'
                      AND reason NOT LIKE 'delivery: permanent failure at rcpt: 551 %'
                      AND reason NOT LIKE 'delivery: permanent failure at rcpt: 552 %'
                      AND reason NOT LIKE 'delivery: permanent failure at rcpt: 553 %'
                  )
                THEN 5 ELSE 3 END
            -- a policy code at the connection or the login (end of the retry window)
            WHEN (reason LIKE 'delivery: % failure at connect: 4__ %' OR reason LIKE 'delivery: % failure at connect: 5__ %' OR reason LIKE 'delivery: % failure at auth: 4__ %' OR reason LIKE 'delivery: % failure at auth: 5__ %') AND (reason LIKE '%5.7.%' OR reason LIKE '%4.7.%') THEN 5
            -- the rest: build errors (invalid message, DKIM), the envelope, the
            -- connection, the login, the outbox, failures without an answer
            ELSE 6
        END AS kind
        FROM suppressions
        WHERE reason LIKE 'delivery: %'
    ) classified
    WHERE kind <> 3
);

-- +goose Down
-- Lifted suppressions are not made again.
UPDATE single_sends SET bounces = bounces + blocks + failures WHERE blocks > 0 OR failures > 0;
UPDATE send_messages SET state = 3 WHERE state IN (5, 6);
ALTER TABLE single_sends DROP COLUMN pause_reason;
ALTER TABLE single_sends DROP COLUMN paused_at;
ALTER TABLE single_sends DROP COLUMN streak_delivered;
ALTER TABLE single_sends DROP COLUMN block_streak;
ALTER TABLE single_sends DROP COLUMN last_block;
ALTER TABLE single_sends DROP COLUMN last_failure;
ALTER TABLE single_sends DROP COLUMN first_failure;
ALTER TABLE single_sends DROP COLUMN failures;
ALTER TABLE single_sends DROP COLUMN blocks;
