package service

import (
	"context"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
)

// Tracking answers the public links inside sent mail: the open pixel, the
// click redirect, one-click unsubscribe, the preference page and "view in
// browser". Each link carries a signed token naming one ledger row.
type Tracking struct {
	db      *DB
	events  *Events
	baseURL string
	now     func() time.Time // the clock of the tracking windows

	mu  sync.Mutex
	key []byte
}

func (t *Tracking) tokenKey(ctx context.Context) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.key != nil {
		return t.key, nil
	}
	k, err := (&Settings{db: t.db}).TrackingKey(ctx)
	if err != nil {
		return nil, err
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
		return nil, ErrNotFound
	}
	var m models.SendMessage
	if err := t.db.R.WithContext(ctx).Where("id = ?", id).First(&m).Error; err != nil {
		return nil, notFound(err)
	}
	return &m, nil
}

// countEvery is how often one message's opens (or clicks) count in its
// send's totals: replaying one pixel or link a thousand times in a minute
// counts once (decisions.md 8). Unique counts are per message anyway.
const countEvery = time.Minute

// Open counts an open of the message: in total_opens at most once a
// minute, in unique_opens the first time.
func (t *Tracking) Open(ctx context.Context, token string) error {
	m, err := t.message(ctx, token)
	if err != nil {
		return err
	}
	return t.count(ctx, m, "open_counted_at", "opened_at", "total_opens", "unique_opens", 1, -1, "")
}

// count records one open or click of message m, unless one was counted
// less than countEvery ago: the message's counted-at column moves, its
// first-time column is set once, the send's total (and, the first time,
// unique) counter and the statistics' event row follow, all in one
// transaction. Concurrent replays race on the conditional UPDATE: one
// counts. The open or click event (target: the click's link) is written
// with them, as often as the totals count.
func (t *Tracking) count(ctx context.Context, m *models.SendMessage, countedCol, firstCol, totalCol, uniqueCol string, kind, link int, target string) error {
	now := t.clock()
	at := models.NewTimestamp(now)
	return t.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Exec("UPDATE send_messages SET "+countedCol+" = ? WHERE id = ? AND "+countedCol+" <= ?",
			now.UnixMilli(), m.ID, now.Add(-countEvery).UnixMilli())
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		first := tx.Exec("UPDATE send_messages SET "+firstCol+" = ? WHERE id = ? AND "+firstCol+" IS NULL", at, m.ID)
		if first.Error != nil {
			return first.Error
		}
		if err := tx.Exec("UPDATE single_sends SET "+totalCol+" = "+totalCol+" + 1, "+uniqueCol+" = "+uniqueCol+" + ? WHERE id = ?",
			first.RowsAffected, m.SendID).Error; err != nil {
			return err
		}
		if err := tx.Exec("INSERT INTO send_events (send_id, kind, link, at) VALUES (?, ?, ?, ?)", m.SendID, kind, link, at).Error; err != nil {
			return err
		}
		ev, col := EventOpen, dailyOpens
		if kind == 2 {
			ev, col = EventClick, dailyClicks
		}
		if err := t.events.record(tx, m, ev, eventExtra{URL: target}, now); err != nil {
			return err
		}
		// Unique per message, as the dashboard's rates are.
		return addDaily(tx, m.UserID, now, daily{col: first.RowsAffected})
	})
}

func (t *Tracking) clock() time.Time {
	if t.now != nil {
		return t.now()
	}
	return models.Now()
}

// SafeRedirect returns target when it may go into a Location header as it
// is (delivery.SafeRedirect): the edge checks again where it writes one.
func SafeRedirect(target string) (string, bool) { return delivery.SafeRedirect(target) }

// Click counts a click on link i of the message and returns where it
// goes: only a link that was in the message. Errors: ErrNotFound.
func (t *Tracking) Click(ctx context.Context, token string, i int) (string, error) {
	m, err := t.message(ctx, token)
	if err != nil {
		return "", err
	}
	var ss models.SingleSend
	if err := t.db.R.WithContext(ctx).Select("id", "links").Where("id = ?", m.SendID).First(&ss).Error; err != nil {
		return "", notFound(err)
	}
	if i < 0 || i >= len(ss.Links) {
		return "", ErrNotFound
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
		return "", ErrNotFound
	}
	return target, t.count(ctx, m, "click_counted_at", "clicked_at", "total_clicks", "unique_clicks", 2, i, target)
}

// countUnsubscribe counts the message's unsubscribe once on its send.
func countUnsubscribe(tx *gorm.DB, m *models.SendMessage) error {
	now := models.Now()
	res := tx.Exec("UPDATE send_messages SET unsubscribed_at = ? WHERE id = ? AND unsubscribed_at IS NULL", now, m.ID)
	if res.Error != nil || res.RowsAffected == 0 {
		return res.Error
	}
	if err := tx.Exec("UPDATE single_sends SET unsubscribes = unsubscribes + 1 WHERE id = ?", m.SendID).Error; err != nil {
		return err
	}
	return addDaily(tx, m.UserID, now, daily{dailyUnsubscribes: 1})
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
		return err
	}
	return t.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := addUnsubscriber(ctx, tx, t.events, m, m.UserID, &group, m.Email); err != nil {
			return err
		}
		return countUnsubscribe(tx, m)
	})
}

// addUnsubscriber adds one address to a group (or the global list when
// group is nil) inside tx; already there is fine. A new one writes the
// unsubscribe (group_unsubscribe) event about m, when m is given.
func addUnsubscriber(ctx context.Context, tx *gorm.DB, events *Events, m *models.SendMessage, accountID int64, group *int64, email string) error {
	if err := touchLists(tx, accountID); err != nil {
		return err
	}
	now := models.NewTimestamp(models.Now())
	row := models.Unsubscriber{UserID: accountID, UnsubscribeGroupsID: group, EmailAddress: email, CreatedAt: now, UpdatedAt: now}
	var n int64
	q := tx.Model(&models.Unsubscriber{}).Where("user_id = ? AND email_address = ?", accountID, email)
	if group == nil {
		q = q.Where("unsubscribe_groups_id IS NULL")
	} else {
		q = q.Where("unsubscribe_groups_id = ?", *group)
	}
	if err := q.Count(&n).Error; err != nil || n > 0 {
		return err
	}
	if err := tx.WithContext(ctx).Create(&row).Error; err != nil {
		return err
	}
	if m == nil {
		return nil
	}
	if group == nil {
		return events.record(tx, m, EventUnsubscribe, eventExtra{}, now.Time)
	}
	return events.record(tx, m, EventGroupUnsubscribe, eventExtra{GroupID: group}, now.Time)
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
	Email  string
	Groups []PreferenceGroup
	All    bool // on the global unsubscribe list
}

// Preferences returns the recipient's choices: the account's displayed
// groups (and the send's own group) and the global list.
func (t *Tracking) Preferences(ctx context.Context, token string) (*Preferences, error) {
	m, err := t.message(ctx, token)
	if err != nil {
		return nil, err
	}
	var sendGroup int64
	if err := t.db.R.WithContext(ctx).Model(&models.SingleSend{}).Select("unsubscribe_group_id").Where("id = ?", m.SendID).Scan(&sendGroup).Error; err != nil {
		return nil, err
	}
	var groups []models.UnsubscribeGroup
	if err := t.db.R.WithContext(ctx).Where("user_id = ? AND (is_display = 1 OR id = ?)", m.UserID, sendGroup).Order("id").Find(&groups).Error; err != nil {
		return nil, err
	}
	var in []struct {
		UnsubscribeGroupsID *int64
	}
	if err := t.db.R.WithContext(ctx).Model(&models.Unsubscriber{}).Select("unsubscribe_groups_id").
		Where("user_id = ? AND email_address = ?", m.UserID, m.Email).Scan(&in).Error; err != nil {
		return nil, err
	}
	p := &Preferences{Email: m.Email}
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
	return t.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		counted := false
		for _, g := range p.Groups {
			switch {
			case out[g.ID] && !g.Unsubscribed:
				gid := g.ID
				if err := addUnsubscriber(ctx, tx, t.events, m, m.UserID, &gid, m.Email); err != nil {
					return err
				}
				counted = true
			case !out[g.ID] && g.Unsubscribed:
				if err := touchLists(tx, m.UserID); err != nil {
					return err
				}
				if err := tx.Where("user_id = ? AND unsubscribe_groups_id = ? AND email_address = ?", m.UserID, g.ID, m.Email).Delete(&models.Unsubscriber{}).Error; err != nil {
					return err
				}
			}
		}
		switch {
		case all && !p.All:
			if err := addUnsubscriber(ctx, tx, t.events, m, m.UserID, nil, m.Email); err != nil {
				return err
			}
			counted = true
		case !all && p.All:
			if err := touchLists(tx, m.UserID); err != nil {
				return err
			}
			if err := tx.Where("user_id = ? AND unsubscribe_groups_id IS NULL AND email_address = ?", m.UserID, m.Email).Delete(&models.Unsubscriber{}).Error; err != nil {
				return err
			}
		}
		if counted {
			return countUnsubscribe(tx, m)
		}
		return nil
	})
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
		return "", "", notFound(err)
	}
	c, err := compileSend(ctx, t.db, t.baseURL, &ss)
	if err != nil {
		return "", "", err
	}
	var ct *models.Contact
	if m.ContactID != nil {
		var cs []models.Contact
		if err := scanContacts(t.db.R.WithContext(ctx).Model(&models.Contact{}).Select(contactColumns(t.db.dialect())).Where("id = ?", *m.ContactID), &cs); err != nil {
			return "", "", err
		}
		if len(cs) == 1 {
			ct = &cs[0]
		}
	}
	k, err := t.tokenKey(ctx)
	if err != nil {
		return "", "", err
	}
	msg, err := c.message(k, claimedRow{ID: m.ID, ContactID: m.ContactID, Email: m.Email, FirstName: m.FirstName, LastName: m.LastName}, ct)
	if err != nil {
		return "", "", err
	}
	return msg.Subject, msg.HTML, nil
}
