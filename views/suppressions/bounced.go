package suppressions

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

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

// LiftedURL is the list of the suppressions the bounce rules' repair
// lifted.
const LiftedURL = "/suppressions/lifted"

// Bounced is a page of the account's suppressed addresses.
type Bounced struct {
	Rows    []models.Suppression
	Query   views.ListQuery
	Pager   views.Pager
	CSRF    string
	Summary Summary
	Lifted  int64 // suppressions the bounce rules' repair lifted: the link to them shows when there are any
}

// Lifted is a page of the suppressions the bounce rules' repair lifted,
// newest first.
type Lifted struct {
	Rows  []models.LiftedSuppression
	Query views.ListQuery
	Pager views.Pager
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
	{"block", "Blocks"}, {"deferral", "Deferrals"},
}

// KindLabel is the label of a report kind (a feedback row's, or the kind
// a lifted suppression reads as now).
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
	case "deferral":
		return "Deferral (still trying)"
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

// liftedNote says what the repair of the bounce rules lifted.
func liftedNote(n int64) string {
	return views.N("bounced.lifted_note", n)
}

// reasonCut is how many characters of a reason or a diagnostic a list
// shows; the whole text is the cell's title.
const reasonCut = 120

// Cut is s in one line, cut to reasonCut characters with an ellipsis.
func Cut(s string) string {
	s = oneLine(s)
	if utf8.RuneCountInString(s) <= reasonCut {
		return s
	}
	return string([]rune(s)[:reasonCut-1]) + "…"
}

// IsCut reports whether Cut shortens s (its title then holds the whole).
func IsCut(s string) bool { return Cut(s) != oneLine(s) }

// SuppressedReason is why an address is suppressed, in one line:
// "suppressed: userunknown, 550 5.1.1 <ann@example.com>: User unknown"
// (the verdict's reason, then the status code and the server's words);
// a suppression made before the reason was kept says its reason text.
func SuppressedReason(s models.Suppression) string {
	if s.ReasonCode == "" {
		return oneLine(s.Reason)
	}
	return "suppressed: " + withReply(s.ReasonCode, s.StatusCode, s.Diagnostic)
}

// ReportReason is a report's reason with what the server said:
// "mailboxfull, 4.2.2 Mailbox full"; a report stored before its reason
// was kept says the status code and the words alone.
func ReportReason(f models.Feedback) string {
	return withReply(f.ReasonCode, f.StatusCode, f.Diagnostic)
}

// withReply joins a reason code and a reply: the status code first,
// unless the server's words carry it already; the words without their
// RFC 3464 type ("smtp; ").
func withReply(code, status, diagnostic string) string {
	reply := diagnosticType.ReplaceAllString(oneLine(diagnostic), "")
	if status != "" && !strings.Contains(reply, status) {
		reply = strings.TrimSpace(status + " " + reply)
	}
	switch {
	case code == "":
		return reply
	case reply == "":
		return code
	}
	return code + ", " + reply
}

// diagnosticType is the type a DSN's Diagnostic-Code puts before the
// server's words: "smtp; 550 …", "X-Postfix; …".
var diagnosticType = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*; *`)

// oneLine joins a text's lines and runs of spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
