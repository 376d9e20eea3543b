-- +goose Up
-- What the reports keep of an open's or a click's request: the mail
-- client's family and the device read from its User-Agent
-- (delivery.ClassifyAgent), and the country of its address ('' unknown,
-- or no IP-to-country database). The raw agent and address are not kept.
-- On each counted event, so that a click taken back as a machine's later
-- (docs/MACHINE_ACTIVITY.md, rule 12) moves out of the class it was
-- counted in.
ALTER TABLE send_events ADD COLUMN client TEXT NOT NULL DEFAULT '';
ALTER TABLE send_events ADD COLUMN device TEXT NOT NULL DEFAULT '';
ALTER TABLE send_events ADD COLUMN country TEXT NOT NULL DEFAULT '';

-- The counts per send and class, written in the transaction that counts
-- the open or click, so a report reads a few rows per send and never the
-- events. kind: 1 open, 2 click; machine: 1 for what the machine rules
-- took for a machine's. hits: counted opens or clicks (at most one a
-- minute per message, as the send's totals); people: messages whose first
-- open or click by a person fell in the class (machine rows: 0).
CREATE TABLE send_hit_classes (
    send_id BIGINT NOT NULL REFERENCES single_sends (id) ON DELETE CASCADE,
    kind    INTEGER NOT NULL,
    machine INTEGER NOT NULL,
    client  TEXT NOT NULL,
    device  TEXT NOT NULL,
    country TEXT NOT NULL,
    hits    BIGINT NOT NULL DEFAULT 0,
    people  BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (send_id, kind, machine, client, device, country)
);

-- When each message was first opened (kind 1) or clicked (kind 2) by a
-- person, in whole hours after it was delivered (336, two weeks, holds
-- everything later): the compare page's curves, written with the counts
-- above.
CREATE TABLE send_hit_hours (
    send_id BIGINT NOT NULL REFERENCES single_sends (id) ON DELETE CASCADE,
    kind    INTEGER NOT NULL,
    hour    INTEGER NOT NULL,
    people  BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (send_id, kind, hour)
);

-- +goose Down
DROP TABLE send_hit_hours;
DROP TABLE send_hit_classes;
ALTER TABLE send_events DROP COLUMN country;
ALTER TABLE send_events DROP COLUMN device;
ALTER TABLE send_events DROP COLUMN client;
