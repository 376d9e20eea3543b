package web

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/delivery"
)

// mailgunPost is a Mailgun webhook POST (JSON): the signature and one
// event.
type mailgunPost struct {
	Signature struct {
		Timestamp string `json:"timestamp"`
		Token     string `json:"token"`
		Signature string `json:"signature"`
	} `json:"signature"`
	EventData struct {
		Event          string  `json:"event"`
		Severity       string  `json:"severity"`
		Recipient      string  `json:"recipient"`
		Timestamp      float64 `json:"timestamp"`
		Reason         string  `json:"reason"`
		DeliveryStatus struct {
			Code         json.Number `json:"code"`
			Message      string      `json:"message"`
			Description  string      `json:"description"`
			EnhancedCode string      `json:"enhanced-code"`
		} `json:"delivery-status"`
		Message struct {
			Headers struct {
				MessageID string `json:"message-id"`
			} `json:"headers"`
		} `json:"message"`
		Envelope struct {
			Sender string `json:"sender"`
		} `json:"envelope"`
	} `json:"event-data"`
}

// mailgunHook takes Mailgun's webhooks (the JSON ones).
func (w *Web) mailgunHook(c *fiber.Ctx) error {
	key := w.hooks.opt.MailgunSigningKey
	if key == "" {
		return fiber.ErrNotFound
	}
	body, ok, err := hookBodyOrAnswer(c)
	if !ok {
		return err
	}
	var p mailgunPost
	if err := json.Unmarshal(body, &p); err != nil {
		return hookAnswer(c, fiber.StatusBadRequest, "The body is not a Mailgun webhook.")
	}
	signed, err := verifyMailgun(key, p.Signature.Timestamp, p.Signature.Token, p.Signature.Signature, time.Now())
	if err != nil {
		slog.Warn("webhook mailgun: signature refused", "err", err)
		return hookAnswer(c, fiber.StatusUnauthorized, "The signature does not verify.")
	}
	// A captured request is no lasting credential: its timestamp ages out
	// (above), and within that window its token is taken once, by any
	// herald process.
	ctx := c.UserContext()
	fresh, err := w.svc.Feedback.SpendToken(ctx, delivery.SourceMailgun, p.Signature.Token, signed.Add(mailgunMaxAge))
	if err != nil {
		slog.Error("webhook mailgun: recording the signature's token", "err", err)
		return hookAnswer(c, fiber.StatusInternalServerError, "The request could not be handled; try again.")
	}
	if !fresh {
		slog.Warn("webhook mailgun: a signature's token used again: refused as a replay")
		return hookAnswer(c, fiber.StatusUnauthorized, "The signature was used before.")
	}
	var reports []delivery.Report
	if r, ok := mailgunReport(&p); ok {
		r.Token = w.returnPathToken(ctx, p.EventData.Envelope.Sender)
		reports = append(reports, r)
	}
	if err := w.applyReports(c, delivery.SourceMailgun, reports); err != nil {
		// Mailgun sends it again: that must not look like a replay.
		if err := w.svc.Feedback.UnspendToken(ctx, delivery.SourceMailgun, p.Signature.Token); err != nil {
			slog.Error("webhook mailgun: forgetting the token of a request not handled", "err", err)
		}
		return hookAnswer(c, fiber.StatusInternalServerError, "The reports could not be handled; try again.")
	}
	return hookAnswer(c, fiber.StatusOK, "ok")
}

// How far a Mailgun signature's timestamp may be from now: at most
// mailgunMaxAge in the past, mailgunMaxAhead in the future (clocks
// drift).
const (
	mailgunMaxAge   = 10 * time.Minute
	mailgunMaxAhead = 5 * time.Minute
	maxMailgunToken = 256
)

// verifyMailgun checks the hex HMAC-SHA256, under the signing key, of
// timestamp followed by token, and that the timestamp (Unix seconds) is
// recent; it returns the timestamp.
func verifyMailgun(key, ts, token, sig string, now time.Time) (time.Time, error) {
	if ts == "" || token == "" || sig == "" {
		return time.Time{}, errors.New("no signature")
	}
	if len(token) > maxMailgunToken {
		return time.Time{}, errors.New("the token is too long")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return time.Time{}, errors.New("the timestamp is not a number")
	}
	signed := time.Unix(sec, 0)
	if d := now.Sub(signed); d > mailgunMaxAge || d < -mailgunMaxAhead {
		return time.Time{}, errors.New("the timestamp is too far from now")
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return time.Time{}, errors.New("the signature is not hex")
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(ts + token))
	if !hmac.Equal(got, m.Sum(nil)) {
		return time.Time{}, errors.New("the signature does not match")
	}
	return signed, nil
}

// mailgunReport maps an event; ok false for the ones herald keeps nothing
// of (accepted, opened, clicked, unsubscribed …, a failure for Mailgun's
// unsubscribe or complaint list). Every failure is judged
// (delivery.Judge).
func mailgunReport(p *mailgunPost) (delivery.Report, bool) {
	e := &p.EventData
	ds := e.DeliveryStatus
	words := cmp.Or(ds.Message, ds.Description)
	diag := strings.TrimSpace(strings.Join(strings.Fields(ds.Code.String()+" "+words), " "))
	r := delivery.Report{
		Source:     delivery.SourceMailgun,
		Recipient:  e.Recipient,
		MessageID:  strings.Trim(strings.TrimSpace(e.Message.Headers.MessageID), "<>"),
		At:         unixTime(e.Timestamp),
		Diagnostic: cmp.Or(diag, e.Reason),
	}
	switch e.Event {
	case "failed":
		code, _ := strconv.Atoi(ds.Code.String())
		f := delivery.Failure{Code: replyCode(code), Status: statusIn(ds.EnhancedCode), Diagnostic: words}
		switch e.Severity {
		case "permanent":
		case "temporary":
			// Mailgun retries a temporary failure (for hours): the
			// relay is still trying.
			f.Delayed = true
		default:
			return r, false
		}
		switch e.Reason {
		case "suppress-unsubscribe", "suppress-complaint":
			// Mailgun's lists of people who opted out: herald heard
			// that itself, and a repeat is no new complaint.
			return r, false
		case "suppress-bounce":
			// The address bounced before, through Mailgun; herald did not
			// see why, and nothing was tried now: at most a soft bounce.
			f.Hint, f.Temporary = delivery.ReasonOnHold, true
		case "espblock":
			// The receiving provider blocked Mailgun's sending, not the
			// address.
			f.Hint, f.Temporary = delivery.ReasonBlocked, true
		case "old":
			// Mailgun gave up retrying temporary failures.
			f.Hint, f.Temporary = delivery.ReasonExpired, true
		}
		return judged(r, f), true
	case "complained":
		r.Kind, r.Reason = delivery.ReportComplaint, delivery.ReasonFeedback
	case "delivered":
		r.Kind, r.Reason = delivery.ReportDelivered, delivery.ReasonDelivered
	default:
		return r, false
	}
	return r, true
}
