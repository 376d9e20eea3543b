package suppressions

import (
	"strconv"

	"herald/models"
	"herald/views"
)

// BouncedURL is the list of addresses that bounced for good.
const BouncedURL = "/suppressions/bounced"

// LiftURL lifts one suppressed address (POST).
func LiftURL(id int64) string { return BouncedURL + "/" + strconv.FormatInt(id, 10) + "/lift" }

// BulkLiftURL lifts the selected addresses (POST, ids).
const BulkLiftURL = BouncedURL + "/lift"

// ReportsURL is the list of handled reports (bounces, complaints, mailto:
// unsubscribes).
const ReportsURL = "/suppressions/reports"

// Bounced is a page of the account's suppressed addresses.
type Bounced struct {
	Rows    []models.Suppression
	Query   views.ListQuery
	Pager   views.Pager
	CSRF    string
	Summary Summary
}

// Reports is a page of the account's handled reports, newest first.
type Reports struct {
	Rows    []models.Feedback
	Kind    string // "" all, or a kind
	Query   views.ListQuery
	Pager   views.Pager
	Summary Summary
	Sends   map[int64]string // send id → utr, for the links
}

// Summary is the account's reports of the last 30 days.
type Summary struct {
	Days                                               int
	Delivered                                          int64
	HardBounces, SoftBounces, Complaints, Unsubscribes int64
}

// Kinds are the report kinds, as stored, with their labels.
var Kinds = []struct{ Key, Label string }{
	{"hard_bounce", "Hard bounces"}, {"soft_bounce", "Soft bounces"}, {"complaint", "Complaints"}, {"unsubscribe", "Mailto unsubscribes"},
	{"block", "Blocks"},
}

// KindLabel is the label of a report kind.
func KindLabel(kind string) string {
	switch kind {
	case "hard_bounce":
		return "Hard bounce"
	case "soft_bounce":
		return "Soft bounce"
	case "complaint":
		return "Complaint"
	case "unsubscribe":
		return "Unsubscribe"
	case "block":
		return "Block (policy)"
	}
	return kind
}

// KindBadge is the badge class of a report kind.
func KindBadge(kind string) string {
	switch kind {
	case "hard_bounce", "complaint":
		return "badge badge-danger"
	case "soft_bounce", "block":
		return "badge badge-warning"
	}
	return "badge badge-muted"
}

// SourceLabel names where a report came from.
func SourceLabel(source string) string {
	switch source {
	case "smtp":
		return "Refused while sending"
	case "dsn":
		return "Bounce report (DSN)"
	case "arf":
		return "Feedback loop (ARF)"
	case "text":
		return "Bounce mail"
	case "mailto":
		return "Unsubscribe mail"
	case "ses":
		return "Amazon SES"
	case "sendgrid":
		return "SendGrid"
	case "postmark":
		return "Postmark"
	case "mailgun":
		return "Mailgun"
	case "":
		return "–"
	}
	return source
}

// KindURL is the reports list of one kind ("" all).
func KindURL(kind string) string {
	if kind == "" {
		return ReportsURL
	}
	return ReportsURL + "?kind=" + kind
}
