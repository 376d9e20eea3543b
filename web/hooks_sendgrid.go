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
	Status    string `json:"status"` // bounce: "5.0.0"
	Reason    string `json:"reason"`
	Response  string `json:"response"`
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

// sendGridReport maps one event; ok false for an event that says nothing
// herald keeps (open, click, processed …, or a drop for a reason of
// SendGrid's own).
func sendGridReport(e sendGridEvent) (delivery.Report, bool) {
	r := delivery.Report{
		Source:     delivery.SourceSendGrid,
		Recipient:  e.Email,
		MessageID:  strings.Trim(strings.TrimSpace(e.SMTPID), "<>"),
		At:         unixTime(float64(e.Timestamp)),
		Status:     statusIn(e.Status, e.Reason, e.Response),
		Diagnostic: cmp.Or(e.Reason, e.Response),
	}
	switch e.Event {
	case "bounce":
		// type "bounce": the receiving server refused the address;
		// "blocked": it refused the message for now (reputation, content).
		r.Kind = delivery.ReportHardBounce
		if e.Type == "blocked" {
			r.Kind = delivery.ReportSoftBounce
		}
	case "dropped":
		// SendGrid did not even try. Only the drops that say the address
		// is bad are hard bounces; the others (unsubscribed, spam-reporting
		// address, quota …) are about SendGrid's own lists: skipped.
		switch strings.ToLower(strings.TrimSpace(e.Reason)) {
		case "bounced address", "invalid", "invalid address":
			r.Kind = delivery.ReportHardBounce
		default:
			return r, false
		}
	case "deferred":
		r.Kind = delivery.ReportSoftBounce
	case "spamreport":
		r.Kind = delivery.ReportComplaint
	case "delivered":
		r.Kind = delivery.ReportDelivered
	default:
		return r, false
	}
	return r, true
}
