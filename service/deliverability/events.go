package deliverability

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// maxEventWebhooks is how many endpoints one account may keep.
const maxEventWebhooks = 10

// EventWebhooks keeps an account's events endpoints (decisions.md 7):
// saved, changed, deleted and listed only by their account; their recent
// deliveries, a resend and a test ping.
type EventWebhooks struct {
	db     *core.DB
	events *record.Events
	poster *delivery.EventPoster
	now    func() time.Time
}

// EventWebhookInput is the body of a save or an update. On update only
// the parts given (the …Set flags) change.
type EventWebhookInput struct {
	URL        string
	URLSet     bool
	Events     []string
	EventsSet  bool
	Enabled    string
	EnabledSet bool
}

// checkWebhookURL records the problems of an endpoint address: required,
// absolute http(s) with a host, at most 2,048 characters, no control
// characters or spaces; with publicOnly, not an address written out that
// delivery.PublicAddr refuses (a name is checked when posting).
func checkWebhookURL(p core.Problems, v string, publicOnly bool) string {
	v = strings.TrimSpace(v)
	if !p.Required("url", v) {
		return v
	}
	switch {
	case !utf8.ValidString(v) || core.HasControl(v):
		p.AddReason("url", core.ReasonLineBreak, core.MsgLineBreak("url"))
	case utf8.RuneCountInString(v) > record.MaxWebhookURL:
		p.AddReason("url", core.ReasonMax, core.MsgMax("url", record.MaxWebhookURL))
	default:
		u, err := url.Parse(v)
		if err != nil || strings.ContainsAny(v, " \t") || u.Host == "" || u.Hostname() == "" {
			p.Add("url", "The url must be a valid URL.")
		} else if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
			p.Add("url", "The url must start with http:// or https://.")
		} else if publicOnly && !publicHost(u.Hostname()) {
			p.Add("url", "The url must be a public address.")
		}
	}
	return v
}

// checkEventNames returns the chosen kinds, each once, in the contract's
// order; none chosen is all nine.
func checkEventNames(p core.Problems, names []string) models.EventKinds {
	want := map[string]bool{}
	var bad []string
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		if !slices.Contains(record.EventNames, n) {
			if len(bad) < 5 && utf8.ValidString(n) && !core.HasControl(n) && len(n) <= 40 {
				bad = append(bad, n)
			} else if len(bad) < 5 {
				bad = append(bad, "?")
			}
			continue
		}
		want[n] = true
	}
	if len(bad) > 0 || len(names) > 2*len(record.EventNames) {
		p.AddReason("events", core.ReasonInvalidChoice, "The selected events are invalid ("+strings.Join(bad, ", ")+"); each must be one of: "+strings.Join(record.EventNames, ", ")+".")
		return nil
	}
	out := models.EventKinds{}
	for _, n := range record.EventNames {
		if want[n] || len(want) == 0 {
			out = append(out, n)
		}
	}
	return out
}

// Each calls fn for every endpoint of the account (secrets left out).
func (w *EventWebhooks) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.EventWebhook) error) error {
	return core.Each(ctx, f, "", func() *gorm.DB {
		q := w.db.R.Model(&models.EventWebhook{}).Where("user_id = ?", accountID)
		if f.Search != "" {
			q = q.Where(`LOWER(url) LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search))))
		}
		return q
	}, func(r *models.EventWebhook) int64 { return r.ID }, func(r *models.EventWebhook) error {
		r.Secret = ""
		return fn(r)
	})
}

// List returns the account's endpoints, oldest first (secrets left out).
func (w *EventWebhooks) List(ctx context.Context, accountID int64) ([]models.EventWebhook, error) {
	var out []models.EventWebhook
	err := w.Each(ctx, accountID, core.ListFilter{}, func(r *models.EventWebhook) error { out = append(out, *r); return nil })
	return out, err
}

// Get returns one endpoint of the account, its secret left out. Errors:
// ErrNotFound (another account's endpoint too).
func (w *EventWebhooks) Get(ctx context.Context, accountID, id int64) (*models.EventWebhook, error) {
	var r models.EventWebhook
	if err := w.db.R.WithContext(ctx).Where("user_id = ? AND id = ?", accountID, id).First(&r).Error; err != nil {
		return nil, core.NotFound(err)
	}
	r.Secret = ""
	return &r, nil
}

// Save adds an endpoint and returns it with its secret (32 random bytes,
// hex): the one answer that shows it. Errors: validation (also beyond
// maxEventWebhooks endpoints).
func (w *EventWebhooks) Save(ctx context.Context, accountID int64, in EventWebhookInput) (*models.EventWebhook, error) {
	p := core.Problems{}
	u := checkWebhookURL(p, in.URL, w.poster.PublicOnly)
	kinds := checkEventNames(p, in.Events)
	enabled := 1
	if strings.TrimSpace(in.Enabled) != "" {
		enabled = p.Flag("enabled", in.Enabled)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	now := models.NewTimestamp(w.now())
	r := &models.EventWebhook{UserID: accountID, URL: u, Events: kinds, Enabled: enabled, Secret: core.RandomID(32), CreatedAt: now, UpdatedAt: now}
	err := w.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The account row's lock: two saves at once count each other.
		if err := core.TouchLists(tx, accountID); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&models.EventWebhook{}).Where("user_id = ?", accountID).Count(&n).Error; err != nil {
			return fmt.Errorf("event webhooks: count the endpoints of account %d: %w", accountID, err)
		}
		if n >= maxEventWebhooks {
			return core.Invalid("url", fmt.Sprintf("An account may have at most %d event webhooks.", maxEventWebhooks))
		}
		return tx.Create(r).Error
	})
	if err != nil {
		return nil, fmt.Errorf("event webhooks: save: %w", err)
	}
	w.events.Changed()
	return r, nil
}

// Update changes the parts of an endpoint the input gives. id 0 is the
// missing `id`. Errors: validation, ErrNotFound.
func (w *EventWebhooks) Update(ctx context.Context, accountID, id int64, in EventWebhookInput) (*models.EventWebhook, error) {
	p := core.Problems{}
	if id == 0 {
		p.AddReason("id", core.ReasonRequired, core.MsgRequired("id"))
	}
	set := map[string]any{}
	if in.URLSet {
		set["url"] = checkWebhookURL(p, in.URL, w.poster.PublicOnly)
	}
	if in.EventsSet {
		set["events"] = checkEventNames(p, in.Events)
	}
	if in.EnabledSet {
		set["enabled"] = p.Flag("enabled", in.Enabled)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	set["updated_at"] = models.NewTimestamp(w.now())
	res := w.db.W.WithContext(ctx).Model(&models.EventWebhook{}).Where("user_id = ? AND id = ?", accountID, id).Updates(set)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, core.ErrNotFound
	}
	w.events.Changed()
	return w.Get(ctx, accountID, id)
}

// Delete removes an endpoint with its queue and deliveries. Errors:
// ErrNotFound.
func (w *EventWebhooks) Delete(ctx context.Context, accountID, id int64) error {
	err := w.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("user_id = ? AND id = ?", accountID, id).Delete(&models.EventWebhook{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return core.ErrNotFound
		}
		// SQLite enforces the cascade only with foreign keys on: say it.
		if err := tx.Where("webhook_id = ?", id).Delete(&models.Event{}).Error; err != nil {
			return fmt.Errorf("event webhooks: drop the events of endpoint %d: %w", id, err)
		}
		return tx.Where("webhook_id = ?", id).Delete(&models.EventDelivery{}).Error
	})
	if err != nil {
		return fmt.Errorf("event webhooks: delete endpoint %d: %w", id, err)
	}
	w.events.Changed()
	return nil
}

// recentDeliveries is how many deliveries the console shows per endpoint.
const recentDeliveries = 50

// Deliveries returns the endpoint's latest POSTs, newest first. Errors:
// ErrNotFound.
func (w *EventWebhooks) Deliveries(ctx context.Context, accountID, id int64) ([]models.EventDelivery, error) {
	if _, err := w.Get(ctx, accountID, id); err != nil {
		return nil, err
	}
	var out []models.EventDelivery
	if err := w.db.R.WithContext(ctx).Where("user_id = ? AND webhook_id = ?", accountID, id).Order("id DESC").Limit(recentDeliveries).Find(&out).Error; err != nil {
		return out, fmt.Errorf("event webhooks: deliveries of endpoint %d: %w", id, err)
	}
	return out, nil
}

// Resend queues the events of one delivery again (delivered or given up
// alike): the dispatcher posts them on its next pass. It returns how many
// were queued. Errors: ErrNotFound.
func (w *EventWebhooks) Resend(ctx context.Context, accountID, deliveryID int64) (int64, error) {
	var d models.EventDelivery
	if err := w.db.R.WithContext(ctx).Where("user_id = ? AND id = ?", accountID, deliveryID).First(&d).Error; err != nil {
		return 0, core.NotFound(err)
	}
	if d.FirstEventID == nil || d.LastEventID == nil {
		return 0, nil // a test ping carries no events
	}
	// created_at moves too: a resent event gets its own 24 hours of retries.
	var n int64
	err := w.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Exec(eventSQL(`UPDATE events SET state = {pending}, next_at = 0, worker = NULL, attempts = 0, created_at = ?
			WHERE webhook_id = ? AND user_id = ? AND id BETWEEN ? AND ?`), models.NewTimestamp(w.now()), d.WebhookID, accountID, *d.FirstEventID, *d.LastEventID)
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		// The dispatcher's cursor goes back before them.
		return tx.Exec("UPDATE event_webhooks SET cursor_id = ? WHERE id = ? AND cursor_id >= ?", *d.FirstEventID-1, d.WebhookID, *d.FirstEventID).Error
	})
	if err != nil {
		return n, fmt.Errorf("event webhooks: resend: %w", err)
	}
	return n, nil
}

// Ping POSTs one signed test event ("ping") to the endpoint at once and
// records the attempt among its deliveries. Errors: ErrNotFound.
func (w *EventWebhooks) Ping(ctx context.Context, accountID, id int64) (*models.EventDelivery, error) {
	var r models.EventWebhook
	if err := w.db.R.WithContext(ctx).Where("user_id = ? AND id = ?", accountID, id).First(&r).Error; err != nil {
		return nil, core.NotFound(err)
	}
	now := w.now()
	ev := delivery.Event{Event: "ping", EventID: "ping-" + core.RandomID(8), Timestamp: now.Unix()}
	a := w.poster.Post(ctx, r.URL, r.Secret, []delivery.Event{ev}, now)
	d := &models.EventDelivery{WebhookID: r.ID, UserID: accountID, StatusCode: a.StatusCode, Error: core.Truncate(a.Err, 500),
		LatencyMS: a.Latency.Milliseconds(), CreatedAt: models.NewTimestamp(now)}
	if err := w.db.W.WithContext(ctx).Create(d).Error; err != nil {
		return nil, fmt.Errorf("event webhooks: save a ping: %w", err)
	}
	return d, nil
}

// publicHost reports whether host may be public: a name (but localhost),
// or a public address.
func publicHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return false
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err != nil || delivery.PublicAddr(ip)
}
