package campaign

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"herald/models"
	"herald/service/core"
)

// ClassCount is a send's opens and clicks of one class (a mail client's
// family, a kind of device or a country).
type ClassCount struct {
	Key string // delivery.Client*, delivery.Device* or an ISO 3166-1 alpha-2 code ("" unknown)
	// Opened, Clicked: messages first opened or clicked by a person in
	// the class. For machines: their counted opens and clicks.
	Opened, Clicked int64
}

// Audience answers who opened and clicked a send, where and on what: the
// people's opens and clicks by mail client, device and country, and the
// machines' (privacy proxies, link scanners) apart.
type Audience struct {
	Clients, Devices, Countries []ClassCount // people's, most opened first
	Machines                    []ClassCount // machines', by the mail service they name
	MachineOpens, MachineClicks int64
	// CountriesKnown: an IP-to-country database names countries; false,
	// Countries holds only "" (unknown).
	CountriesKnown bool
}

// Audience reads a send's counts by class (kept as each open and click is
// counted, so a send of any size reads a few rows). ss is a send of the
// caller's account (Get). Sends counted before the classes were kept
// have none.
func (s *SingleSends) Audience(ctx context.Context, ss *models.SingleSend) (*Audience, error) {
	var rows []struct {
		Kind, Machine           int
		Client, Device, Country string
		Hits, People            int64
	}
	if err := s.db.R.WithContext(ctx).Raw("SELECT kind, machine, client, device, country, hits, people FROM send_hit_classes WHERE send_id = ?", ss.ID).
		Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("single sends: report classes of send %d: %w", ss.ID, err)
	}
	a := &Audience{CountriesKnown: s.countries}
	clients, devices, countries, machines := map[string]*ClassCount{}, map[string]*ClassCount{}, map[string]*ClassCount{}, map[string]*ClassCount{}
	add := func(m map[string]*ClassCount, key string, kind int, n int64) {
		c := m[key]
		if c == nil {
			c = &ClassCount{Key: key}
			m[key] = c
		}
		if kind == 1 {
			c.Opened += n
		} else {
			c.Clicked += n
		}
	}
	for _, r := range rows {
		if r.Machine == 1 {
			add(machines, r.Client, r.Kind, r.Hits)
			if r.Kind == 1 {
				a.MachineOpens += r.Hits
			} else {
				a.MachineClicks += r.Hits
			}
			continue
		}
		add(clients, r.Client, r.Kind, r.People)
		add(devices, r.Device, r.Kind, r.People)
		add(countries, r.Country, r.Kind, r.People)
	}
	a.Clients, a.Devices, a.Countries, a.Machines = sortedClasses(clients), sortedClasses(devices), sortedClasses(countries), sortedClasses(machines)
	return a, nil
}

// sortedClasses lists the classes that counted anything, most opened
// first, then most clicked, then by key.
func sortedClasses(m map[string]*ClassCount) []ClassCount {
	out := make([]ClassCount, 0, len(m))
	for _, c := range m {
		if c.Opened != 0 || c.Clicked != 0 {
			out = append(out, *c)
		}
	}
	slices.SortFunc(out, func(a, b ClassCount) int {
		return cmp.Or(cmp.Compare(b.Opened, a.Opened), cmp.Compare(b.Clicked, a.Clicked), cmp.Compare(a.Key, b.Key))
	})
	return out
}

// CompareMax is how many sends the compare page sets side by side.
const CompareMax = 4

// Compared is one send on the compare page: its figures (the send's row)
// and, by the hour after delivery, the messages first opened and clicked
// by people (cumulative).
type Compared struct {
	Send *models.SingleSend
	// OpenedBy[h], ClickedBy[h]: messages opened (clicked) by a person
	// within h+1 hours of their delivery; the last holds every later one.
	OpenedBy, ClickedBy []int64
}

// CompareHours is how many hours the compare curves cover: two weeks.
const CompareHours = 14*24 + 1

// Compare reads 2 to CompareMax completed sends of the account, in the
// order given (a utr named twice counts once). Errors: ErrNotFound for a
// send that is not the account's; Validation ("sends") for fewer than 2,
// more than CompareMax, or a send not completed.
func (s *SingleSends) Compare(ctx context.Context, accountID int64, utrs []string) ([]Compared, error) {
	seen := map[string]bool{}
	var out []Compared
	for _, u := range utrs {
		if seen[u] {
			continue
		}
		seen[u] = true
		ss, err := s.Get(ctx, accountID, u)
		if err != nil {
			return nil, err
		}
		if ss.Status != models.SendCompleted {
			return nil, core.Invalid("sends", fmt.Sprintf("%q has not completed: only completed sends can be compared.", ss.SingleSendName))
		}
		out = append(out, Compared{Send: ss})
	}
	if len(out) < 2 || len(out) > CompareMax {
		return nil, core.Invalid("sends", fmt.Sprintf("Choose from 2 to %d completed sends to compare.", CompareMax))
	}
	for i := range out {
		var err error
		if out[i].OpenedBy, out[i].ClickedBy, err = s.Hours(ctx, out[i].Send); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Hours reads a send's messages first opened and first clicked by a
// person within h+1 hours of their delivery, for h from 0 to
// CompareHours-1 (cumulative; the last holds every later one). ss is a
// send of the caller's account (Get). Counted since the hours were kept.
func (s *SingleSends) Hours(ctx context.Context, ss *models.SingleSend) (opened, clicked []int64, err error) {
	var rows []struct {
		Kind, Hour int
		People     int64
	}
	if err := s.db.R.WithContext(ctx).Raw("SELECT kind, hour, people FROM send_hit_hours WHERE send_id = ?", ss.ID).Scan(&rows).Error; err != nil {
		return nil, nil, fmt.Errorf("single sends: hours of send %d: %w", ss.ID, err)
	}
	opened, clicked = make([]int64, CompareHours), make([]int64, CompareHours)
	for _, r := range rows {
		if r.Hour < 0 || r.Hour >= CompareHours {
			continue
		}
		if r.Kind == 1 {
			opened[r.Hour] += r.People
		} else {
			clicked[r.Hour] += r.People
		}
	}
	for h := 1; h < CompareHours; h++ {
		opened[h] += opened[h-1]
		clicked[h] += clicked[h-1]
	}
	return opened, clicked, nil
}

// Completed lists the account's latest completed sends (at most limit),
// newest first: the compare page's choices.
func (s *SingleSends) Completed(ctx context.Context, accountID int64, limit int) ([]models.SingleSend, error) {
	var out []models.SingleSend
	if err := accountSends(s.db.R.WithContext(ctx).Model(&models.SingleSend{}), accountID).
		Select("id", "utr", "single_send_name", "subject", "sent_at", "delivered", "triggered").
		Where("status = ?", models.SendCompleted).Order("sent_at DESC, id DESC").Limit(limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("single sends: completed sends of account %d: %w", accountID, err)
	}
	return out, nil
}
