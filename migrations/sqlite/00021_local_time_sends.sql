-- Local-time sends: a single send may go out at a local clock
-- time (local_time, "09:00") in each recipient's zone, the zone read from
-- the custom field local_zone_field when the send names one. local_base
-- is the instant (Unix ms) the waves count from, set once at resolution so
-- that a resolution taken over by another process computes the same waves.
-- Each ledger row keeps the release time its zone gave it (release_at,
-- Unix ms; 0 for an ordinary send); send_waves sums them per zone.

-- +goose Up
ALTER TABLE single_sends ADD COLUMN local_time TEXT NOT NULL DEFAULT '';
ALTER TABLE single_sends ADD COLUMN local_zone_field TEXT NOT NULL DEFAULT '';
ALTER TABLE single_sends ADD COLUMN local_base INTEGER NOT NULL DEFAULT 0;
ALTER TABLE send_messages ADD COLUMN release_at INTEGER NOT NULL DEFAULT 0;
CREATE TABLE send_waves (
    send_id    INTEGER NOT NULL REFERENCES single_sends (id) ON DELETE CASCADE,
    zone       TEXT NOT NULL,
    user_id    INTEGER NOT NULL,
    release_at INTEGER NOT NULL,
    recipients INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (send_id, zone)
);

-- +goose Down
DROP TABLE send_waves;
ALTER TABLE send_messages DROP COLUMN release_at;
ALTER TABLE single_sends DROP COLUMN local_base;
ALTER TABLE single_sends DROP COLUMN local_zone_field;
ALTER TABLE single_sends DROP COLUMN local_time;
