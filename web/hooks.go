package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/delivery"
)

// WebhookOptions configure the provider webhooks (decisions.md 7): each
// endpoint but SES's answers 404 until its secret is set.
type WebhookOptions struct {
	// SESTopicARNs (HERALD_SES_TOPIC_ARN, comma-separated) are the SNS
	// topics whose notifications /webhooks/ses takes, and whose
	// subscriptions herald confirms itself. Any AWS account can sign SNS
	// messages with AWS's certificate and subscribe any URL, so the
	// signature alone does not say the topic is ours. Unset (decisions.md
	// 7 names no topic): every topic's signed notifications are taken, but
	// herald confirms no subscription: it logs the SubscribeURL for an
	// operator to open, so a stranger cannot subscribe it to a topic of
	// theirs.
	SESTopicARNs []string
	// SESCertFile (HERALD_SES_CERT_FILE) pins the SNS signing certificate
	// (PEM): nothing is fetched. Unset: the certificate is fetched from
	// SigningCertURL, only over https from sns.<region>.amazonaws.com, and
	// kept.
	SESCertFile string
	// SendGridVerificationKey (HERALD_SENDGRID_VERIFICATION_KEY) is the
	// Event Webhook's public key as SendGrid shows it: base64 DER.
	SendGridVerificationKey string
	// WebhookUser and WebhookPassword (HERALD_WEBHOOK_USER,
	// HERALD_WEBHOOK_PASSWORD) are the basic auth Postmark's webhooks send.
	WebhookUser, WebhookPassword string
	// MailgunSigningKey (HERALD_MAILGUN_SIGNING_KEY) is Mailgun's HTTP
	// webhook signing key.
	MailgunSigningKey string

	// For tests only, never set from the environment: SNSHosts are hosts
	// ("host:port") trusted besides sns.<region>.amazonaws.com for
	// SigningCertURL and SubscribeURL, and Client makes those requests
	// (nil: a client with a 10 s timeout).
	SNSHosts []string
	Client   *http.Client
}

// Webhook limits.
const (
	maxHookBody    = 1 << 20          // a request body (413 over)
	maxHookFetched = 64 << 10         // a certificate or a subscription answer
	hookTimeout    = 10 * time.Second // a request to SNS
	// sendGridSkew is how far a SendGrid signature's timestamp may be from
	// now, either way.
	sendGridSkew = 10 * time.Minute
	maxCertCache = 32
)

// hooks is what the webhooks keep between requests.
type hooks struct {
	opt      WebhookOptions
	topics   map[string]bool
	pinned   *x509.Certificate
	sendgrid *ecdsa.PublicKey
	client   *http.Client

	mu    sync.Mutex
	certs map[string]*x509.Certificate // SigningCertURL → certificate
}

// newHooks reads the pinned certificate and the SendGrid key; an error
// names the variable.
func newHooks(opt WebhookOptions) (*hooks, error) {
	h := &hooks{opt: opt, topics: map[string]bool{}, client: opt.Client, certs: map[string]*x509.Certificate{}}
	for _, t := range opt.SESTopicARNs {
		if t = strings.TrimSpace(t); t != "" {
			h.topics[t] = true
		}
	}
	if h.client == nil {
		h.client = &http.Client{Timeout: hookTimeout}
	}
	if opt.SESCertFile != "" {
		c, err := readCertFile(opt.SESCertFile)
		if err != nil {
			return nil, fmt.Errorf("HERALD_SES_CERT_FILE: %w", err)
		}
		h.pinned = c
	}
	if opt.SendGridVerificationKey != "" {
		k, err := parseSendGridKey(opt.SendGridVerificationKey)
		if err != nil {
			return nil, fmt.Errorf("HERALD_SENDGRID_VERIFICATION_KEY: %w", err)
		}
		h.sendgrid = k
	}
	return h, nil
}

// mountWebhooks registers the provider webhooks. They come before the
// console's middleware: no session, no CSRF token (a provider has
// neither); each checks its own signature or password instead.
func (w *Web) mountWebhooks(app *fiber.App) {
	app.Post("/webhooks/ses", w.sesHook)
	app.Post("/webhooks/sendgrid", w.sendGridHook)
	app.Post("/webhooks/postmark", w.postmarkHook)
	app.Post("/webhooks/mailgun", w.mailgunHook)
}

// hookAnswer ends a webhook request with a short plain-text answer.
func hookAnswer(c *fiber.Ctx, status int, text string) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	return c.Status(status).SendString(text + "\n")
}

var errHookTooLarge = errors.New("webhook body too large")

// hookBody reads the request body, at most maxHookBody bytes.
func hookBody(c *fiber.Ctx) ([]byte, error) {
	req := c.Request()
	if req.Header.ContentLength() > maxHookBody {
		return nil, errHookTooLarge
	}
	var body []byte
	if req.IsBodyStream() {
		b, err := io.ReadAll(io.LimitReader(req.BodyStream(), maxHookBody+1))
		if err != nil {
			return nil, err
		}
		body = b
	} else {
		body = req.Body()
	}
	if len(body) > maxHookBody {
		return nil, errHookTooLarge
	}
	return body, nil
}

// hookBodyOrAnswer reads the body, or answers 413 or 400 (ok false).
func hookBodyOrAnswer(c *fiber.Ctx) ([]byte, bool, error) {
	body, err := hookBody(c)
	switch {
	case errors.Is(err, errHookTooLarge):
		return nil, false, hookAnswer(c, fiber.StatusRequestEntityTooLarge, "The body is larger than 1 MB.")
	case err != nil:
		return nil, false, hookAnswer(c, fiber.StatusBadRequest, "The body could not be read.")
	}
	return body, true, nil
}

// handleReports hands what a provider said to the service: 500 on an
// error, so the provider tries again.
func (w *Web) handleReports(c *fiber.Ctx, source string, reports []delivery.Report) error {
	if err := w.applyReports(c, source, reports); err != nil {
		return hookAnswer(c, fiber.StatusInternalServerError, "The reports could not be handled; try again.")
	}
	return hookAnswer(c, fiber.StatusOK, "ok")
}

// applyReports hands reports to the service, each saying which caller
// brought it (an untied report is counted by sender IP); its error is
// logged.
func (w *Web) applyReports(c *fiber.Ctx, source string, reports []delivery.Report) error {
	if len(reports) == 0 {
		return nil
	}
	ip := w.clientIP(c)
	for i := range reports {
		reports[i].RemoteIP = ip
	}
	if err := w.svc.Feedback.Handle(c.UserContext(), reports); err != nil {
		slog.Error("webhook: handling reports", "source", source, "reports", len(reports), "err", err)
		return err
	}
	return nil
}

// judged is r with the kind, reason and status of the one verdict on a
// failure (delivery.Judge): a provider's own word for a failure
// ("permanent", "hard") never decides alone whether the address is
// suppressed (decisions.md 8).
func judged(r delivery.Report, f delivery.Failure) delivery.Report {
	j := delivery.Judge(f)
	r.Kind, r.Reason, r.Status = j.Kind, j.Reason, j.Status
	return r
}

// equalSecret compares two secrets in a time that says nothing of either.
func equalSecret(got, want string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// statusCode finds the enhanced status code of a failure ("5.1.1") in a
// provider's text.
var statusCode = regexp.MustCompile(`\b[45]\.\d{1,3}\.\d{1,3}\b`)

// statusIn is the first failure status code of texts (a provider's status
// field is taken only when it holds one), or "".
func statusIn(texts ...string) string {
	for _, t := range texts {
		if s := statusCode.FindString(t); s != "" {
			return s
		}
	}
	return ""
}

// replyCode is n when it is an SMTP failure code (4xx, 5xx), else 0: a
// provider's own numbers (Mailgun's 605 "not delivering to previously
// bounced address") are not a receiving server's reply.
func replyCode(n int) int {
	if n >= 400 && n < 600 {
		return n
	}
	return 0
}

// returnPathToken is the VERP token of a message's return path, when the
// provider reports it (SES mail.source, Mailgun envelope.sender) and it is
// one of ours; "" otherwise.
func (w *Web) returnPathToken(ctx context.Context, addr string) string {
	if strings.TrimSpace(addr) == "" {
		return ""
	}
	v, err := w.svc.Bounces.VERP(ctx)
	if err != nil {
		return ""
	}
	r, ok := v.Parse(addr)
	if !ok || !r.Bounce || r.Token == "" {
		return ""
	}
	return r.Token
}

// unixTime reads seconds since 1970 (with a fraction), or zero.
func unixTime(sec float64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(sec*float64(time.Second))).UTC()
}
