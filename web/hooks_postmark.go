package web

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/delivery"
)

// postmarkRecord is one webhook POST of Postmark: a Bounce, a
// SpamComplaint or a Delivery record (others are ignored).
type postmarkRecord struct {
	RecordType  string    `json:"RecordType"`
	Type        string    `json:"Type"`
	Email       string    `json:"Email"`     // Bounce, SpamComplaint
	Recipient   string    `json:"Recipient"` // Delivery
	Description string    `json:"Description"`
	Details     string    `json:"Details"`
	BouncedAt   time.Time `json:"BouncedAt"`
	DeliveredAt time.Time `json:"DeliveredAt"`
	// Metadata is what the message's X-PM-Metadata-<key> headers said:
	// herald's bounce token under delivery.MetadataKey.
	Metadata map[string]any `json:"Metadata"`
}

// token is the bounce token herald put in the message's metadata, or "".
// Header names know no case: the key is matched without it.
func (rec *postmarkRecord) token() string {
	for k, v := range rec.Metadata {
		if s, ok := v.(string); ok && strings.EqualFold(k, delivery.MetadataKey) {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// postmarkHook takes Postmark's bounce, spam complaint and delivery
// webhooks, behind basic auth.
func (w *Web) postmarkHook(c *fiber.Ctx) error {
	opt := w.hooks.opt
	if opt.WebhookUser == "" || opt.WebhookPassword == "" {
		return fiber.ErrNotFound
	}
	if !basicAuth(c.Get(fiber.HeaderAuthorization), opt.WebhookUser, opt.WebhookPassword) {
		slog.Warn("webhook postmark: wrong user or password")
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="herald webhooks"`)
		return hookAnswer(c, fiber.StatusUnauthorized, "Wrong user or password.")
	}
	body, ok, err := hookBodyOrAnswer(c)
	if !ok {
		return err
	}
	var rec postmarkRecord
	if err := json.Unmarshal(body, &rec); err != nil {
		return hookAnswer(c, fiber.StatusBadRequest, "The body is not a Postmark webhook record.")
	}
	var reports []delivery.Report
	if r, ok := postmarkReport(rec); ok {
		reports = append(reports, r)
	}
	return w.handleReports(c, delivery.SourcePostmark, reports)
}

// basicAuth checks an Authorization header against user and password,
// both compared in constant time.
func basicAuth(header, user, password string) bool {
	enc, ok := strings.CutPrefix(header, "Basic ")
	if !ok {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return false
	}
	u, p, _ := strings.Cut(string(raw), ":")
	okUser := equalSecret(u, user)
	okPass := equalSecret(p, password)
	return okUser && okPass
}

// postmarkType is how herald reads a bounce Type of Postmark's, where
// the record's Details (the receiving server's words) say nothing.
type postmarkType struct {
	delayed   bool   // Postmark is still trying: a deferral
	temporary bool   // not about the mailbox, or not final: never a hard bounce
	hint      string // the reason the Type names (delivery.Reason…)
}

// postmarkTypes are Postmark's bounce types that say something of a
// failure (its API's list); the others (AutoResponder, Unsubscribe,
// Subscribe, AddressChange, ChallengeVerification, OpenRelayTest,
// Unconfirmed: mail back from a person or a program, not a failure;
// SMTPApiError, InboundError, TemplateRenderingFailed: Postmark's own
// errors, no recipient's) are skipped. Description is the Type's fixed
// text ("… ex: unknown user, mailbox not found"): it is never judged.
var postmarkTypes = map[string]postmarkType{
	// Words decide; without any nothing is known.
	"HardBounce": {hint: delivery.ReasonOnHold},
	"Unknown":    {},
	// "Address is invalid": a gone mailbox only if the words say so.
	"BadEmailAddress": {hint: delivery.ReasonOnHold},
	// "Message delayed": Postmark keeps trying.
	"Transient":  {delayed: true},
	"SoftBounce": {temporary: true},
	"DnsError":   {temporary: true, hint: delivery.ReasonNetworkError},
	// Refusals of the message, not of the address: blocks where the
	// words say nothing more.
	"Blocked":           {temporary: true, hint: delivery.ReasonBlocked},
	"SpamNotification":  {temporary: true, hint: delivery.ReasonSpamDetected},
	"VirusNotification": {temporary: true, hint: delivery.ReasonVirusDetected},
	"DMARCPolicy":       {temporary: true, hint: delivery.ReasonAuthFailure},
	// Someone put the address on Postmark's list; herald did not see
	// why: at most a soft bounce.
	"ManuallyDeactivated": {temporary: true, hint: delivery.ReasonOnHold},
}

// postmarkReport maps a record. Postmark's MessageID is its own, not the
// message's Message-ID: a record names its message by the token its
// metadata carried back.
func postmarkReport(rec postmarkRecord) (delivery.Report, bool) {
	r := delivery.Report{Source: delivery.SourcePostmark, Token: rec.token(), Recipient: rec.Email, At: rec.BouncedAt,
		Diagnostic: cmp.Or(rec.Details, rec.Description)}
	switch rec.RecordType {
	case "Bounce":
		if rec.Type == "SpamComplaint" {
			r.Kind, r.Reason = delivery.ReportComplaint, delivery.ReasonFeedback
			return r, true
		}
		pt, ok := postmarkTypes[rec.Type]
		if !ok {
			return r, false
		}
		f := delivery.Failure{Diagnostic: rec.Details, Delayed: pt.delayed, Temporary: pt.temporary, Hint: pt.hint}
		if rec.Type == "HardBounce" || rec.Type == "BadEmailAddress" {
			// Postmark read the receiver's answer as a refusal of the
			// address: the answer to RCPT, however it is worded.
			f.Stage = delivery.StageRcpt
		}
		return judged(r, f), true
	case "SpamComplaint":
		r.Kind, r.Reason = delivery.ReportComplaint, delivery.ReasonFeedback
	case "Delivery":
		r.Kind, r.Reason, r.Recipient, r.At = delivery.ReportDelivered, delivery.ReasonDelivered, rec.Recipient, rec.DeliveredAt
	default:
		return r, false
	}
	return r, true
}
