package web

import (
	"cmp"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/delivery"
)

// SendGrid's Event Webhook signature headers.
const (
	sendGridSignature = "X-Twilio-Email-Event-Webhook-Signature"
	sendGridTimestamp = "X-Twilio-Email-Event-Webhook-Timestamp"
)

// parseSendGridKey reads the verification key as SendGrid's console shows
// it: a base64 DER (PKIX) ECDSA public key; PEM framing is tolerated.
func parseSendGridKey(s string) (*ecdsa.PublicKey, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "-----BEGIN PUBLIC KEY-----")
	s = strings.TrimSuffix(s, "-----END PUBLIC KEY-----")
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		return nil, errors.New("not base64")
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, err
	}
	ek, ok := k.(*ecdsa.PublicKey)
	if !ok {
		return nil, errors.New("not an ECDSA public key")
	}
	return ek, nil
}

// sendGridEvent is one event of an Event Webhook POST (a JSON array).
type sendGridEvent struct {
	Event     string `json:"event"`
	Email     string `json:"email"`
	Timestamp int64  `json:"timestamp"`
	SMTPID    string `json:"smtp-id"`
	Type      string `json:"type"`   // bounce: "bounce" or "blocked"
	Status    string `json:"status"` // bounce, dropped: "5.0.0"
	Reason    string `json:"reason"` // bounce: the receiving server's reply; dropped: SendGrid's label
	Response  string `json:"response"`
	// BounceClassification is SendGrid's reading of a bounce ("Invalid
	// Address", "Reputation", …).
	BounceClassification string `json:"bounce_classification"`
}

// sendGridHook takes SendGrid's Event Webhook.
func (w *Web) sendGridHook(c *fiber.Ctx) error {
	h := w.hooks
	if h.sendgrid == nil {
		return fiber.ErrNotFound
	}
	body, ok, err := hookBodyOrAnswer(c)
	if !ok {
		return err
	}
	if err := h.verifySendGrid(c.Get(sendGridSignature), c.Get(sendGridTimestamp), body, time.Now()); err != nil {
		slog.Warn("webhook sendgrid: signature refused", "err", err)
		return hookAnswer(c, fiber.StatusUnauthorized, "The signature does not verify.")
	}
	var events []sendGridEvent
	if err := json.Unmarshal(body, &events); err != nil {
		return hookAnswer(c, fiber.StatusBadRequest, "The body is not a JSON array of events.")
	}
	var reports []delivery.Report
	for _, e := range events {
		if r, ok := sendGridReport(e); ok {
			reports = append(reports, r)
		}
	}
	return w.handleReports(c, delivery.SourceSendGrid, reports)
}

// verifySendGrid checks the ECDSA P-256 signature of timestamp+body and
// that the timestamp is within sendGridSkew of now.
func (h *hooks) verifySendGrid(sig, ts string, body []byte, now time.Time) error {
	if sig == "" || ts == "" {
		return errors.New("no signature headers")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("the timestamp is not a number")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > sendGridSkew || d < -sendGridSkew {
		return errors.New("the timestamp is too far from now")
	}
	der, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return errors.New("the signature is not base64")
	}
	sum := sha256.New()
	sum.Write([]byte(ts))
	sum.Write(body)
	if !ecdsa.VerifyASN1(h.sendgrid, sum.Sum(nil), der) {
		return errors.New("the signature does not match")
	}
	return nil
}

// sendGridClasses: what SendGrid's bounce classifications say where the
// reply's words and code say nothing. "Mailbox Unavailable", "Technical
// Failure" and "Unclassified" name no one cause.
var sendGridClasses = map[string]string{
	"Invalid Address":              delivery.ReasonUserUnknown,
	"Content":                      delivery.ReasonSpamDetected,
	"Reputation":                   delivery.ReasonBadReputation,
	"Frequency or Volume Too High": delivery.ReasonSpeeding,
}

// sendGridDrop is how herald reads a drop: SendGrid did not try to
// deliver, and says why with a label of its own, not a receiving server's
// words.
type sendGridDrop int

const (
	dropSkipped sendGridDrop = iota // nothing herald keeps
	dropListed                      // the address is on SendGrid's bounce list
	dropInvalid                     // SendGrid found the address invalid
	dropRefused                     // SendGrid refused the sender's message or account
)

// sendGridDrops are SendGrid's drop reasons (its glossary's list), lower
// case. "Unsubscribed Address" and "Spam Reporting Address" are its own
// lists of people who opted out: herald heard that itself (the
// unsubscribe, the spam report), and a repeat is no new complaint, so
// they are skipped, as are reasons not listed.
var sendGridDrops = map[string]sendGridDrop{
	"bounced address":                   dropListed,
	"invalid":                           dropInvalid,
	"invalid address":                   dropInvalid,
	"spam content":                      dropRefused,
	"invalid smtpapi header":            dropRefused,
	"recipient list over package quota": dropRefused,
}

// sendGridReport maps one event; ok false for an event that says nothing
// herald keeps (open, click, processed …, or a drop of SendGrid's own
// opt-out lists). Every failure is judged (delivery.Judge).
func sendGridReport(e sendGridEvent) (delivery.Report, bool) {
	words := cmp.Or(e.Reason, e.Response)
	r := delivery.Report{
		Source:     delivery.SourceSendGrid,
		Recipient:  e.Email,
		MessageID:  strings.Trim(strings.TrimSpace(e.SMTPID), "<>"),
		At:         unixTime(float64(e.Timestamp)),
		Diagnostic: words,
	}
	f := delivery.Failure{Status: statusIn(e.Status), Diagnostic: words}
	switch e.Event {
	case "bounce":
		f.Hint = sendGridClasses[e.BounceClassification]
		if e.BounceClassification == "Invalid Address" && e.Type != "blocked" {
			// SendGrid read the receiver's answer as a refusal of the
			// address: the answer to RCPT, however it is worded.
			f.Stage = delivery.StageRcpt
		}
		if e.Type == "blocked" {
			// SendGrid's block: the receiving server refused the message
			// (its IP on a list, the content), not the address, in
			// SendGrid's own reading: never a hard bounce, and a block
			// where the words say nothing more.
			f.Temporary = true
			if !delivery.IsPolicyReason(f.Hint) {
				f.Hint = delivery.ReasonBlocked
			}
		}
		return judged(r, f), true
	case "deferred":
		// SendGrid is still trying (for up to 72 hours).
		f.Delayed = true
		return judged(r, f), true
	case "dropped":
		switch sendGridDrops[strings.ToLower(strings.TrimSpace(e.Reason))] {
		case dropListed:
			// The address bounced before, through SendGrid; herald did
			// not see why, and nothing was tried now: at most a soft
			// bounce (its limit suppresses an address SendGrid keeps
			// dropping).
			f.Hint, f.Temporary = delivery.ReasonOnHold, true
		case dropInvalid:
			// A gone mailbox only if the classifier reads one in the
			// words.
			f.Hint = delivery.ReasonOnHold
		case dropRefused:
			// SendGrid, the relay, refused the sender's message or
			// account, not the recipient: a block (decisions.md 8), never
			// counted against the address.
			f.Hint, f.Temporary = delivery.ReasonPolicyViolation, true
		default:
			return r, false
		}
		return judged(r, f), true
	case "spamreport":
		r.Kind, r.Reason = delivery.ReportComplaint, delivery.ReasonFeedback
	case "delivered":
		r.Kind, r.Reason = delivery.ReportDelivered, delivery.ReasonDelivered
	default:
		return r, false
	}
	return r, true
}
