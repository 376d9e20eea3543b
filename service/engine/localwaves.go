package engine

// The engine's part of a local-time send: each recipient's zone and
// release time, as a planner of the audience resolver.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/world"
)

// localPlanner is the planner (audience.go) of local-time sends: each row
// is due when its zone's clock shows the send's local time.
type localPlanner struct {
	db      *core.DB
	dialect core.Dialect
	now     func() time.Time // a local-time send's waves count from its start
}

// forSend prepares the zones of a local-time send, first fixing the
// instant its waves count from (once: a process taking over the
// resolution finds it set and computes the same waves). Another send has
// no plan.
func (p *localPlanner) forSend(ctx context.Context, ss *models.SingleSend) (sendPlan, error) {
	if ss.LocalTime == "" {
		return nil, nil
	}
	if ss.LocalBase == 0 {
		if err := p.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND local_base = 0", ss.ID).
			Update("local_base", p.now().UnixMilli()).Error; err != nil {
			return nil, fmt.Errorf("localwaves: set base of send %d: %w", ss.ID, err)
		}
		if err := p.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ?", ss.ID).Pluck("local_base", &ss.LocalBase).Error; err != nil {
			return nil, fmt.Errorf("localwaves: base of send %d: %w", ss.ID, err)
		}
	}
	lw, err := newLocalWaves(ctx, p.db, p.dialect, ss)
	if err != nil {
		return nil, err
	}
	return &localPlan{lw: lw, r: p.db.R}, nil
}

// localPlan is one local-time send's plan: each chunk's rows take their
// zones' release times, and the zones of the rows inserted are counted
// into send_waves.
type localPlan struct {
	lw *localWaves
	r  *gorm.DB // reads the chunk's places
}

func (p *localPlan) chunk(ctx context.Context, q chunkQuery, lo, hi int64) (rowPlan, error) {
	cp, err := p.lw.plan(ctx, p.r, q, lo, hi)
	if err != nil {
		return rowPlan{}, err
	}
	return rowPlan{release: cp.release, inserted: func(tx *gorm.DB, contacts []*int64) error {
		return p.lw.count(tx, contacts, cp)
	}}, nil
}

// zoneKey is what a contact's zone depends on.
type zoneKey struct{ field, country, state, city string }

// localWaves gives release times to the ledger rows of one local-time
// send. Its caches are bounded, so memory stays flat with the audience.
type localWaves struct {
	base        time.Time
	hour, min   int
	fallback    string // the account's zone
	field       string // SQL text of the zone custom field, or ""
	zoneOf      map[zoneKey]string
	releaseOf   map[string]int64 // zone → Unix ms
	locations   map[string]*time.Location
	sendID, acc int64
}

// maxZoneMemo bounds the memo of contacts' places (a new one starts past it).
const maxZoneMemo = 50000

func newLocalWaves(ctx context.Context, db *core.DB, d core.Dialect, ss *models.SingleSend) (*localWaves, error) {
	t, err := time.Parse("15:04", ss.LocalTime)
	if err != nil {
		return nil, fmt.Errorf("localwaves: local time of send %d: %w", ss.ID, err)
	}
	var tz string
	if err := db.R.WithContext(ctx).Table("users").Select("time_zone").Where("id = ?", ss.UserID).Scan(&tz).Error; err != nil {
		return nil, fmt.Errorf("localwaves: time zone of account %d: %w", ss.UserID, err)
	}
	lw := &localWaves{
		base: time.UnixMilli(ss.LocalBase), hour: t.Hour(), min: t.Minute(), fallback: "UTC",
		zoneOf: map[zoneKey]string{}, releaseOf: map[string]int64{}, locations: map[string]*time.Location{},
		sendID: ss.ID, acc: ss.UserID,
	}
	if lw.location(tz) != nil {
		lw.fallback = tz
	}
	if ss.LocalZoneField != "" && core.FieldNameRE.MatchString(ss.LocalZoneField) {
		lw.field = d.CustomField("c.custom_fields", ss.LocalZoneField)
	}
	return lw, nil
}

// location loads an IANA zone by name (nil: not one). "Local" and empty
// names are not zones of a recipient.
func (lw *localWaves) location(name string) *time.Location {
	if name == "" || name == "Local" || len(name) > 64 {
		return nil
	}
	if loc, ok := lw.locations[name]; ok {
		return loc
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		loc = nil
	}
	if len(lw.locations) < 1000 {
		lw.locations[name] = loc
	}
	return loc
}

// zone is a contact's zone name (see the package comment's order).
func (lw *localWaves) zone(k zoneKey) string {
	if z, ok := lw.zoneOf[k]; ok {
		return z
	}
	z := lw.place(k)
	if len(lw.zoneOf) >= maxZoneMemo {
		clear(lw.zoneOf)
	}
	lw.zoneOf[k] = z
	return z
}

func (lw *localWaves) place(k zoneKey) string {
	if f := strings.TrimSpace(k.field); f != "" && lw.location(f) != nil {
		return f
	}
	if cid, err := strconv.ParseInt(k.country, 10, 64); err == nil && cid > 0 {
		// The city within its state when the state is known (many names
		// repeat across states: Springfield), else within the country. A
		// city not found in a known state leaves the state's zone.
		st, okState := world.LookupState(cid, k.state)
		if k.city != "" {
			if c, ok := world.LookupCity(cid, st.ID, k.city); ok {
				if z, ok := world.CityZone(c.ID); ok {
					return z
				}
			}
		}
		if okState {
			if z, ok := world.StateZone(st.ID); ok {
				return z
			}
		}
		if z, ok := world.CountryZone(cid); ok {
			return z
		}
	}
	return lw.fallback
}

// release is the Unix ms of the first moment at or after the base when
// the zone's clock shows the send's local time.
func (lw *localWaves) release(zone string) int64 {
	if at, ok := lw.releaseOf[zone]; ok {
		return at
	}
	loc := lw.location(zone)
	if loc == nil {
		loc = time.UTC
	}
	b := lw.base.In(loc)
	at := time.Date(b.Year(), b.Month(), b.Day(), lw.hour, lw.min, 0, 0, loc)
	if at.Before(lw.base) {
		at = time.Date(b.Year(), b.Month(), b.Day()+1, lw.hour, lw.min, 0, 0, loc)
	}
	lw.releaseOf[zone] = at.UnixMilli()
	return at.UnixMilli()
}

// chunkPlan is the release time of each contact of one audience chunk:
// release is an SQL expression of the source's contact id (a CASE over
// the chunk's contacts grouped by release time, the largest group first);
// zoneOf names each contact's zone for the waves' counts.
type chunkPlan struct {
	release string
	zoneOf  map[int64]string
}

// plan reads the places of the chunk (lo, hi] of a source (exclusions
// aside: they only make rows the plan does not need) and gives each
// contact its zone's release time. Addresses with no contact, and a
// contact the read did not see, take the account zone's time.
//
// One INSERT … SELECT with the CASE writes each row once with its time.
// (Measured on SQLite: one INSERT per release time, narrowed by the
// group's contact ids, cost more: the planner walks the chunk's key range
// for each of them.)
func (lw *localWaves) plan(ctx context.Context, r *gorm.DB, q chunkQuery, lo, hi int64) (*chunkPlan, error) {
	fallback := strconv.FormatInt(lw.release(lw.fallback), 10)
	p := &chunkPlan{release: fallback, zoneOf: map[int64]string{}}
	s := q.src
	if s.contact == "NULL" {
		return p, nil
	}
	field := "''"
	if lw.field != "" {
		field = "COALESCE(" + lw.field + ", '')"
	}
	query := "SELECT " + s.contact + ", " + field + ", c.country, c.state, c.city FROM " + s.from + " WHERE " + s.where + " AND " + s.key + " > ?"
	args := []any{q.account, q.target, lo}
	if hi > 0 {
		query += " AND " + s.key + " <= ?"
		args = append(args, hi)
	}
	rows, err := r.WithContext(ctx).Raw(query, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("localwaves: plan send %d: %w", q.sendID, err)
	}
	defer rows.Close()
	groups := map[int64][]int64{} // release → contact ids
	for rows.Next() {
		var id int64
		var k zoneKey
		if err := rows.Scan(&id, &k.field, &k.country, &k.state, &k.city); err != nil {
			return nil, fmt.Errorf("localwaves: scan contact of send %d: %w", q.sendID, err)
		}
		z := lw.zone(k)
		p.zoneOf[id] = z
		at := lw.release(z)
		groups[at] = append(groups[at], id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("localwaves: read contacts of send %d: %w", q.sendID, err)
	}
	if len(groups) == 0 {
		return p, nil
	}
	order := sortedKeys(groups)
	sort.SliceStable(order, func(i, j int) bool { return len(groups[order[i]]) > len(groups[order[j]]) })
	// The ids are written into the statement as numbers (they are int64
	// read from the database): as parameters, binding them cost more than
	// the rest of the statement.
	var b strings.Builder
	b.WriteString("CASE")
	for _, at := range order {
		b.WriteString(" WHEN " + s.contact + " IN (")
		for i, id := range groups[at] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(id, 10))
		}
		b.WriteString(") THEN " + strconv.FormatInt(at, 10))
	}
	b.WriteString(" ELSE " + fallback + " END")
	p.release = b.String()
	return p, nil
}

// count adds the zones of the rows the chunk inserted (their contact ids,
// nil for an address with none) to send_waves, in the chunk's
// transaction: one statement for the chunk's zones.
func (lw *localWaves) count(tx *gorm.DB, contacts []*int64, p *chunkPlan) error {
	counts := map[string]int64{}
	for _, c := range contacts {
		z, ok := "", false
		if c != nil {
			z, ok = p.zoneOf[*c]
		}
		if !ok {
			z = lw.fallback
		}
		counts[z]++
	}
	if len(counts) == 0 {
		return nil
	}
	zones := make([]string, 0, len(counts))
	for z := range counts {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	var b strings.Builder
	b.WriteString("INSERT INTO send_waves (send_id, zone, user_id, release_at, recipients) VALUES ")
	args := make([]any, 0, 5*len(zones))
	for i, z := range zones {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?)")
		args = append(args, lw.sendID, z, lw.acc, lw.release(z), counts[z])
	}
	b.WriteString(" ON CONFLICT (send_id, zone) DO UPDATE SET recipients = send_waves.recipients + excluded.recipients")
	return tx.Exec(b.String(), args...).Error
}
