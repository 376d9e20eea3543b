package deliverability

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"herald/service/core"
	"herald/service/internal/record"
)

// Warmups keeps the account's warm-up plans, one per From domain
// (decisions.md 11): day N's cap is round(start × growth^(N-1)), capped
// at until; day 1 is the day, in the account's time zone, the plan was
// started; the first day whose cap reaches until is the last one (capped
// at until), and from the next day on the domain has no cap. The engine
// holds the domain's campaign mail over the day's cap (engine/warmup.go).
type Warmups struct {
	db  *core.DB
	now func() time.Time
	// changed tells this process's engine that the plans changed: an
	// ended plan's waiting mail goes at once.
	changed func()
}

// The bounds of a plan's numbers.
const (
	warmupMaxGrowth = 10
	warmupMaxVolume = 100_000_000
)

// WarmupInput is the body of POST api/senders/warmup.
type WarmupInput struct {
	Domain, Start, Growth, Until string
}

// WarmupPlan is a plan as the API and the console show it.
type WarmupPlan struct {
	Domain    string  `json:"domain"`
	Start     int64   `json:"start"`
	Growth    float64 `json:"growth"`
	Until     int64   `json:"until"`
	StartedOn string  `json:"started_on"` // day 1, a date in the account's time zone
	EndsOn    string  `json:"ends_on"`    // the last capped day
	Days      int64   `json:"days"`       // how many days the plan caps
	Day       int64   `json:"day"`        // today's number in the plan (1 on day 1)
	Done      bool    `json:"done"`       // the last day is over: no cap
	// Today's cap, what was handed over under it, and what is left (0
	// each once Done).
	TodayCap  int64 `json:"today_cap"`
	TodaySent int64 `json:"today_sent"`
	TodayLeft int64 `json:"today_left"`
}

// WarmupDay is one day of a plan's chart.
type WarmupDay struct {
	N    int64     // the day's number in the plan
	Date time.Time // its start in the account's time zone
	Cap  int64
	Sent int64 // handed over under the plan (0 for days to come)
	Past bool  // before today
	// Today is the current day.
	Today bool
}

// validate checks the body and returns the plan's numbers.
func (in WarmupInput) validate(p core.Problems) (domain string, start int64, growth float64, until int64) {
	domain, derr := validDomain("domain", in.Domain)
	if derr != nil {
		p.Merge(derr.(*core.Error))
	}
	parseInt := func(field, v string) (int64, bool) {
		if !p.Required(field, v) {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			p.AddReason(field, core.ReasonInteger, core.MsgInteger(field))
			return 0, false
		}
		return n, true
	}
	startOK := false
	if n, ok := parseInt("start", in.Start); ok {
		switch {
		case n < 1:
			p.Add("start", "The start must be at least 1.")
		case n > warmupMaxVolume:
			p.Add("start", fmt.Sprintf("The start may not be greater than %d.", warmupMaxVolume))
		default:
			start, startOK = n, true
		}
	}
	if p.Required("growth", in.Growth) {
		g, err := strconv.ParseFloat(strings.TrimSpace(in.Growth), 64)
		switch {
		case err != nil || math.IsNaN(g) || math.IsInf(g, 0):
			p.Add("growth", "The growth must be a number.")
		case g <= 1 || g > warmupMaxGrowth:
			p.Add("growth", fmt.Sprintf("The growth must be greater than 1 and at most %d.", warmupMaxGrowth))
		default:
			growth = g
		}
	}
	if n, ok := parseInt("until", in.Until); ok {
		switch {
		case n > warmupMaxVolume:
			p.Add("until", fmt.Sprintf("The until may not be greater than %d.", warmupMaxVolume))
		case startOK && n <= start:
			p.Add("until", "The until must be greater than the start.")
		case n < 2:
			p.Add("until", "The until must be at least 2.")
		default:
			until = n
		}
	}
	return domain, start, growth, until
}

// Domains are the domains of the account's senders, sorted: the domains a
// plan may be started for.
func (w *Warmups) Domains(ctx context.Context, accountID int64) ([]string, error) {
	var emails []string
	if err := w.db.R.WithContext(ctx).Table("senders").Where("user_id = ? AND deleted_at IS NULL", accountID).
		Pluck("from_email", &emails).Error; err != nil {
		return nil, fmt.Errorf("warm-up: sender domains: %w", err)
	}
	var out []string
	for _, e := range emails {
		if d := record.DomainOf(e); d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Start starts a plan for one of the account's sender domains, day 1
// today; a plan the domain already has is replaced (it starts again from
// day 1; what was handed over today still counts). Errors: validation.
func (w *Warmups) Start(ctx context.Context, accountID int64, in WarmupInput) (*WarmupPlan, error) {
	p := core.Problems{}
	domain, start, growth, until := in.validate(p)
	if !p.Has("domain") {
		domains, err := w.Domains(ctx, accountID)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(domains, domain) {
			p.Add("domain", "The domain must be the domain of one of your senders.")
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	loc, err := w.location(ctx, accountID)
	if err != nil {
		return nil, err
	}
	now := w.now()
	plan := record.WarmupPlan{UserID: accountID, Domain: domain, StartVolume: start, Growth: growth, UntilVolume: until,
		FirstDay: record.LocalDay(now, loc)}
	err = w.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("DELETE FROM warmup_plans WHERE user_id = ? AND domain = ?", accountID, domain).Error; err != nil {
			return err
		}
		return tx.Exec("INSERT INTO warmup_plans (user_id, domain, start_volume, growth, until_volume, first_day, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
			accountID, domain, start, growth, until, plan.FirstDay, now).Error
	})
	if err != nil {
		return nil, fmt.Errorf("warm-up: start a plan: %w", err)
	}
	w.notify()
	return w.Get(ctx, accountID, domain)
}

// End ends the plan of the account's domain: its waiting mail goes.
// Errors: ErrNotFound (no plan).
func (w *Warmups) End(ctx context.Context, accountID int64, domain string) error {
	domain = strings.ToLower(strings.TrimSpace(domain))
	res := w.db.W.WithContext(ctx).Exec("DELETE FROM warmup_plans WHERE user_id = ? AND domain = ?", accountID, domain)
	if res.Error != nil {
		return fmt.Errorf("warm-up: end a plan: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return core.ErrNotFound
	}
	// The day counters go with the plan: a new plan counts from its own day 1.
	if err := w.db.W.WithContext(ctx).Exec("DELETE FROM warmup_counts WHERE user_id = ? AND domain = ?", accountID, domain).Error; err != nil {
		return fmt.Errorf("warm-up: drop a plan's counts: %w", err)
	}
	w.notify()
	return nil
}

func (w *Warmups) notify() {
	if w.changed != nil {
		w.changed()
	}
}

// location is the account's time zone.
func (w *Warmups) location(ctx context.Context, accountID int64) (*time.Location, error) {
	loc, err := record.ReadAccountLocation(ctx, w.db.R, accountID)
	if err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	return loc, nil
}

// List is the account's plans, by domain.
func (w *Warmups) List(ctx context.Context, accountID int64) ([]WarmupPlan, error) {
	var plans []record.WarmupPlan
	if err := w.db.R.WithContext(ctx).Where("user_id = ?", accountID).Order("domain").Find(&plans).Error; err != nil {
		return nil, fmt.Errorf("warm-up: list plans: %w", err)
	}
	loc, err := w.location(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]WarmupPlan, 0, len(plans))
	for _, p := range plans {
		v, err := w.view(ctx, p, loc)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, nil
}

// Get is the plan of the account's domain. Errors: ErrNotFound.
func (w *Warmups) Get(ctx context.Context, accountID int64, domain string) (*WarmupPlan, error) {
	p, loc, err := record.WarmupPlanOf(ctx, w.db.R, accountID, strings.ToLower(strings.TrimSpace(domain)))
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, core.ErrNotFound
	}
	return w.view(ctx, *p, loc)
}

func (w *Warmups) view(ctx context.Context, p record.WarmupPlan, loc *time.Location) (*WarmupPlan, error) {
	today := record.LocalDay(w.now(), loc)
	days := p.Days()
	v := &WarmupPlan{Domain: p.Domain, Start: p.StartVolume, Growth: p.Growth, Until: p.UntilVolume, Days: days,
		StartedOn: record.DayTime(p.FirstDay).Format(time.DateOnly), EndsOn: record.DayTime(p.FirstDay + days - 1).Format(time.DateOnly),
		Day: max(today-p.FirstDay+1, 1)}
	limit, ok := p.CapOn(today)
	if !ok {
		v.Done = true
		return v, nil
	}
	sent, err := record.WarmupCount(ctx, w.db.R, p.UserID, p.Domain, today)
	if err != nil {
		return nil, err
	}
	v.TodayCap, v.TodaySent, v.TodayLeft = limit, sent, max(limit-sent, 0)
	return v, nil
}

// Chart is the plan's days, each with its cap and, up to today, what was
// handed over under it. Errors: ErrNotFound.
func (w *Warmups) Chart(ctx context.Context, accountID int64, domain string) ([]WarmupDay, error) {
	p, loc, err := record.WarmupPlanOf(ctx, w.db.R, accountID, strings.ToLower(strings.TrimSpace(domain)))
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, core.ErrNotFound
	}
	var counts []struct{ Day, Count int64 }
	if err := w.db.R.WithContext(ctx).Raw("SELECT day, count FROM warmup_counts WHERE user_id = ? AND domain = ? AND day >= ?",
		accountID, p.Domain, p.FirstDay).Scan(&counts).Error; err != nil {
		return nil, fmt.Errorf("warm-up: counts of %s: %w", p.Domain, err)
	}
	sent := make(map[int64]int64, len(counts))
	for _, c := range counts {
		sent[c.Day] = c.Count
	}
	today := record.LocalDay(w.now(), loc)
	days := p.Days()
	out := make([]WarmupDay, 0, days)
	for n := int64(1); n <= days; n++ {
		d := p.FirstDay + n - 1
		out = append(out, WarmupDay{N: n, Date: record.LocalDayStart(d, loc), Cap: p.PlannedCap(n), Sent: sent[d], Past: d < today, Today: d == today})
	}
	return out, nil
}

// DaysFor is how many days, today included, the plan of the account's
// domain needs to carry n messages, and today's cap and what is left of
// it; 0 days when the domain has no plan capping today.
func (w *Warmups) DaysFor(ctx context.Context, accountID int64, domain string, n int64) (days, todayCap, todayLeft int64, err error) {
	return WarmupDaysFor(ctx, w.db, w.now(), accountID, domain, n)
}

// WarmupDaysFor is Warmups.DaysFor over db at now (the checklist reads it
// from the campaign area).
func WarmupDaysFor(ctx context.Context, db *core.DB, now time.Time, accountID int64, domain string, n int64) (days, todayCap, todayLeft int64, err error) {
	p, loc, err := record.WarmupPlanOf(ctx, db.R, accountID, strings.ToLower(domain))
	if err != nil || p == nil {
		return 0, 0, 0, err
	}
	today := record.LocalDay(now, loc)
	limit, ok := p.CapOn(today)
	if !ok {
		return 0, 0, 0, nil
	}
	used, err := record.WarmupCount(ctx, db.R, accountID, p.Domain, today)
	if err != nil {
		return 0, 0, 0, err
	}
	return p.DaysFor(today, used, n), limit, max(limit-used, 0), nil
}
