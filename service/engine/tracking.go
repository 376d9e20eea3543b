package engine

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
	"herald/world"
)

// Tracking answers the public links inside sent mail: the open pixel, the
// click redirect, one-click unsubscribe, the preference page and "view in
// browser". Each link carries a signed token naming one ledger row.
type Tracking struct {
	db      *core.DB
	events  *record.Events
	baseURL string
	now     func() time.Time // the clock of the tracking windows
	rules   *delivery.MachineRules
	geo     *world.GeoIP // the country of a hit's address (nil: none)

	mu  sync.Mutex
	key []byte
}

// NewTracking answers the links and pixels of mails sent with the
// service's tracking key; opens and clicks from machineRanges count as a
// machine's. geo names the country of a hit's address for the reports
// (nil: no country is kept).
func NewTracking(db *core.DB, events *record.Events, baseURL string, now func() time.Time, machineRanges []netip.Prefix, geo *world.GeoIP) *Tracking {
	return &Tracking{db: db, events: events, baseURL: baseURL, now: now, rules: &delivery.MachineRules{Extra: machineRanges}, geo: geo}
}

func (t *Tracking) tokenKey(ctx context.Context) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.key != nil {
		return t.key, nil
	}
	k, err := (&core.Settings{DB: t.db}).TrackingKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracking: key: %w", err)
	}
	t.key = k
	return k, nil
}

// Token is the token of ledger row id (for tests and the console's
// "view in browser" of one recipient).
func (t *Tracking) Token(ctx context.Context, id int64) (string, error) {
	k, err := t.tokenKey(ctx)
	if err != nil {
		return "", err
	}
	return delivery.SignToken(k, id), nil
}

// message returns the ledger row a token names. Errors: ErrNotFound for a
// forged, damaged or outdated token (its send deleted).
func (t *Tracking) message(ctx context.Context, token string) (*models.SendMessage, error) {
	k, err := t.tokenKey(ctx)
	if err != nil {
		return nil, err
	}
	id, ok := delivery.ParseToken(k, token)
	if !ok {
		return nil, core.ErrNotFound
	}
	var m models.SendMessage
	if err := t.db.R.WithContext(ctx).Where("id = ?", id).First(&m).Error; err != nil {
		return nil, core.NotFound(err)
	}
	return &m, nil
}

// countEvery is how often one message's opens (or clicks) count in its
// send's totals: replaying one pixel or link a thousand times in a minute
// counts once (decisions.md 8). Unique counts are per message anyway.
const countEvery = time.Minute

// Hit is what the edge knows of a request to a tracking link: its method,
// user agent and client address. A zero Hit (a caller that knows nothing
// of the request) never counts as a person's.
type Hit struct {
	Method    string
	UserAgent string
	IP        netip.Addr
}

// trackKind names the columns of one kind of activity: the raw counters
// of the spec and the human ones beside them.
type trackKind struct {
	kind                                              int // send_events.kind: 1 open, 2 click
	event                                             string
	counted, first, total, unique                     string
	humanCounted, humanFirst, humanTotal, humanUnique string
	daily, humanDaily                                 string // account_daily's unique counts
}

var (
	opens = trackKind{1, record.EventOpen, "open_counted_at", "opened_at", "total_opens", "unique_opens",
		"human_open_counted_at", "human_opened_at", "human_total_opens", "human_unique_opens", record.DailyOpens, record.DailyHumanOpens}
	clicks = trackKind{2, record.EventClick, "click_counted_at", "clicked_at", "total_clicks", "unique_clicks",
		"human_click_counted_at", "human_clicked_at", "human_total_clicks", "human_unique_clicks", record.DailyClicks, record.DailyHumanClicks}
)

// Open counts an open of the message whose request is unknown: raw
// counters only (see OpenHit).
func (t *Tracking) Open(ctx context.Context, token string) error {
	return t.OpenHit(ctx, token, Hit{})
}

// OpenHit counts an open of the message: in total_opens at most once a
// minute, in unique_opens the first time; when the request is a person's
// (delivery.MachineRules), in the human counters likewise. Errors:
// ErrNotFound.
func (t *Tracking) OpenHit(ctx context.Context, token string, h Hit) error {
	m, err := t.message(ctx, token)
	if err != nil {
		return err
	}
	return t.count(ctx, m, &opens, -1, "", h)
}

// messageActivity is what the machine rules read of a message, under the
// row's lock.
type messageActivity struct {
	SentAt              *models.Timestamp
	OpenCountedAt       int64
	ClickCountedAt      int64
	OpenedAt            *models.Timestamp
	ClickedAt           *models.Timestamp
	HumanOpenedAt       int64
	HumanClickedAt      int64
	HumanOpenCountedAt  int64
	HumanClickCountedAt int64
	LastClickAt         int64
	LastClickLink       int
	HumanClickEvent     *int64
}

// count records one open or click of message m. The raw counters of the
// spec are kept exactly as before: unless one was counted less than
// countEvery ago, the message's counted-at column moves, its first-time
// column is set once, the send's total (and, the first time, unique)
// counter follows. The message's columns are read under its row's lock
// and written in one UPDATE. Beside them, a hit the machine rules take for a
// person's counts in the human counters under the same rule with its own
// columns. A click on another link within 2 s of the message's previous
// click takes back the previous click's human count (delivery.TakesBack).
// The statistics row (with its message and the judgement, for the
// contact's timeline) and the open or click event (with "machine") are
// written when either counter counts. The account's day counts the
// message's first open or click, and its first human one (taken back
// with the click). One transaction, the message's row locked: concurrent
// hits of one message are judged one after the other.
func (t *Tracking) count(ctx context.Context, m *models.SendMessage, k *trackKind, link int, target string, h Hit) error {
	now := t.now()
	nowMS, since := now.UnixMilli(), now.Add(-countEvery).UnixMilli()
	at := models.NewTimestamp(now)
	rules := t.rules
	// What the reports keep of the request: its class, not the agent or
	// the address.
	class, country := delivery.ClassifyAgent(h.UserAgent), t.geo.Country(h.IP)
	err := t.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var st messageActivity
		if err := tx.Raw("SELECT sent_at, open_counted_at, click_counted_at, opened_at, clicked_at, human_opened_at, human_clicked_at, human_open_counted_at, human_click_counted_at, last_click_at, last_click_link, human_click_event FROM send_messages WHERE id = ?"+
			t.db.SQL().ForUpdate(), m.ID).Scan(&st).Error; err != nil {
			return fmt.Errorf("tracking: lock message %d: %w", m.ID, err)
		}
		click := k.kind == 2
		hit := delivery.Hit{Click: click, Method: h.Method, UserAgent: h.UserAgent, IP: h.IP, Link: link}
		if st.SentAt != nil && !st.SentAt.IsZero() {
			hit.Delivered, hit.SinceDelivery = true, now.Sub(st.SentAt.Time)
		}
		if click && st.LastClickAt > 0 {
			hit.PrevClick, hit.SincePrevClick, hit.PrevLink = true, time.Duration(nowMS-st.LastClickAt)*time.Millisecond, st.LastClickLink
		}
		human := rules.Classify(hit) == delivery.Human
		humanCountedAt, humanFirstAt := st.HumanOpenCountedAt, st.HumanOpenedAt
		// takenBack is the time (Unix ms) of a first human click taken
		// back: its day loses it, once the sends' rows are written.
		var takenBack int64
		if click {
			humanCountedAt, humanFirstAt = st.HumanClickCountedAt, st.HumanClickedAt
			if delivery.TakesBack(hit) && st.HumanClickEvent != nil && st.HumanClickCountedAt == st.LastClickAt {
				first := st.HumanClickedAt
				if err := takeBackClick(tx, m, &st); err != nil {
					return err
				}
				if st.HumanClickedAt == 0 {
					takenBack = first
					if err := addHitHour(tx, m.SendID, 2, hoursAfter(st.SentAt, time.UnixMilli(first)), -1); err != nil {
						return err
					}
				}
				humanCountedAt, humanFirstAt = st.HumanClickCountedAt, st.HumanClickedAt
			}
		}

		// The spec's raw counters, which the machine rules leave alone: read under the
		// row's lock, so concurrent replays of one message count once.
		countedAt, firstAt := st.OpenCountedAt, st.OpenedAt
		if click {
			countedAt, firstAt = st.ClickCountedAt, st.ClickedAt
		}
		var raw, rawFirst int64
		var sets []string
		var args []any
		if countedAt <= since {
			raw = 1
			sets, args = append(sets, k.counted+" = ?"), append(args, nowMS)
			if firstAt == nil {
				rawFirst = 1
				sets, args = append(sets, k.first+" = ?"), append(args, at)
			}
		}
		var hc, hf int64
		if human && humanCountedAt <= since {
			hc = 1
			if humanFirstAt == 0 {
				hf = 1
			}
		}
		if hc > 0 {
			// A person's activity: the contact's engagement moves on.
			if err := record.Engaged(tx, m.UserID, m.Email, nowMS); err != nil {
				return err
			}
			sets, args = append(sets, k.humanCounted+" = ?"), append(args, nowMS)
			if hf > 0 {
				sets, args = append(sets, k.humanFirst+" = ?"), append(args, nowMS)
			}
		}
		if click {
			sets, args = append(sets, "last_click_at = ?", "last_click_link = ?"), append(args, nowMS, link)
		}
		// Each link counts its own clicks, once a minute per message and
		// link: a second link clicked within the message's minute counts
		// nowhere above, but its link still sees it.
		var linkRaw, linkHuman int64
		if click {
			var recent struct{ Raw, Human int64 }
			if err := tx.Raw("SELECT COALESCE(MAX(link_raw), 0) AS raw, COALESCE(MAX(link_human), 0) AS human FROM send_events WHERE message_id = ? AND at >= ? AND kind = 2 AND link = ?",
				m.ID, models.NewTimestamp(now.Add(-countEvery)), link).Scan(&recent).Error; err != nil {
				return fmt.Errorf("tracking: recent clicks of link %d of message %d: %w", link, m.ID, err)
			}
			if recent.Raw == 0 {
				linkRaw = 1
			}
			if human && recent.Human == 0 {
				linkHuman = 1
			}
		}
		if raw == 0 && hc == 0 && (linkRaw > 0 || linkHuman > 0) {
			machine := 0
			if !human {
				machine = 1
			}
			if err := tx.Exec("INSERT INTO send_events (send_id, message_id, kind, link, at, raw, human, machine, link_raw, link_human, client, device, country) VALUES (?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?, ?)",
				m.SendID, m.ID, k.kind, link, at, machine, linkRaw, linkHuman, class.Client, class.Device, country).Error; err != nil {
				return fmt.Errorf("tracking: record the link click of message %d: %w", m.ID, err)
			}
		}
		if raw > 0 || hc > 0 {
			if err := tx.Exec("UPDATE single_sends SET "+k.total+" = "+k.total+" + ?, "+k.unique+" = "+k.unique+" + ?, "+
				k.humanTotal+" = "+k.humanTotal+" + ?, "+k.humanUnique+" = "+k.humanUnique+" + ? WHERE id = ?",
				raw, rawFirst, hc, hf, m.SendID).Error; err != nil {
				return fmt.Errorf("tracking: count on send %d: %w", m.SendID, err)
			}
			machine, judged := !human, 0
			if machine {
				judged = 1
			}
			var row int64
			if err := tx.Raw("INSERT INTO send_events (send_id, message_id, kind, link, at, raw, human, machine, link_raw, link_human, client, device, country) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
				m.SendID, m.ID, k.kind, link, at, raw, hc, judged, linkRaw, linkHuman, class.Client, class.Device, country).Scan(&row).Error; err != nil {
				return fmt.Errorf("tracking: record the event of message %d: %w", m.ID, err)
			}
			// The report's class counts: a person's hit where the human
			// counters moved, a machine's where the raw ones did.
			hits, people := hc, hf
			if machine {
				hits, people = raw, 0
			}
			if err := addHitClass(tx, m.SendID, k.kind, judged, class, country, hits, people); err != nil {
				return err
			}
			if hf > 0 {
				if err := addHitHour(tx, m.SendID, k.kind, hoursAfter(st.SentAt, now), 1); err != nil {
					return err
				}
			}
			if click && hc > 0 {
				sets, args = append(sets, "human_click_event = ?"), append(args, row)
			}
			if err := t.events.Record(tx, m, k.event, record.EventExtra{URL: target, Machine: &machine}, now); err != nil {
				return err
			}
		}
		if len(sets) > 0 {
			if err := tx.Exec("UPDATE send_messages SET "+strings.Join(sets, ", ")+" WHERE id = ?", append(args, m.ID)...).Error; err != nil {
				return fmt.Errorf("tracking: count on message %d: %w", m.ID, err)
			}
		}
		// The dashboard's days: unique per message, as its rates are;
		// written last in the transaction (see addDaily). A take-back
		// lands on its click's day, which may be yesterday (2 s before
		// midnight).
		add := record.Daily{k.daily: rawFirst, k.humanDaily: hf}
		if takenBack > 0 {
			if back := time.UnixMilli(takenBack); record.DayOf(back) == record.DayOf(now) {
				add[k.humanDaily]--
			} else if err := record.AddDaily(tx, m.UserID, back, record.Daily{k.humanDaily: -1}); err != nil {
				return err
			}
		}
		return record.AddDaily(tx, m.UserID, now, add)
	})
	if err != nil {
		return fmt.Errorf("tracking: count on message %d: %w", m.ID, err)
	}
	return nil
}

// takeBackClick undoes the human count of the message's last click: it
// was a machine following every link. The send's human counters, the
// message's human columns and the click's statistics row (now a
// machine's) follow; st is updated to match. The account's day is the
// caller's (written last).
func takeBackClick(tx *gorm.DB, m *models.SendMessage, st *messageActivity) error {
	var unique int64
	if st.HumanClickedAt == st.LastClickAt {
		unique = 1
	}
	if err := tx.Exec("UPDATE single_sends SET human_total_clicks = human_total_clicks - 1, human_unique_clicks = human_unique_clicks - ? WHERE id = ?",
		unique, m.SendID).Error; err != nil {
		return fmt.Errorf("tracking: take back a click on send %d: %w", m.SendID, err)
	}
	// The click leaves its class's people for its machines.
	var ev struct{ Client, Device, Country string }
	if err := tx.Raw("UPDATE send_events SET human = 0, link_human = 0, machine = 1 WHERE id = ? RETURNING client, device, country", *st.HumanClickEvent).Scan(&ev).Error; err != nil {
		return fmt.Errorf("tracking: mark event %d a machine's: %w", *st.HumanClickEvent, err)
	}
	class := delivery.AgentClass{Client: ev.Client, Device: ev.Device}
	if err := addHitClass(tx, m.SendID, 2, 0, class, ev.Country, -1, -unique); err != nil {
		return err
	}
	if err := addHitClass(tx, m.SendID, 2, 1, class, ev.Country, 1, 0); err != nil {
		return err
	}
	if unique > 0 {
		st.HumanClickedAt = 0
	}
	st.HumanClickCountedAt, st.HumanClickEvent = 0, nil
	if err := tx.Exec("UPDATE send_messages SET human_click_counted_at = 0, human_clicked_at = ?, human_click_event = NULL WHERE id = ?",
		st.HumanClickedAt, m.ID).Error; err != nil {
		return fmt.Errorf("tracking: take back a click on message %d: %w", m.ID, err)
	}
	// The click no longer engages: the contact's engagement is read
	// again from its mails.
	if err := record.Reengaged(tx, m.UserID, m.Email); err != nil {
		return err
	}
	return nil
}

// addHitClass adds hits and people to a send's counts of one class of
// opens (kind 1) or clicks (kind 2), people's (machine 0) or machines'.
func addHitClass(tx *gorm.DB, sendID int64, kind, machine int, class delivery.AgentClass, country string, hits, people int64) error {
	if hits == 0 && people == 0 {
		return nil
	}
	if err := tx.Exec("INSERT INTO send_hit_classes (send_id, kind, machine, client, device, country, hits, people) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "+
		"ON CONFLICT (send_id, kind, machine, client, device, country) DO UPDATE SET hits = send_hit_classes.hits + excluded.hits, people = send_hit_classes.people + excluded.people",
		sendID, kind, machine, class.Client, class.Device, country, hits, people).Error; err != nil {
		return fmt.Errorf("tracking: count the class of a hit on send %d: %w", sendID, err)
	}
	return nil
}

// maxHitHour is the last hour after delivery the compare page's curves
// tell apart; later first opens and clicks count in it.
const maxHitHour = 14 * 24

// hoursAfter is the whole hours from a message's delivery to at (0 when
// its delivery time is unknown), at most maxHitHour.
func hoursAfter(sent *models.Timestamp, at time.Time) int {
	if sent == nil || sent.IsZero() || at.Before(sent.Time) {
		return 0
	}
	return min(int(at.Sub(sent.Time)/time.Hour), maxHitHour)
}

// addHitHour adds people to the messages of a send first opened (kind 1)
// or clicked (kind 2) by a person hour hours after delivery.
func addHitHour(tx *gorm.DB, sendID int64, kind, hour int, people int64) error {
	if err := tx.Exec("INSERT INTO send_hit_hours (send_id, kind, hour, people) VALUES (?, ?, ?, ?) "+
		"ON CONFLICT (send_id, kind, hour) DO UPDATE SET people = send_hit_hours.people + excluded.people",
		sendID, kind, hour, people).Error; err != nil {
		return fmt.Errorf("tracking: count the hour of a first hit on send %d: %w", sendID, err)
	}
	return nil
}

// SafeRedirect returns target when it may go into a Location header as it
// is (delivery.SafeRedirect): the edge checks again where it writes one.
func SafeRedirect(target string) (string, bool) { return delivery.SafeRedirect(target) }

// Click counts a click whose request is unknown: raw counters only (see
// ClickHit).
func (t *Tracking) Click(ctx context.Context, token string, i int) (string, error) {
	return t.ClickHit(ctx, token, i, Hit{})
}

// ClickHit counts a click on link i of the message and returns where it
// goes: only a link that was in the message. The click counts as OpenHit
// says of opens. Errors: ErrNotFound.
func (t *Tracking) ClickHit(ctx context.Context, token string, i int, h Hit) (string, error) {
	m, err := t.message(ctx, token)
	if err != nil {
		return "", err
	}
	target, err := t.linkTarget(ctx, m, i)
	if err != nil {
		return "", err
	}
	return target, t.count(ctx, m, &clicks, i, target, h)
}

// linkTarget is where link i of message m goes: only a link that was in
// the message, its placeholders filled for m's recipient. Errors:
// ErrNotFound.
func (t *Tracking) linkTarget(ctx context.Context, m *models.SendMessage, i int) (string, error) {
	var ss models.SingleSend
	if err := t.db.R.WithContext(ctx).Select("id", "links").Where("id = ?", m.SendID).First(&ss).Error; err != nil {
		return "", core.NotFound(err)
	}
	if i < 0 || i >= len(ss.Links) {
		return "", core.ErrNotFound
	}
	target := ss.Links[i]
	if strings.Contains(target, "((") {
		// A link with placeholders goes where it went in this recipient's
		// mail, its values percent-encoded where a URL may not hold them.
		target = delivery.Compile(target).Render(func(name string) string {
			switch name {
			case "email":
				return delivery.URLValue(m.Email)
			case "first_name":
				return delivery.URLValue(m.FirstName)
			case "last_name":
				return delivery.URLValue(m.LastName)
			}
			return ""
		})
	}
	// Only a target that can go into Location as it is: a link stored by
	// an older version with a control character in it is not followed.
	target, ok := delivery.SafeRedirect(target)
	if !ok {
		return "", core.ErrNotFound
	}
	return target, nil
}

// OneClick is the RFC 8058 unsubscribe: the address joins the send's
// unsubscribe group, which later sends avoid. Errors: ErrNotFound.
func (t *Tracking) OneClick(ctx context.Context, token string) error {
	m, err := t.message(ctx, token)
	if err != nil {
		return err
	}
	var group int64
	if err := t.db.R.WithContext(ctx).Model(&models.SingleSend{}).Select("unsubscribe_group_id").Where("id = ?", m.SendID).Scan(&group).Error; err != nil {
		return fmt.Errorf("tracking: unsubscribe group of send %d: %w", m.SendID, err)
	}
	if err := t.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := record.AddUnsubscriber(ctx, tx, t.events, m, m.UserID, &group, m.Email); err != nil {
			return err
		}
		return record.CountUnsubscribe(tx, m)
	}); err != nil {
		return fmt.Errorf("tracking: unsubscribe message %d: %w", m.ID, err)
	}
	return nil
}

// PreferenceGroup is one group on the preference page.
type PreferenceGroup struct {
	ID           int64
	Name         string
	Description  string
	Unsubscribed bool
}

// Preferences is what the preference page shows to one recipient.
type Preferences struct {
	Email     string
	AccountID int64  // the sending account: its organisation profile heads the page
	From      string // the send's sender's name, as the mail showed it ("" unknown)
	Groups    []PreferenceGroup
	All       bool // on the global unsubscribe list
	// Language is the contact's IETF language tag ("" none, or no contact
	// behind the message): the page speaks it (decisions.md 10).
	Language string
}

// Preferences returns the recipient's choices: the account's displayed
// groups (and the send's own group) and the global list.
func (t *Tracking) Preferences(ctx context.Context, token string) (*Preferences, error) {
	m, err := t.message(ctx, token)
	if err != nil {
		return nil, err
	}
	var send struct {
		UnsubscribeGroupID int64
		FromName           *string
	}
	if err := t.db.R.WithContext(ctx).Table("single_sends").
		Select("single_sends.unsubscribe_group_id, senders.from_name").
		Joins("LEFT JOIN senders ON senders.id = single_sends.sender_id AND senders.user_id = single_sends.user_id").
		Where("single_sends.id = ?", m.SendID).Scan(&send).Error; err != nil {
		return nil, fmt.Errorf("tracking: unsubscribe group of send %d: %w", m.SendID, err)
	}
	sendGroup := send.UnsubscribeGroupID
	var groups []models.UnsubscribeGroup
	if err := t.db.R.WithContext(ctx).Where("user_id = ? AND (is_display = 1 OR id = ?)", m.UserID, sendGroup).Order("id").Find(&groups).Error; err != nil {
		return nil, fmt.Errorf("tracking: groups of account %d: %w", m.UserID, err)
	}
	var in []struct {
		UnsubscribeGroupsID *int64
	}
	if err := t.db.R.WithContext(ctx).Model(&models.Unsubscriber{}).Select("unsubscribe_groups_id").
		Where("user_id = ? AND email_address = ?", m.UserID, m.Email).Scan(&in).Error; err != nil {
		return nil, fmt.Errorf("tracking: unsubscribes of message %d: %w", m.ID, err)
	}
	p := &Preferences{Email: m.Email, AccountID: m.UserID}
	if send.FromName != nil {
		p.From = strings.TrimSpace(*send.FromName)
	}
	if m.ContactID != nil {
		if err := t.db.R.WithContext(ctx).Model(&models.Contact{}).Select("language").
			Where("id = ? AND user_id = ?", *m.ContactID, m.UserID).Scan(&p.Language).Error; err != nil {
			return nil, fmt.Errorf("tracking: language of contact %d: %w", *m.ContactID, err)
		}
	}
	member := map[int64]bool{}
	for _, r := range in {
		if r.UnsubscribeGroupsID == nil {
			p.All = true
		} else {
			member[*r.UnsubscribeGroupsID] = true
		}
	}
	for _, g := range groups {
		p.Groups = append(p.Groups, PreferenceGroup{ID: g.ID, Name: g.GroupName, Description: g.Description, Unsubscribed: member[g.ID]})
	}
	return p, nil
}

// SavePreferences applies the recipient's choices: leave holds the ids of
// the shown groups to be unsubscribed from (the others are joined again),
// all puts the address on the global list (or takes it off). Changes
// apply to every later send at once. Errors: ErrNotFound.
func (t *Tracking) SavePreferences(ctx context.Context, token string, leave []int64, all bool) error {
	p, err := t.Preferences(ctx, token)
	if err != nil {
		return err
	}
	m, err := t.message(ctx, token)
	if err != nil {
		return err
	}
	out := map[int64]bool{}
	for _, id := range leave {
		out[id] = true
	}
	err = t.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		counted := false
		for _, g := range p.Groups {
			switch {
			case out[g.ID] && !g.Unsubscribed:
				gid := g.ID
				if err := record.AddUnsubscriber(ctx, tx, t.events, m, m.UserID, &gid, m.Email); err != nil {
					return err
				}
				counted = true
			case !out[g.ID] && g.Unsubscribed:
				if err := core.TouchLists(tx, m.UserID); err != nil {
					return err
				}
				if err := tx.Where("user_id = ? AND unsubscribe_groups_id = ? AND email_address = ?", m.UserID, g.ID, m.Email).Delete(&models.Unsubscriber{}).Error; err != nil {
					return fmt.Errorf("tracking: resubscribe message %d to group %d: %w", m.ID, g.ID, err)
				}
			}
		}
		switch {
		case all && !p.All:
			if err := record.AddUnsubscriber(ctx, tx, t.events, m, m.UserID, nil, m.Email); err != nil {
				return err
			}
			counted = true
		case !all && p.All:
			if err := core.TouchLists(tx, m.UserID); err != nil {
				return err
			}
			if err := tx.Where("user_id = ? AND unsubscribe_groups_id IS NULL AND email_address = ?", m.UserID, m.Email).Delete(&models.Unsubscriber{}).Error; err != nil {
				return fmt.Errorf("tracking: resubscribe message %d: %w", m.ID, err)
			}
		}
		if counted {
			return record.CountUnsubscribe(tx, m)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tracking: save preferences of message %d: %w", m.ID, err)
	}
	return nil
}

// View renders the message as the recipient got it (its HTML), for the
// "view in browser" page. Errors: ErrNotFound.
func (t *Tracking) View(ctx context.Context, token string) (subject, html string, err error) {
	m, err := t.message(ctx, token)
	if err != nil {
		return "", "", err
	}
	var ss models.SingleSend
	if err := t.db.R.WithContext(ctx).Where("id = ?", m.SendID).First(&ss).Error; err != nil {
		return "", "", core.NotFound(err)
	}
	c, err := compileSend(ctx, t.db, t.baseURL, &ss)
	if err != nil {
		return "", "", fmt.Errorf("tracking: compile send %d: %w", ss.ID, err)
	}
	var ct *models.Contact
	if m.ContactID != nil {
		var cs []models.Contact
		if err := record.ScanContacts(t.db.R.WithContext(ctx).Model(&models.Contact{}).Select(record.ContactColumns(t.db.SQL())).Where("id = ?", *m.ContactID), &cs); err != nil {
			return "", "", fmt.Errorf("tracking: contact of message %d: %w", m.ID, err)
		}
		if len(cs) == 1 {
			ct = &cs[0]
		}
	}
	k, err := t.tokenKey(ctx)
	if err != nil {
		return "", "", err
	}
	row := []claimedRow{{ID: m.ID, ContactID: m.ContactID, Email: m.Email, FirstName: m.FirstName, LastName: m.LastName, Variant: m.Variant}}
	if c.needsData {
		if err := loadData(ctx, t.db, *c.send.AutomationID, row); err != nil {
			return "", "", fmt.Errorf("tracking: render message %d: %w", m.ID, err)
		}
	}
	msg, err := c.message(k, row[0], ct)
	if err != nil {
		return "", "", fmt.Errorf("tracking: render message %d: %w", m.ID, err)
	}
	return msg.Subject, msg.HTML, nil
}
