package campaign

import (
	"context"
	"fmt"
	"strings"
	"time"

	"herald/models"
	"herald/service/core"
)

// Local-time sends. A single send with a local time ("09:00")
// gives each recipient the release time of its zone: the first moment at
// or after the send's start (the instant its audience is first resolved,
// kept in single_sends.local_base) when that zone's clock shows the local
// time. So a zone where 09:00 has already passed that day gets 09:00 the
// next day. The zone is, in order: the custom field the send names, when
// it holds an IANA zone name; the contact's city, else state, else
// country in the shipped world data (world.CityZone …); else the
// account's zone (UTC when it has none).
//
// The zones are resolved in the pass that writes the ledger rows: before
// each chunk of the audience is inserted, its contacts' places are read
// and their zones' release times computed, and the chunk's INSERT … SELECT
// writes them as next_at (and release_at), grouped by release time in one
// CASE; in the same transaction the zones of the rows it inserted are
// added to send_waves. Each row is written once. The ledger's claim only
// takes rows whose next_at has come, and the send completes only when no
// row is queued, so the waves survive restarts and are shared by several
// processes with no state of their own.

// LocalTimeInput is the console's "deliver at this local time in each
// recipient's zone" option of a single send.
type LocalTimeInput struct {
	On        bool
	Clock     string // "09:00" (H:i or H:i:s); required when On
	ZoneField string // optional custom field holding an IANA zone name
}

// Messages of the local-time option.
const (
	msgLocalClock = "The local time does not match the format H:i."
	msgZoneField  = "The zone field must be one of your custom fields."
)

// checkLocal validates the local-time option into ss (problems in p).
func (s *SingleSends) checkLocal(ctx context.Context, accountID int64, in LocalTimeInput, ss *models.SingleSend, p core.Problems) error {
	clock := strings.TrimSpace(in.Clock)
	ss.LocalTime, ss.LocalZoneField = "", ""
	if !in.On || !p.Required("local_time", clock) {
		return nil
	}
	t, err := time.Parse("15:04:05", normalTime(clock))
	if err != nil {
		p.Add("local_time", msgLocalClock)
		return nil
	}
	ss.LocalTime = t.Format("15:04")
	if name := strings.TrimSpace(in.ZoneField); name != "" {
		var n int64
		if err := s.db.R.WithContext(ctx).Model(&models.Field{}).Where("user_id = ? AND field_name = ?", accountID, name).Count(&n).Error; err != nil {
			return fmt.Errorf("single sends: local time: zone field: %w", err)
		}
		if n == 0 || !core.FieldNameRE.MatchString(name) {
			p.Add("local_zone_field", msgZoneField)
			return nil
		}
		ss.LocalZoneField = name
	}
	return nil
}

// Wave is one release time of a local-time send: the zones it covers,
// their recipients and how many of them were delivered so far.
type Wave struct {
	At         time.Time
	Zones      []string
	Recipients int64
	Sent       int64
}

// Waves returns the waves of a local-time send in time order (none for
// another send). Sent counts delivered messages: it reads the send's
// delivered rows, a console-only cost.
func (s *SingleSends) Waves(ctx context.Context, accountID, sendID int64) ([]Wave, error) {
	var rows []struct {
		Zone       string
		ReleaseAt  int64
		Recipients int64
	}
	if err := s.db.R.WithContext(ctx).Raw("SELECT zone, release_at, recipients FROM send_waves WHERE send_id = ? AND user_id = ? ORDER BY release_at, zone",
		sendID, accountID).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("single sends: waves of send %d: %w", sendID, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	var sent []struct{ ReleaseAt, N int64 }
	if err := s.db.R.WithContext(ctx).Raw("SELECT release_at, COUNT(*) AS n FROM send_messages WHERE send_id = ? AND user_id = ? AND state = ? AND release_at > 0 GROUP BY release_at",
		sendID, accountID, models.MessageDelivered).Scan(&sent).Error; err != nil {
		return nil, fmt.Errorf("single sends: delivered per wave of send %d: %w", sendID, err)
	}
	byAt := map[int64]int64{}
	for _, r := range sent {
		byAt[r.ReleaseAt] = r.N
	}
	var out []Wave
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].At.UnixMilli() != r.ReleaseAt {
			out = append(out, Wave{At: time.UnixMilli(r.ReleaseAt).UTC(), Sent: byAt[r.ReleaseAt]})
		}
		w := &out[len(out)-1]
		w.Zones = append(w.Zones, r.Zone)
		w.Recipients += r.Recipients
	}
	return out, nil
}
