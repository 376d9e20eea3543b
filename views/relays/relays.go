// Package relays is the console's Relays page: how mail leaves herald
// when HERALD_SMTP_URL names several relays.
package relays

import (
	"fmt"
	"time"
)

// URL is the page's address.
const URL = "/relays"

// Relay is one relay as the page shows it.
type Relay struct {
	Name        string
	Server      string // its URL without the password
	Weight      int
	MaxConns    int
	Limits      string // "14/s, 50000/d"; "" none
	FromDomains []string
	Paused      bool
	PausedUntil time.Time // zero: awaiting its probe
	LastError   string
	LastErrorAt time.Time
	Today       int64
	DayQuota    int // 0: none
	LastHour    int64
}

// Page is the whole page: Relays when there are several, else Mail (how
// the one relay or the outbox takes the mail).
type Page struct {
	Relays []Relay
	Mail   string // "" the outbox
	Now    time.Time
}

// quota is the day's use against its quota.
func (r Relay) quota() string {
	if r.DayQuota == 0 {
		return fmt.Sprintf("%d (no daily quota)", r.Today)
	}
	return fmt.Sprintf("%d of %d (%d%%)", r.Today, r.DayQuota, r.Today*100/int64(r.DayQuota))
}

// quotaPercent is how full the day is, 0 to 100.
func (r Relay) quotaPercent() int {
	if r.DayQuota == 0 {
		return 0
	}
	return int(min(r.Today*100/int64(r.DayQuota), 100))
}

// pause says until when the relay rests.
func (r Relay) pause(now time.Time) string {
	if r.PausedUntil.IsZero() || !now.Before(r.PausedUntil) {
		return "Paused: tried again with its next message"
	}
	return "Paused until " + r.PausedUntil.UTC().Format("15:04:05") + " UTC (" + r.PausedUntil.Sub(now).Round(time.Second).String() + ")"
}

func stamp(t time.Time) string { return t.UTC().Format("Jan 2, 15:04:05") + " UTC" }
