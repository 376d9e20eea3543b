package record

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"gorm.io/gorm"

	"herald/service/core"
)

// Warm-up plans (decisions.md 11) are read by three areas: deliverability
// keeps them (the API and the console), the engine holds a domain's mail
// to the day's cap, the pre-send checklist warns of a send larger than
// it. The plan's arithmetic and its counter live here, once.
//
// Days are local days of the account's time zone, numbered as days since
// 1970-01-01 of the local date (LocalDay), so that a day number is the
// same in every process whatever its own zone.

// WarmupPlan is one account's plan for one From domain.
type WarmupPlan struct {
	UserID      int64
	Domain      string
	StartVolume int64   // the cap of day 1
	Growth      float64 // the factor from one day's cap to the next
	UntilVolume int64   // the daily volume at which the plan ends
	FirstDay    int64   // day 1, a LocalDay
}

// TableName names the table.
func (WarmupPlan) TableName() string { return "warmup_plans" }

// maxWarmupDays bounds the walk over a plan's days: a plan that has not
// reached its end by then (a growth barely over 1) ends there.
const maxWarmupDays = 3650

// PlannedCap is the cap of day n of a plan (1-based): round(start ×
// growth^(n-1)), capped at until.
func (p WarmupPlan) PlannedCap(n int64) int64 {
	if n < 1 {
		n = 1
	}
	c := math.Round(float64(p.StartVolume) * math.Pow(p.Growth, float64(n-1)))
	if c >= float64(p.UntilVolume) || math.IsInf(c, 0) || math.IsNaN(c) {
		return p.UntilVolume
	}
	return int64(c)
}

// Days is the number of the plan's last day: the first day whose cap
// reaches until (that day is still capped, at until). From the next day
// on the plan is over and the domain has no cap.
func (p WarmupPlan) Days() int64 {
	for n := int64(1); n < maxWarmupDays; n++ {
		if p.PlannedCap(n) >= p.UntilVolume {
			return n
		}
	}
	return maxWarmupDays
}

// CapOn is the cap of a local day, and whether there is one: before day 1
// (the account's zone moved back) the day counts as day 1; after the
// plan's last day there is none.
func (p WarmupPlan) CapOn(day int64) (int64, bool) {
	n := day - p.FirstDay + 1
	if n > p.Days() {
		return 0, false
	}
	return p.PlannedCap(n), true
}

// DaysFor is how many local days, from day on, the plan needs to carry n
// more messages when used is already counted on day (1: all of them go
// today). Days after the plan's end carry any number.
func (p WarmupPlan) DaysFor(day, used, n int64) int64 {
	for k := int64(0); ; k++ {
		c, ok := p.CapOn(day + k)
		if !ok {
			return k + 1
		}
		left := c
		if k == 0 {
			left = max(c-used, 0)
		}
		if n <= left {
			return k + 1
		}
		n -= left
	}
}

// LocalDay is the day number of t's date in loc.
func LocalDay(t time.Time, loc *time.Location) int64 {
	y, m, d := t.In(loc).Date()
	return DayOf(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
}

// LocalDayStart is when local day number day starts in loc.
func LocalDayStart(day int64, loc *time.Location) time.Time {
	y, m, d := DayTime(day).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

// AccountLocation is the account's time zone (UTC when unset or unknown).
func AccountLocation(tz string) *time.Location {
	if tz == "" || strings.EqualFold(tz, "local") {
		return time.UTC
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return time.UTC
	}
	return loc
}

// ReadAccountLocation reads the account's time zone (AccountLocation of
// its users.time_zone).
func ReadAccountLocation(ctx context.Context, db *gorm.DB, accountID int64) (*time.Location, error) {
	var tz string
	if err := db.WithContext(ctx).Table("users").Select("time_zone").Where("id = ?", accountID).Scan(&tz).Error; err != nil {
		return nil, fmt.Errorf("time zone of account %d: %w", accountID, err)
	}
	return AccountLocation(tz), nil
}

// DomainOf is the lower-cased domain of an address.
func DomainOf(addr string) string {
	return strings.ToLower(strings.TrimSpace(addr[strings.LastIndexByte(addr, '@')+1:]))
}

// WarmupPlanOf reads the account's plan for domain; nil when it has none.
func WarmupPlanOf(ctx context.Context, db *gorm.DB, accountID int64, domain string) (*WarmupPlan, *time.Location, error) {
	var rows []struct {
		WarmupPlan
		TimeZone string
	}
	if err := db.WithContext(ctx).Raw(`SELECT p.user_id, p.domain, p.start_volume, p.growth, p.until_volume, p.first_day, u.time_zone
		FROM warmup_plans p JOIN users u ON u.id = p.user_id WHERE p.user_id = ? AND p.domain = ?`, accountID, domain).Scan(&rows).Error; err != nil {
		return nil, nil, fmt.Errorf("warm-up: plan of %s: %w", domain, err)
	}
	if len(rows) == 0 {
		return nil, nil, nil
	}
	return &rows[0].WarmupPlan, AccountLocation(rows[0].TimeZone), nil
}

// WarmupCount is what the counter of the account's domain holds for a
// local day.
func WarmupCount(ctx context.Context, db *gorm.DB, accountID int64, domain string, day int64) (int64, error) {
	var n int64
	if err := db.WithContext(ctx).Raw("SELECT COALESCE(SUM(count), 0) FROM warmup_counts WHERE user_id = ? AND domain = ? AND day = ?",
		accountID, domain, day).Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("warm-up: count of %s: %w", domain, err)
	}
	return n, nil
}

// LockWarmupCount opens the counter row of the account's domain and day
// if missing, locks it (PostgreSQL: FOR UPDATE; SQLite: the one writer)
// and returns what it holds: inside tx, the caller then claims no more
// than the cap leaves and adds what it claimed (AddWarmupCount) before
// the commit, so every process sharing the database sees one counter.
func LockWarmupCount(tx *gorm.DB, d core.Dialect, accountID int64, domain string, day int64) (int64, error) {
	if err := tx.Exec("INSERT INTO warmup_counts (user_id, domain, day, count) VALUES (?, ?, ?, 0) ON CONFLICT (user_id, domain, day) DO NOTHING",
		accountID, domain, day).Error; err != nil {
		return 0, fmt.Errorf("warm-up: open the day of %s: %w", domain, err)
	}
	var n int64
	if err := tx.Raw("SELECT count FROM warmup_counts WHERE user_id = ? AND domain = ? AND day = ?"+d.ForUpdate(),
		accountID, domain, day).Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("warm-up: read the day of %s: %w", domain, err)
	}
	return n, nil
}

// AddWarmupCount adds n to the counter of the account's domain and day
// (creating it): messages handed over under the plan.
func AddWarmupCount(tx *gorm.DB, accountID int64, domain string, day, n int64) error {
	if n == 0 {
		return nil
	}
	if err := tx.Exec(`INSERT INTO warmup_counts (user_id, domain, day, count) VALUES (?, ?, ?, ?)
		ON CONFLICT (user_id, domain, day) DO UPDATE SET count = warmup_counts.count + excluded.count`,
		accountID, domain, day, n).Error; err != nil {
		return fmt.Errorf("warm-up: count for %s: %w", domain, err)
	}
	return nil
}
