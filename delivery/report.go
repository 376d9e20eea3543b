package delivery

import (
	"context"
	"time"
)

// ReportKind is what a report from a relay, a mailbox provider or a
// recipient says became of a sent message (decisions.md 7).
type ReportKind int

// The kinds of report.
const (
	// ReportHardBounce: the recipient's mailbox refused the message for
	// good (a 5.x.x status, or a provider's "permanent" bounce).
	ReportHardBounce ReportKind = iota + 1
	// ReportSoftBounce: a temporary failure (4.x.x, a "delayed" DSN, a
	// provider's "transient" bounce).
	ReportSoftBounce
	// ReportComplaint: the recipient marked the message as spam (an ARF
	// report, SES "Complaint", SendGrid "spamreport" …).
	ReportComplaint
	// ReportUnsubscribe: a mail to the message's List-Unsubscribe mailto:
	// address (RFC 8058's fallback).
	ReportUnsubscribe
	// ReportDelivered: a provider says it delivered the message.
	ReportDelivered
	// ReportBlock: the receiving server refused the message by policy
	// (5.7.x: the sender or the content, not the mailbox) after the relay
	// had accepted it: a block (decisions.md 8), never a bounce.
	ReportBlock
	// ReportDeferral: the relay is still trying (a DSN with "Action:
	// delayed", a provider's deferred event): nothing failed yet.
	ReportDeferral
)

func (k ReportKind) String() string {
	switch k {
	case ReportHardBounce:
		return "hard_bounce"
	case ReportSoftBounce:
		return "soft_bounce"
	case ReportComplaint:
		return "complaint"
	case ReportUnsubscribe:
		return "unsubscribe"
	case ReportDelivered:
		return "delivered"
	case ReportBlock:
		return "block"
	case ReportDeferral:
		return "deferral"
	}
	return "unknown"
}

// Sources of reports, as stored with what they changed.
const (
	SourceDSN      = "dsn"      // RFC 3464 delivery status notification
	SourceARF      = "arf"      // RFC 5965 feedback report
	SourceText     = "text"     // a non-standard bounce text
	SourceMailto   = "mailto"   // a mail to the List-Unsubscribe address
	SourceSES      = "ses"      // Amazon SES through SNS
	SourceSendGrid = "sendgrid" // SendGrid's Event Webhook
	SourcePostmark = "postmark" // Postmark's webhooks
	SourceMailgun  = "mailgun"  // Mailgun's webhooks
)

// Report is one finding about one sent message, whatever brought it. The
// message is named by Token (the VERP token of its return path, of its
// List-Unsubscribe address, or that a provider's metadata carried back)
// or else by MessageID (its Message-ID, which carries the token for
// herald's own messages); the MAC of either must verify (decisions.md 9).
// A report named by neither, or whose Token or MessageID does not
// verify, changes nothing, whatever else it holds: SendUtr and Recipient
// can be read off any copy of a send, so they name no message alone.
type Report struct {
	Kind       ReportKind
	Source     string    // Source… constant; a mailbox poll keeps the parser's
	Token      string    // VERP token (after "+b", or "+u" for ReportUnsubscribe), when the report carries one
	MessageID  string    // the original message's Message-ID, without <>
	SendUtr    string    // the original message's X-Herald-Send
	Recipient  string    // the original recipient's address
	Reason     string    // why, in Sisimai's vocabulary (userunknown, blocked, …); "" when not a failure
	Status     string    // enhanced status code, "5.1.1"; "" when unknown
	Diagnostic string    // the remote server's words, as reported
	At         time.Time // when it happened; zero: when handled
	RemoteIP   string    // who handed it over: the SMTP client or the webhook caller; "" from the bounce mailbox
}

// Reports takes reports from any source (the inbound SMTP server, the
// bounce mailbox, provider webhooks) and applies them; the service layer
// implements it. An unknown or forged message is not an error: the report
// changes nothing.
type Reports interface {
	Handle(ctx context.Context, reports []Report) error
}
