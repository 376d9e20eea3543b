package record

import (
	"fmt"
	"herald/service/core"
	"time"

	"gorm.io/gorm"
)

// The account's figures per UTC day (table account_daily) are kept where
// the counters they mirror change, in the same transaction: a delivery
// in Ledger.Record, an open or click (raw and human) in Tracking.count, an unsubscribe in
// countUnsubscribe, a bounce or complaint in Feedback, a contact added
// or removed in Contacts, ContactTypes and the import runner. So they
// are exact (what rolls back is not counted) and the dashboard reads
// about thirty rows, never the ledger or the contacts.
//
// A periodic roll-up from the ledger was the other way; it was not
// taken: a delivery changes a ledger row in place (no id to resume from),
// and send_messages has no index on sent_at, so a roll-up would scan.
//
// Lock order: an account's day row is written last in a transaction,
// after the sends' rows (PostgreSQL: two group commits that touch the
// same sends and the same day wait on each other, never in a cycle).

// Columns of account_daily.
const (
	DailySent            = "sent"
	DailyDelivered       = "delivered"
	DailyBounces         = "bounces"
	DailyOpens           = "opens"
	DailyClicks          = "clicks"
	DailyHumanOpens      = "human_opens"  // first opened by a person (delivery.MachineRules)
	DailyHumanClicks     = "human_clicks" // first clicked by a person
	dailyUnsubscribes    = "unsubscribes"
	DailyComplaints      = "complaints"
	DailyContactsAdded   = "contacts_added"
	DailyContactsRemoved = "contacts_removed"
)

// DayOf is the day number of t: days since 1970-01-01, UTC.
func DayOf(t time.Time) int64 {
	s := t.UTC().Unix()
	d := s / 86400
	if s < 0 && s%86400 != 0 {
		d--
	}
	return d
}

// DayTime is the start of day number d, UTC.
func DayTime(d int64) time.Time { return time.Unix(d*86400, 0).UTC() }

// Daily is what to add to one account's day: column → amount.
type Daily map[string]int64

// AddDaily adds figures to the account's day of at inside tx. Zero
// amounts are left out; nothing to add writes nothing.
func AddDaily(tx *gorm.DB, accountID int64, at time.Time, add Daily) error {
	if accountID == 0 {
		return nil
	}
	cols := make([]string, 0, len(add))
	for _, c := range []string{DailySent, DailyDelivered, DailyBounces, DailyOpens, DailyClicks, DailyHumanOpens, DailyHumanClicks,
		dailyUnsubscribes, DailyComplaints, DailyContactsAdded, DailyContactsRemoved} {
		if add[c] != 0 {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	args := make([]any, 0, 2+len(cols))
	args = append(args, accountID, DayOf(at))
	for _, c := range cols {
		args = append(args, add[c])
	}
	d := core.Dialect{Postgres: tx.Dialector.Name() == "postgres"}
	if err := tx.Exec(d.AddDaily(cols), args...).Error; err != nil {
		return fmt.Errorf("daily counts: add: %w", err)
	}
	return nil
}
