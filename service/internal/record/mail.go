package record

// A contact's mails and their events as the history reads them: the shared
// row vocabulary.

import "herald/models"

// ContactMail is one mail of a contact's history: a ledger row of one of
// the account's sends or automation emails to its address, with what
// became of it.
type ContactMail struct {
	ID             int64 // the ledger row's id (the cursor of the next page)
	SendID         int64
	SendUtr        string
	SendName       string
	Subject        string
	AutomationID   *int64
	AutomationUtr  *string // the automation an email step belongs to
	AutomationName *string
	State          models.MessageState
	Error          string
	SentAt         *models.Timestamp
	OpenedAt       *models.Timestamp
	ClickedAt      *models.Timestamp
	UnsubscribedAt *models.Timestamp
	HardBouncedAt  *models.Timestamp
	SoftBouncedAt  *models.Timestamp
	ComplainedAt   *models.Timestamp
	// An A/B test's variant of the row and the send's subjects: Subject
	// is the variant's.
	Variant    int
	ABSubjects models.StringArray
	// Links are the send's tracked links (a click names one by index).
	Links models.StringArray
	// Events is the mail's timeline, oldest first (History): its
	// delivery, each open and click (the first MaxMailEvents of them),
	// its reports and its unsubscribe.
	Events []MailEvent `gorm:"-"`
	// MoreEvents is how many opens and clicks Events leaves out.
	MoreEvents int `gorm:"-"`
}

// Kinds of a mail's timeline events (MailEvent.Kind).
const (
	MailDelivered   = "delivered" // the receiving server took it (sent_at)
	MailRefused     = "refused"   // the receiving server refused it during the send (a hard bounce)
	MailBlocked     = "blocked"   // refused by policy during the send (decisions.md 8)
	MailFailed      = "failed"    // could not be sent
	MailSkipped     = "skipped"   // left out of the send
	MailWaiting     = "waiting"   // not sent yet
	MailOpen        = "open"
	MailClick       = "click"
	MailSoftBounce  = "soft_bounce" // reported after the send
	MailHardBounce  = "hard_bounce"
	MailBlockReport = "block" // a policy refusal reported after the send
	MailComplaint   = "complaint"
	MailUnsubscribe = "unsubscribe"
)

// MaxMailEvents caps the opens and clicks one mail's timeline lists: a
// link scanner may click every few minutes for days.
const MaxMailEvents = 50

// Outcome names what became of the mail, the furthest it went: a
// complaint or an unsubscribe outranks a click, a click an open, an open
// the delivery.
func (m ContactMail) Outcome() string {
	switch {
	case m.ComplainedAt != nil:
		return "complained"
	case m.UnsubscribedAt != nil:
		return "unsubscribed"
	case m.HardBouncedAt != nil || m.State == models.MessageBounced:
		return "bounced"
	case m.ClickedAt != nil:
		return "clicked"
	case m.OpenedAt != nil:
		return "opened"
	case m.SoftBouncedAt != nil:
		return "soft bounce"
	}
	switch m.State {
	case models.MessageDelivered:
		return "delivered"
	case models.MessageSkipped:
		return "left out"
	case models.MessageBlocked:
		return "refused"
	case models.MessageFailed:
		return "failed"
	}
	return "waiting"
}

// MailEvent is one event of a mail's timeline.
type MailEvent struct {
	Kind string
	At   *models.Timestamp // nil: the ledger kept no time (a refusal during the send)
	// Machine: an open or click the machine rules took for a machine's
	// (a privacy proxy, a link scanner; docs/MACHINE_ACTIVITY.md).
	Machine bool
	// URL is a click's link as the send stored it (placeholders unfilled);
	// "" when the send no longer has it.
	URL string
	// Ledger: only the first open or click is known, from the ledger's
	// times: it was recorded before open and click rows named their
	// message (migration 00031), so neither its repeats nor whether a
	// machine made it are known.
	Ledger bool
	// A report's status code, diagnostic and source (dsn, arf, a
	// provider's webhook …); an error of the send for a refusal.
	Status, Diagnostic, Source string
	// Via says how an unsubscribe came: "complaint", "mail" (to the
	// List-Unsubscribe address) or "link" (the mail's link or preference
	// page).
	Via string
}
