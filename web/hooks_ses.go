package web

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1" // #nosec G505: SNS SignatureVersion 1 is SHA1withRSA
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/delivery"
)

// snsMessage is an Amazon SNS HTTP(S) delivery: a Notification, a
// SubscriptionConfirmation or an UnsubscribeConfirmation.
type snsMessage struct {
	Type             string  `json:"Type"`
	MessageID        string  `json:"MessageId"`
	Token            string  `json:"Token"`
	TopicArn         string  `json:"TopicArn"`
	Subject          *string `json:"Subject"`
	Message          string  `json:"Message"`
	Timestamp        string  `json:"Timestamp"`
	SignatureVersion string  `json:"SignatureVersion"`
	Signature        string  `json:"Signature"`
	SigningCertURL   string  `json:"SigningCertURL"`
	SubscribeURL     string  `json:"SubscribeURL"`
}

// signedText is what SNS signs: the message's fields, by name, each as
// "name\nvalue\n", in this order.
func (m *snsMessage) signedText() (string, error) {
	var b strings.Builder
	add := func(k, v string) { b.WriteString(k + "\n" + v + "\n") }
	switch m.Type {
	case "Notification":
		add("Message", m.Message)
		add("MessageId", m.MessageID)
		if m.Subject != nil {
			add("Subject", *m.Subject)
		}
		add("Timestamp", m.Timestamp)
		add("TopicArn", m.TopicArn)
		add("Type", m.Type)
	case "SubscriptionConfirmation", "UnsubscribeConfirmation":
		add("Message", m.Message)
		add("MessageId", m.MessageID)
		add("SubscribeURL", m.SubscribeURL)
		add("Timestamp", m.Timestamp)
		add("Token", m.Token)
		add("TopicArn", m.TopicArn)
		add("Type", m.Type)
	default:
		return "", fmt.Errorf("unknown SNS message type %q", m.Type)
	}
	return b.String(), nil
}

// sesHook takes Amazon SES's notifications through SNS.
func (w *Web) sesHook(c *fiber.Ctx) error {
	h := w.hooks
	body, ok, err := hookBodyOrAnswer(c)
	if !ok {
		return err
	}
	var m snsMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return hookAnswer(c, fiber.StatusBadRequest, "The body is not an SNS message.")
	}
	if len(h.topics) > 0 && !h.topics[m.TopicArn] {
		slog.Warn("webhook ses: a message from a topic not in HERALD_SES_TOPIC_ARN", "topic", m.TopicArn)
		return hookAnswer(c, fiber.StatusUnauthorized, "The topic is not one of HERALD_SES_TOPIC_ARN.")
	}
	if err := h.verifySNS(c.UserContext(), &m); err != nil {
		slog.Warn("webhook ses: signature refused", "err", err)
		return hookAnswer(c, fiber.StatusUnauthorized, "The signature does not verify.")
	}
	switch m.Type {
	case "SubscriptionConfirmation":
		if len(h.topics) == 0 {
			// Nobody named this topic as ours: a person confirms it.
			slog.Warn("webhook ses: a subscription to confirm by hand (or set HERALD_SES_TOPIC_ARN and herald confirms it)",
				"topic", m.TopicArn, "subscribe_url", m.SubscribeURL)
			return hookAnswer(c, fiber.StatusOK, "The subscription was not confirmed: open the SubscribeURL from herald's log, or set HERALD_SES_TOPIC_ARN.")
		}
		if err := h.confirmSNS(c.UserContext(), m.SubscribeURL); err != nil {
			slog.Error("webhook ses: confirming the subscription", "topic", m.TopicArn, "err", err)
			return hookAnswer(c, fiber.StatusBadGateway, "The subscription could not be confirmed.")
		}
		slog.Info("webhook ses: subscription confirmed", "topic", m.TopicArn)
		return hookAnswer(c, fiber.StatusOK, "ok")
	case "Notification":
		var n delivery.SESNotification
		if err := json.Unmarshal([]byte(m.Message), &n); err != nil {
			// Another kind of notification on the topic: not ours to read.
			return hookAnswer(c, fiber.StatusOK, "ignored")
		}
		return w.handleReports(c, delivery.SourceSES, w.sesReports(c.UserContext(), &n))
	}
	return hookAnswer(c, fiber.StatusOK, "ignored")
}

// sesReports are an SES notification's reports (judged in delivery, as
// a notification that arrives as mail is), tied to their message by the
// VERP token of its return path (mail.source) besides the Message-ID
// delivery reads.
func (w *Web) sesReports(ctx context.Context, n *delivery.SESNotification) []delivery.Report {
	reports := n.Reports()
	if len(reports) == 0 {
		return nil
	}
	token := w.returnPathToken(ctx, n.Mail.Source)
	sendUtr := strings.TrimSpace(n.Mail.Header("X-Herald-Send"))
	for i := range reports {
		reports[i].Token, reports[i].SendUtr = token, sendUtr
	}
	return reports
}

// verifySNS checks an SNS message's signature against the pinned
// certificate, or the one its SigningCertURL names.
func (h *hooks) verifySNS(ctx context.Context, m *snsMessage) error {
	text, err := m.signedText()
	if err != nil {
		return err
	}
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if err != nil {
		return errors.New("the signature is not base64")
	}
	var hash crypto.Hash
	var sum []byte
	switch m.SignatureVersion {
	case "1":
		s := sha1.Sum([]byte(text)) // #nosec G401: SNS SignatureVersion 1
		hash, sum = crypto.SHA1, s[:]
	case "2":
		s := sha256.Sum256([]byte(text))
		hash, sum = crypto.SHA256, s[:]
	default:
		return fmt.Errorf("unknown SignatureVersion %q", m.SignatureVersion)
	}
	cert := h.pinned
	if cert == nil {
		if cert, err = h.snsCert(ctx, m.SigningCertURL); err != nil {
			return err
		}
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return errors.New("the certificate's key is not RSA")
	}
	return rsa.VerifyPKCS1v15(pub, hash, sum, sig)
}

// snsHost is the host an SNS certificate or subscription link may be on.
var snsHost = regexp.MustCompile(`^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$`)

// snsURL says whether raw is an https URL on SNS's host (or, in tests,
// one of opt.SNSHosts).
func (h *hooks) snsURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.User != nil {
		return nil, fmt.Errorf("%q is not an https URL", raw)
	}
	if (snsHost.MatchString(u.Host) || slices.Contains(h.opt.SNSHosts, u.Host)) && u.Host != "" {
		return u, nil
	}
	return nil, fmt.Errorf("%q is not on sns.<region>.amazonaws.com", raw)
}

// snsCert fetches (once) the certificate at an SNS SigningCertURL.
func (h *hooks) snsCert(ctx context.Context, raw string) (*x509.Certificate, error) {
	u, err := h.snsURL(raw)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(u.Path, ".pem") {
		return nil, fmt.Errorf("%q is not a .pem file", raw)
	}
	key := u.String()
	h.mu.Lock()
	cert := h.certs[key]
	h.mu.Unlock()
	if cert != nil {
		return cert, nil
	}
	b, err := h.fetch(ctx, key)
	if err != nil {
		return nil, err
	}
	if cert, err = parseCert(b); err != nil {
		return nil, err
	}
	h.mu.Lock()
	if len(h.certs) >= maxCertCache {
		clear(h.certs)
	}
	h.certs[key] = cert
	h.mu.Unlock()
	return cert, nil
}

// confirmSNS visits a SubscribeURL: SNS then sends the topic's
// notifications here.
func (h *hooks) confirmSNS(ctx context.Context, raw string) error {
	u, err := h.snsURL(raw)
	if err != nil {
		return err
	}
	_, err = h.fetch(ctx, u.String())
	return err
}

// fetch GETs an SNS URL: a 2xx answer, at most maxHookFetched bytes.
func (h *hooks) fetch(ctx context.Context, u string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	res, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return nil, fmt.Errorf("GET %s: %s", u, res.Status)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, maxHookFetched+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxHookFetched {
		return nil, fmt.Errorf("GET %s: the answer is over %d bytes", u, maxHookFetched)
	}
	return b, nil
}

func readCertFile(path string) (*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseCert(b)
}

// parseCert reads the first certificate of a PEM file.
func parseCert(b []byte) (*x509.Certificate, error) {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, errors.New("no PEM certificate")
		}
		if blk.Type == "CERTIFICATE" {
			return x509.ParseCertificate(blk.Bytes)
		}
	}
}
