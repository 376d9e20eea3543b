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
			Code        json.Number `json:"code"`
			Message     string      `json:"message"`
			Description string      `json:"description"`
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
	if err := verifyMailgun(key, p.Signature.Timestamp, p.Signature.Token, p.Signature.Signature); err != nil {
		slog.Warn("webhook mailgun: signature refused", "err", err)
		return hookAnswer(c, fiber.StatusUnauthorized, "The signature does not verify.")
	}
	var reports []delivery.Report
	if r, ok := mailgunReport(&p); ok {
		r.Token = w.returnPathToken(c.UserContext(), p.EventData.Envelope.Sender)
		reports = append(reports, r)
	}
	return w.handleReports(c, delivery.SourceMailgun, reports)
}

// verifyMailgun checks the hex HMAC-SHA256, under the signing key, of
// timestamp followed by token.
func verifyMailgun(key, ts, token, sig string) error {
	if ts == "" || token == "" || sig == "" {
		return errors.New("no signature")
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return errors.New("the signature is not hex")
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(ts + token))
	if !hmac.Equal(got, m.Sum(nil)) {
		return errors.New("the signature does not match")
	}
	return nil
}

// mailgunReport maps an event; ok false for the ones herald keeps nothing
// of (accepted, opened, clicked, unsubscribed …).
func mailgunReport(p *mailgunPost) (delivery.Report, bool) {
	e := &p.EventData
	ds := e.DeliveryStatus
	diag := strings.TrimSpace(strings.Join(strings.Fields(ds.Code.String()+" "+cmp.Or(ds.Message, ds.Description)), " "))
	r := delivery.Report{
		Source:     delivery.SourceMailgun,
		Recipient:  e.Recipient,
		MessageID:  strings.Trim(strings.TrimSpace(e.Message.Headers.MessageID), "<>"),
		At:         unixTime(e.Timestamp),
		Status:     statusIn(ds.Message, ds.Description),
		Diagnostic: cmp.Or(diag, e.Reason),
	}
	switch e.Event {
	case "failed":
		switch e.Severity {
		case "permanent":
			r.Kind = delivery.ReportHardBounce
		case "temporary":
			r.Kind = delivery.ReportSoftBounce
		default:
			return r, false
		}
		if r.Status == "" {
			// Mailgun gives the SMTP reply code; the class is all it says.
			if n, err := strconv.Atoi(ds.Code.String()); err == nil && n >= 400 && n < 600 {
				r.Status = strconv.Itoa(n/100) + ".0.0"
			}
		}
	case "complained":
		r.Kind = delivery.ReportComplaint
	case "delivered":
		r.Kind = delivery.ReportDelivered
	default:
		return r, false
	}
	return r, true
}
