package record

// A contact's engagement: when a person last opened or clicked a mail to
// its address (contacts.last_engaged_at, Unix ms, 0 never), and the level
// read from it.

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Engaged moves the last engagement of the account's contacts of address
// email forward to at (Unix ms), inside the transaction that counts a
// person's open or click. A contact whose time is later already keeps it.
func Engaged(tx *gorm.DB, accountID int64, email string, at int64) error {
	if err := tx.Exec("UPDATE contacts SET last_engaged_at = ? WHERE user_id = ? AND email = ? AND last_engaged_at < ?",
		at, accountID, email, at).Error; err != nil {
		return fmt.Errorf("engagement: contacts of account %d: %w", accountID, err)
	}
	return nil
}

// Reengaged sets the last engagement of the account's contacts of address
// email again from the ledger (each message's latest human open and
// click), after a human click was taken back as a machine's: the
// address's mails along the ledger's (email, id) index.
func Reengaged(tx *gorm.DB, accountID int64, email string) error {
	err := tx.Exec(`UPDATE contacts SET last_engaged_at = COALESCE((SELECT MAX(at) FROM (
			SELECT MAX(human_open_counted_at) AS at FROM send_messages WHERE email = ? AND user_id = ?
			UNION ALL SELECT MAX(human_click_counted_at) FROM send_messages WHERE email = ? AND user_id = ?) AS e), 0)
		WHERE user_id = ? AND email = ?`, email, accountID, email, accountID, accountID, email).Error
	if err != nil {
		return fmt.Errorf("engagement: recompute contacts of account %d: %w", accountID, err)
	}
	return nil
}

// The engagement levels (docs/FEATURES.md, "Engagement").
const (
	EngagementNew        = "new"         // no person's activity in 90 days and not mailed before the last 30 days
	EngagementEngaged    = "engaged"     // a person opened or clicked in the last 30 days
	EngagementLapsing    = "lapsing"     // a person's last open or click 30 to 90 days ago
	EngagementNotEngaged = "not_engaged" // mailed before the last 30 days, no person's open or click in 90 days
)

// EngagementLevels are the levels, from most to least engaged, then new.
var EngagementLevels = []string{EngagementEngaged, EngagementLapsing, EngagementNotEngaged, EngagementNew}

// The spans of the levels.
const (
	EngagedWithin = 30 * 24 * time.Hour // engaged: a person's activity this recent
	LapsingWithin = 90 * 24 * time.Hour // lapsing: a person's activity this recent, but not engaged
	JudgedAfter   = 30 * 24 * time.Hour // a contact first mailed more recently, never engaged in 90 days, is new
)

// EngagementLevel is the level of a contact whose last engagement is
// lastEngaged (Unix ms, 0 never) at now; mailedBefore reports whether it
// was mailed before now-JudgedAfter.
func EngagementLevel(lastEngaged int64, mailedBefore bool, now time.Time) string {
	switch {
	case lastEngaged >= now.Add(-EngagedWithin).UnixMilli():
		return EngagementEngaged
	case lastEngaged >= now.Add(-LapsingWithin).UnixMilli():
		return EngagementLapsing
	case mailedBefore:
		return EngagementNotEngaged
	}
	return EngagementNew
}
