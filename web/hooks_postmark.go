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

// postmarkReport maps a record. Postmark's MessageID is its own, not the
// message's Message-ID: a record names its message by the token its
// metadata carried back.
func postmarkReport(rec postmarkRecord) (delivery.Report, bool) {
	r := delivery.Report{Source: delivery.SourcePostmark, Token: rec.token(), Recipient: rec.Email, At: rec.BouncedAt,
		Status: statusIn(rec.Details), Diagnostic: cmp.Or(rec.Details, rec.Description)}
	switch rec.RecordType {
	case "Bounce":
		switch rec.Type {
		case "HardBounce", "BadEmailAddress":
			r.Kind = delivery.ReportHardBounce
		case "SoftBounce", "Transient", "DnsError", "Blocked":
			// Blocked: the receiving server refused the message (content,
			// reputation), not the address: never a hard bounce.
			r.Kind = delivery.ReportSoftBounce
		case "SpamComplaint":
			r.Kind = delivery.ReportComplaint
		default:
			// AutoResponder, Unsubscribe, AddressChange, ChallengeVerification …
			return r, false
		}
	case "SpamComplaint":
		r.Kind = delivery.ReportComplaint
	case "Delivery":
		r.Kind, r.Recipient, r.At = delivery.ReportDelivered, rec.Recipient, rec.DeliveredAt
	default:
		return r, false
	}
	return r, true
}
