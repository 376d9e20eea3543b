package web_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/web"
)

// hookSetup is an account whose single send went out through the outbox
// to ann@example.com, bob@example.org and cy@example.org, on an app with
// the given webhooks configured.
type hookSetup struct {
	t     *testing.T
	a     *testApp
	acct  int64
	send  *models.SingleSend  // the send the reports are about
	later *models.SingleSend  // with twoSends: a later send to the same people
	sent  map[string]sentMail // send's messages, by recipient
}

// sentMail is what the outbox kept of one message: its headers and its
// envelope sender (the VERP return path).
type sentMail struct {
	messageID, sendUtr, returnPath string
	metadata                       string // X-PM-Metadata-herald
}

// token is the VERP token of the message's return path.
func (m sentMail) token() string {
	_, tok, _ := strings.Cut(m.returnPath, "+b")
	tok, _, _ = strings.Cut(tok, "@")
	return tok
}

// With twoSends a second send ("Summer") goes to the same people after
// it: a report that names its message must count on "Spring", not on
// the recipient's latest message.
func newHookSetup(t *testing.T, opt web.WebhookOptions, twoSends bool) *hookSetup {
	t.Helper()
	return newHookSetupTo(t, opt, twoSends)
}

// newHookSetupTo is newHookSetup whose send also goes to more addresses.
func newHookSetupTo(t *testing.T, opt web.WebhookOptions, twoSends bool, more ...string) *hookSetup {
	t.Helper()
	ss := newSendSetupWith(t, web.Options{Webhooks: opt})
	au := ss.a.audience(ss.acct)
	for _, email := range more {
		au.contact(ss.ctype, email, "", "", "US", nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sg, err := ss.a.svc.NewSending(ctx, service.SendingConfig{Conns: 2, Tick: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); sg.Run(ctx) }()
	run := func(name string) *models.SingleSend {
		send := ss.create(name)
		eventually.True(t, 20*time.Second, "the send did not complete", func() bool { return ss.get(send.Utr).Status == models.SendCompleted })
		return send
	}
	send := run("Spring")
	var later *models.SingleSend
	if twoSends {
		later = run("Summer")
	}
	cancel()
	<-done
	h := &hookSetup{t: t, a: ss.a, acct: ss.acct, send: send, later: later, sent: map[string]sentMail{}}
	err = ss.a.svc.Outbox.Each(context.Background(), ss.acct, service.ListFilter{}, func(m *models.OutboxMessage) error {
		m, err := ss.a.svc.Outbox.Get(context.Background(), ss.acct, m.ID)
		if err != nil {
			return err
		}
		msg, err := mail.ReadMessage(bytes.NewReader(m.Message))
		if err != nil {
			return err
		}
		if msg.Header.Get("X-Herald-Send") != send.Utr {
			return nil
		}
		h.sent[m.RcptTo] = sentMail{messageID: msg.Header.Get("Message-ID"), sendUtr: msg.Header.Get("X-Herald-Send"), returnPath: m.MailFrom,
			metadata: msg.Header.Get("X-PM-Metadata-herald")}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range append([]string{"ann@example.com", "bob@example.org", "cy@example.org"}, more...) {
		// The token is in the return path, in the Message-ID and in the
		// metadata header Postmark gives back.
		if m := h.sent[who]; m.messageID == "" || m.sendUtr != send.Utr || !strings.Contains(m.returnPath, "+b") ||
			m.token() == "" || m.metadata != m.token() || !strings.HasPrefix(m.messageID, "<b"+m.token()+"@") {
			t.Fatalf("the outbox has no proper message to %s: %+v", who, m)
		}
	}
	return h
}

// newSendSetupWith is newSendSetup's account, sender, group and three
// contacts on an app with options, the outbox as its transport.
func newSendSetupWith(t *testing.T, opt web.Options) *sendSetup {
	t.Helper()
	return newSendSetupOn(t, newTestApp(t, opt))
}

// newSendSetupOn is newSendSetupWith on an app of the test's own.
func newSendSetupOn(t *testing.T, a *testApp) *sendSetup {
	t.Helper()
	ctx := context.Background()
	c, acct := a.account("Ada", "ada@example.com")
	s := &sendSetup{t: t, a: a, c: c, acct: acct}
	snd, err := a.svc.Senders.Create(ctx, acct, service.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com",
		ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
	s.sender = snd.ID
	g, err := a.svc.Groups.Create(ctx, acct, service.GroupInput{GroupName: "Members only", Description: "Monthly news", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	s.group = g.ID
	au := a.audience(acct)
	s.ctype = au.contactType("Customers")
	au.contact(s.ctype, "ann@example.com", "Ann", "A", "US", nil)
	au.contact(s.ctype, "bob@example.org", "Bob", "B", "US", nil)
	au.contact(s.ctype, "cy@example.org", "Cy", "C", "US", nil)
	return s
}

// counts are a send's feedback counters.
type counts struct{ bounces, soft, spam, unsubscribes, blocks int64 }

func (h *hookSetup) counts() counts { h.t.Helper(); return h.countsOf(h.send) }

func (h *hookSetup) countsOf(send *models.SingleSend) counts {
	h.t.Helper()
	ss, err := h.a.svc.SingleSends.Get(context.Background(), h.acct, send.Utr)
	if err != nil {
		h.t.Fatal(err)
	}
	return counts{ss.Bounces, ss.SoftBounces, ss.SpamReports, ss.Unsubscribes, ss.Blocks}
}

func (h *hookSetup) wantCounts(want counts) {
	h.t.Helper()
	if got := h.counts(); got != want {
		h.t.Fatalf("counters %+v, want %+v", got, want)
	}
	if h.later != nil {
		if got := h.countsOf(h.later); got != (counts{}) {
			h.t.Fatalf("the later send counted %+v: the report was not matched to its message", got)
		}
	}
}

// suppression is the account's suppression of email, or nil.
func (h *hookSetup) suppression(email string) *models.Suppression {
	h.t.Helper()
	var s []models.Suppression
	if err := h.a.svc.DB.R.Where("user_id = ? AND email = ?", h.acct, email).Find(&s).Error; err != nil {
		h.t.Fatal(err)
	}
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// globallyUnsubscribed says whether email is on the account's global list.
func (h *hookSetup) globallyUnsubscribed(email string) bool {
	h.t.Helper()
	var n int64
	if err := h.a.svc.DB.R.Model(&models.Unsubscriber{}).
		Where("user_id = ? AND email_address = ? AND unsubscribe_groups_id IS NULL", h.acct, email).Count(&n).Error; err != nil {
		h.t.Fatal(err)
	}
	return n > 0
}

// wantUntied checks the untied reports kept since the first n: one per
// want, each "source/why/email" in order, from the test's caller.
func (h *hookSetup) wantUntied(n int, want ...string) int {
	h.t.Helper()
	var rows []models.UntiedReport
	if err := h.a.svc.DB.R.Order("id").Find(&rows).Error; err != nil {
		h.t.Fatal(err)
	}
	var got []string
	for _, r := range rows[min(n, len(rows)):] {
		if r.RemoteIP == "" {
			h.t.Fatalf("untied report %+v without the caller's IP", r)
		}
		got = append(got, r.Source+"/"+r.Why+"/"+r.Email)
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		h.t.Fatalf("untied reports %q, want %q", got, want)
	}
	return len(rows)
}

// postHook sends a webhook request; headers are name, value pairs.
func postHook(t *testing.T, a *testApp, path string, body []byte, headers ...string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := a.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.Header.Get("Set-Cookie") != "" {
		t.Fatalf("%s set a cookie: no session on webhooks", path)
	}
	return res.StatusCode, string(b)
}

func wantHook(t *testing.T, status int, body string, want int) {
	t.Helper()
	if status != want {
		t.Fatalf("status %d, want %d: %s", status, want, body)
	}
}

// ---- Amazon SES through SNS ----

const testTopic = "arn:aws:sns:us-west-2:123456789012:herald-ses"

// snsSigner is a self-signed certificate standing for AWS's.
type snsSigner struct {
	key     *rsa.PrivateKey
	certPEM []byte
}

func newSNSSigner(t *testing.T) *snsSigner {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sns.us-west-2.amazonaws.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &snsSigner{key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func (s *snsSigner) file(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sns.pem")
	if err := os.WriteFile(p, s.certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// snsFields are the order SNS signs them in (Subject only when present).
var snsFields = map[string][]string{
	"Notification":             {"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"},
	"SubscriptionConfirmation": {"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"},
}

// sign signs an SNS message as SNS does, with SignatureVersion version.
func (s *snsSigner) sign(t *testing.T, m map[string]string, version string) []byte {
	t.Helper()
	var text strings.Builder
	for _, k := range snsFields[m["Type"]] {
		if v, ok := m[k]; ok {
			text.WriteString(k + "\n" + v + "\n")
		}
	}
	var sig []byte
	var err error
	if version == "1" {
		sum := sha1.Sum([]byte(text.String()))
		sig, err = rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA1, sum[:])
	} else {
		sum := sha256.Sum256([]byte(text.String()))
		sig, err = rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
	}
	if err != nil {
		t.Fatal(err)
	}
	m["SignatureVersion"] = version
	m["Signature"] = base64.StdEncoding.EncodeToString(sig)
	b, _ := json.Marshal(m)
	return b
}

// snsNotification wraps an SES notification in an SNS Notification.
func snsNotification(sesJSON string) map[string]string {
	return map[string]string{
		"Type": "Notification", "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324", "TopicArn": testTopic,
		"Message": sesJSON, "Timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"SigningCertURL": "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem",
		"UnsubscribeURL": "https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=" + testTopic + ":1",
	}
}

// The documented SES bounce notification (AWS "Amazon SNS notification
// contents", bounce example), about one of herald's messages.
func sesBounce(bounceType, to, status, diag string, mailObj string) string {
	return `{"notificationType":"Bounce","bounce":{"bounceType":"` + bounceType + `","bounceSubType":"General",
"bouncedRecipients":[{"emailAddress":"` + to + `","action":"failed","status":"` + status + `","diagnosticCode":"` + diag + `"}],
"timestamp":"` + time.Now().UTC().Format(time.RFC3339) + `","feedbackId":"0102015fd91a6479-ae22395c-000000",
"remoteMtaIp":"192.0.2.4","reportingMTA":"dsn; a4-8.smtp-out.us-west-2.amazonses.com"},"mail":` + mailObj + `}`
}

func sesMailObj(source, to string, headers string, common string) string {
	return `{"timestamp":"` + time.Now().UTC().Format(time.RFC3339) + `","source":"` + source + `",
"sourceArn":"arn:aws:ses:us-west-2:123456789012:identity/shop.example.com","sourceIp":"192.0.2.1",
"sendingAccountId":"123456789012","messageId":"0102015fd91a5ca3-93c245fe-e333-46ae-8fed-96160d20cfab-000000",
"destination":["` + to + `"],"headersTruncated":false,"headers":[` + headers + `],"commonHeaders":{` + common + `}}`
}

func TestWebhookSES(t *testing.T) {
	t.Parallel()
	signer := newSNSSigner(t)
	h := newHookSetup(t, web.WebhookOptions{SESTopicARNs: []string{testTopic}, SESCertFile: signer.file(t)}, true)
	ann, bob, cy := h.sent["ann@example.com"], h.sent["bob@example.org"], h.sent["cy@example.org"]

	// A permanent bounce of ann, named by commonHeaders.messageId,
	// SignatureVersion 1.
	bounce := sesBounce("Permanent", "ann@example.com", "5.1.1", "smtp; 550 5.1.1 user unknown",
		sesMailObj("news@shop.example.com", "ann@example.com", `{"name":"From","value":"news@shop.example.com"}`,
			`"from":["Shop <news@shop.example.com>"],"messageId":"`+ann.messageID+`","subject":"Hello"`))
	body := signer.sign(t, snsNotification(bounce), "1")
	for range 2 { // the same notification twice counts once
		status, text := postHook(t, h.a, "/webhooks/ses", body)
		wantHook(t, status, text, http.StatusOK)
	}
	h.wantCounts(counts{bounces: 1})
	if s := h.suppression("ann@example.com"); s == nil || s.StatusCode != "5.1.1" || s.Source != "ses" || !strings.Contains(s.Diagnostic, "user unknown") {
		t.Fatalf("ann's suppression: %+v", s)
	}

	// A complaint about bob, named by the Message-ID in mail.headers only,
	// SignatureVersion 2.
	complaint := `{"notificationType":"Complaint","complaint":{"userAgent":"AnyCompany Feedback Loop (V0.01)",
"complainedRecipients":[{"emailAddress":"bob@example.org"}],"complaintFeedbackType":"abuse",
"arrivalDate":"2016-01-27T14:59:38.237Z","timestamp":"2016-01-27T14:59:38.237Z","feedbackId":"000001378603177f-18c07c78-000000"},
"mail":` + sesMailObj("news@shop.example.com", "bob@example.org",
		`{"name":"Message-ID","value":"`+bob.messageID+`"}`, `"subject":"Hello"`) + `}`
	status, text := postHook(t, h.a, "/webhooks/ses", signer.sign(t, snsNotification(complaint), "2"))
	wantHook(t, status, text, http.StatusOK)
	h.wantCounts(counts{bounces: 1, spam: 1, unsubscribes: 1})
	if !h.globallyUnsubscribed("bob@example.org") {
		t.Fatal("bob's complaint did not unsubscribe him")
	}

	// A transient bounce of cy, named by its return path (mail.source)
	// only: a soft bounce, no suppression.
	soft := sesBounce("Transient", "cy@example.org", "4.2.2", "smtp; 452 4.2.2 Mailbox full", sesMailObj(cy.returnPath, "cy@example.org", "", ""))
	status, text = postHook(t, h.a, "/webhooks/ses", signer.sign(t, snsNotification(soft), "2"))
	wantHook(t, status, text, http.StatusOK)
	h.wantCounts(counts{bounces: 1, soft: 1, spam: 1, unsubscribes: 1})
	if h.suppression("cy@example.org") != nil {
		t.Fatal("one soft bounce suppressed cy")
	}

	// A return path whose token is forged names nothing, whatever else the
	// notification says: 200, nothing changes.
	forgedPath := strings.Replace(cy.returnPath, "+b", "+baaaa", 1)
	n := snsNotification(sesBounce("Permanent", "cy@example.org", "5.1.1", "smtp; 550 5.1.1 user unknown", sesMailObj(forgedPath, "cy@example.org", "", "")))
	n["Subject"] = "Amazon SES Email Event Notification"
	status, text = postHook(t, h.a, "/webhooks/ses", signer.sign(t, n, "2"))
	wantHook(t, status, text, http.StatusOK)
	h.wantCounts(counts{bounces: 1, soft: 1, spam: 1, unsubscribes: 1})
	if h.suppression("cy@example.org") != nil {
		t.Fatal("a forged return path suppressed cy")
	}
	seen := h.wantUntied(0, "ses/token does not verify/cy@example.org")

	// Neither a return path nor a Message-ID of herald's: the send's
	// X-Herald-Send and the address name nothing (anyone who got the send
	// can read them), nor does SES's own Message-ID. 200, nothing changes.
	for _, mail := range []string{
		sesMailObj("news@shop.example.com", "cy@example.org", `{"name":"X-Herald-Send","value":"`+cy.sendUtr+`"}`, ""),
		sesMailObj("news@shop.example.com", "cy@example.org", "", `"messageId":"<0102015fd91a5ca3@email.amazonses.com>"`),
	} {
		status, text = postHook(t, h.a, "/webhooks/ses", signer.sign(t, snsNotification(sesBounce("Permanent", "cy@example.org", "5.1.1", "smtp; 550 5.1.1 user unknown", mail)), "2"))
		wantHook(t, status, text, http.StatusOK)
	}
	h.wantCounts(counts{bounces: 1, soft: 1, spam: 1, unsubscribes: 1})
	if h.suppression("cy@example.org") != nil {
		t.Fatal("an untied bounce suppressed cy")
	}
	seen = h.wantUntied(seen, "ses/no token/cy@example.org", "ses/message-id does not verify/cy@example.org")

	// A delivery and an unknown notification type: 200, nothing changes.
	delivered := `{"notificationType":"Delivery","mail":` + sesMailObj("news@shop.example.com", "cy@example.org", "", "") +
		`,"delivery":{"timestamp":"2016-01-27T14:59:38.237Z","recipients":["cy@example.org"],"processingTimeMillis":546,
"reportingMTA":"a8-70.smtp-out.amazonses.com","smtpResponse":"250 ok:  Message 64111812 accepted","remoteMtaIp":"127.0.2.0"}}`
	for _, n := range []string{delivered, `{"notificationType":"Received"}`, `not json`} {
		status, text = postHook(t, h.a, "/webhooks/ses", signer.sign(t, snsNotification(n), "2"))
		wantHook(t, status, text, http.StatusOK)
	}

	// Forged: the message changed after signing; another topic; a
	// signature by another key; an unknown SignatureVersion.
	m := snsNotification(sesBounce("Permanent", "cy@example.org", "5.1.1", "smtp; 550 5.1.1 user unknown", sesMailObj(cy.returnPath, "cy@example.org", "", "")))
	signed := signer.sign(t, m, "2")
	forged := bytes.Replace(signed, []byte("Permanent"), []byte("Transient"), 1)
	other := snsNotification(sesBounce("Permanent", "cy@example.org", "5.1.1", "x", sesMailObj(cy.returnPath, "cy@example.org", "", "")))
	other["TopicArn"] = "arn:aws:sns:us-west-2:999999999999:someone-elses"
	stranger := newSNSSigner(t)
	for name, b := range map[string][]byte{
		"altered":   forged,
		"topic":     signer.sign(t, other, "2"),
		"other key": stranger.sign(t, snsNotification(sesBounce("Permanent", "cy@example.org", "5.1.1", "x", sesMailObj(cy.returnPath, "cy@example.org", "", ""))), "2"),
		"version":   bytes.Replace(signed, []byte(`"SignatureVersion":"2"`), []byte(`"SignatureVersion":"3"`), 1),
	} {
		status, text = postHook(t, h.a, "/webhooks/ses", b)
		if status != http.StatusUnauthorized {
			t.Fatalf("%s: status %d, want 401: %s", name, status, text)
		}
	}
	h.wantCounts(counts{bounces: 1, soft: 1, spam: 1, unsubscribes: 1})
	if h.suppression("cy@example.org") != nil {
		t.Fatal("a forged notification suppressed cy")
	}
	h.wantUntied(seen)
}

// Without a pinned certificate, herald fetches the one SigningCertURL
// names (once), and confirms a subscription by visiting SubscribeURL:
// both only over https from SNS's host (here a test TLS server allowed by
// the test-only option).
func TestWebhookSESSubscription(t *testing.T) {
	t.Parallel()
	signer := newSNSSigner(t)
	var certFetches, visits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/SimpleNotificationService-test.pem":
			certFetches.Add(1)
			_, _ = w.Write(signer.certPEM)
		case "/confirm":
			if r.URL.Query().Get("Token") == "2336412f37fb687f5d51e6e2425dacbba" {
				visits.Add(1)
			}
			_, _ = io.WriteString(w, "<ConfirmSubscriptionResponse/>")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "https://")
	a := newTestApp(t, web.Options{Webhooks: web.WebhookOptions{SESTopicARNs: []string{testTopic}, SNSHosts: []string{host}, Client: srv.Client()}})

	confirm := func(subscribeURL, certURL string) map[string]string {
		return map[string]string{
			"Type": "SubscriptionConfirmation", "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
			"Token": "2336412f37fb687f5d51e6e2425dacbba", "TopicArn": testTopic,
			"Message":      "You have chosen to subscribe to the topic " + testTopic + ".\nTo confirm the subscription, visit the SubscribeURL included in this message.",
			"SubscribeURL": subscribeURL, "Timestamp": "2012-04-26T20:45:04.751Z", "SigningCertURL": certURL,
		}
	}
	certURL := srv.URL + "/SimpleNotificationService-test.pem"
	status, text := postHook(t, a, "/webhooks/ses", signer.sign(t, confirm(srv.URL+"/confirm?Action=ConfirmSubscription&TopicArn="+testTopic+"&Token=2336412f37fb687f5d51e6e2425dacbba", certURL), "1"))
	wantHook(t, status, text, http.StatusOK)
	if visits.Load() != 1 {
		t.Fatalf("SubscribeURL visited %d times, want 1", visits.Load())
	}

	// A notification afterwards: the certificate is not fetched again.
	n := snsNotification(`{"notificationType":"Delivery","mail":{"source":"x@example.net"},"delivery":{"recipients":["nobody@example.net"]}}`)
	n["SigningCertURL"] = certURL
	status, text = postHook(t, a, "/webhooks/ses", signer.sign(t, n, "2"))
	wantHook(t, status, text, http.StatusOK)
	if certFetches.Load() != 1 {
		t.Fatalf("the certificate was fetched %d times, want 1", certFetches.Load())
	}

	// A SubscribeURL elsewhere (plain http, another host) is not visited;
	// a certificate elsewhere is not fetched: the message is refused.
	status, _ = postHook(t, a, "/webhooks/ses", signer.sign(t, confirm("http://"+host+"/confirm?Token=2336412f37fb687f5d51e6e2425dacbba", certURL), "2"))
	if status == http.StatusOK || visits.Load() != 1 {
		t.Fatalf("an http SubscribeURL: status %d, visits %d", status, visits.Load())
	}
	for _, bad := range []string{"https://sns.us-west-2.amazonaws.com.example.net/x.pem", "http://" + host + "/SimpleNotificationService-test.pem", "https://" + host + "/cert.txt"} {
		status, text = postHook(t, a, "/webhooks/ses", signer.sign(t, confirm(srv.URL+"/confirm?Token=2336412f37fb687f5d51e6e2425dacbba", bad), "2"))
		if status != http.StatusUnauthorized {
			t.Fatalf("certificate at %s: status %d, want 401: %s", bad, status, text)
		}
	}
	if visits.Load() != 1 || certFetches.Load() != 1 {
		t.Fatalf("visits %d, certificate fetches %d after refused messages", visits.Load(), certFetches.Load())
	}

	// Without HERALD_SES_TOPIC_ARN: signed notifications of any topic are
	// taken (decisions.md 7), but no subscription is confirmed by herald,
	// so a stranger cannot subscribe it to a topic of theirs.
	open := newTestApp(t, web.Options{Webhooks: web.WebhookOptions{SNSHosts: []string{host}, Client: srv.Client()}})
	stranger := confirm(srv.URL+"/confirm?Action=ConfirmSubscription&Token=2336412f37fb687f5d51e6e2425dacbba", certURL)
	stranger["TopicArn"] = "arn:aws:sns:us-west-2:999999999999:someone-elses"
	status, text = postHook(t, open, "/webhooks/ses", signer.sign(t, stranger, "2"))
	wantHook(t, status, text, http.StatusOK)
	if visits.Load() != 1 || !strings.Contains(text, "not confirmed") {
		t.Fatalf("without a topic list: SubscribeURL visited (%d visits in all), answer %s", visits.Load(), text)
	}
	status, text = postHook(t, open, "/webhooks/ses", signer.sign(t, n, "2"))
	wantHook(t, status, text, http.StatusOK)
	status, _ = postHook(t, open, "/webhooks/ses", bytes.Replace(signer.sign(t, n, "2"), []byte("Delivery"), []byte("Bounce"), 1))
	if status != http.StatusUnauthorized {
		t.Fatalf("without a topic list, an altered notification: status %d, want 401", status)
	}
}

// ---- SendGrid ----

func TestWebhookSendGrid(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	h := newHookSetup(t, web.WebhookOptions{SendGridVerificationKey: base64.StdEncoding.EncodeToString(der)}, true)
	ann, bob, cy := h.sent["ann@example.com"], h.sent["bob@example.org"], h.sent["cy@example.org"]
	sign := func(ts string, body []byte) string {
		sum := sha256.Sum256(append([]byte(ts), body...))
		sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(sig)
	}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	ts := time.Now().Unix()
	// SendGrid's documented events (Event Webhook reference), about the
	// send's messages by their smtp-id; ann's bounce with a mailbox code
	// (the documented "500 unknown recipient" names none: see
	// TestWebhookVerdicts).
	events := `[
{"email":"ann@example.com","timestamp":` + itoa(ts) + `,"smtp-id":"` + ann.messageID + `","bounce_classification":"Invalid Address",
 "event":"bounce","category":["cat facts"],"sg_event_id":"6g4ZI7SA-xmRDv57GoPIPw==","sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0",
 "reason":"550 5.1.1 The email account that you tried to reach does not exist.","status":"5.1.1","type":"bounce"},
{"email":"bob@example.org","timestamp":` + itoa(ts) + `,"smtp-id":"` + bob.messageID + `","event":"spamreport",
 "sg_event_id":"37nvH5QBz858KGVYCM4uOA==","sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0"},
{"email":"cy@example.org","timestamp":` + itoa(ts) + `,"smtp-id":"` + cy.messageID + `","event":"deferred",
 "response":"400 try again later","attempt":"5","sg_event_id":"t7LEShmowp86DTdUW8M-GQ==","sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0"},
{"email":"cy@example.org","timestamp":` + itoa(ts) + `,"smtp-id":"` + cy.messageID + `","event":"dropped","reason":"Unsubscribed Address","status":"5.0.0"},
{"email":"cy@example.org","timestamp":` + itoa(ts) + `,"smtp-id":"` + cy.messageID + `","event":"open","useragent":"Mozilla/4.0","ip":"255.255.255.255"},
{"email":"ann@example.com","timestamp":` + itoa(ts) + `,"smtp-id":"` + ann.messageID + `","event":"delivered","response":"250 OK"}
]`
	body := []byte(events)
	for range 2 {
		status, text := postHook(t, h.a, "/webhooks/sendgrid", body,
			"X-Twilio-Email-Event-Webhook-Signature", sign(now, body), "X-Twilio-Email-Event-Webhook-Timestamp", now)
		wantHook(t, status, text, http.StatusOK)
	}
	// cy's deferral counts nothing: SendGrid is still trying.
	h.wantCounts(counts{bounces: 1, spam: 1, unsubscribes: 1})
	if s := h.suppression("ann@example.com"); s == nil || s.Source != "sendgrid" || s.StatusCode != "5.1.1" {
		t.Fatalf("ann's suppression: %+v", s)
	}
	if !h.globallyUnsubscribed("bob@example.org") || h.suppression("cy@example.org") != nil {
		t.Fatal("bob's spam report or cy's deferral was mishandled")
	}

	// A "blocked" bounce is a block; a drop for an address SendGrid saw
	// bounce before is a soft bounce: herald did not see why.
	more := []byte(`[{"email":"bob@example.org","timestamp":` + itoa(ts) + `,"smtp-id":"` + bob.messageID + `","event":"bounce","type":"blocked","status":"4.0.0","reason":"blocked by policy"},
{"email":"cy@example.org","timestamp":` + itoa(ts) + `,"smtp-id":"` + cy.messageID + `","event":"dropped","reason":"Bounced Address","status":"5.0.0"}]`)
	status, text := postHook(t, h.a, "/webhooks/sendgrid", more,
		"X-Twilio-Email-Event-Webhook-Signature", sign(now, more), "X-Twilio-Email-Event-Webhook-Timestamp", now)
	wantHook(t, status, text, http.StatusOK)
	h.wantCounts(counts{bounces: 1, soft: 1, spam: 1, unsubscribes: 1, blocks: 1})
	if h.suppression("bob@example.org") != nil || h.suppression("cy@example.org") != nil {
		t.Fatal("neither a block nor a dropped bounced address suppresses")
	}

	// An smtp-id that is SendGrid's own, none at all: 200, nothing changes.
	untied := []byte(`[{"email":"bob@example.org","timestamp":` + itoa(ts) + `,"smtp-id":"<14c5d75ce93.dfd.64b469@ismtpd-555>","event":"bounce","type":"bounce","status":"5.1.1"},
{"email":"bob@example.org","timestamp":` + itoa(ts) + `,"event":"spamreport"}]`)
	status, text = postHook(t, h.a, "/webhooks/sendgrid", untied,
		"X-Twilio-Email-Event-Webhook-Signature", sign(now, untied), "X-Twilio-Email-Event-Webhook-Timestamp", now)
	wantHook(t, status, text, http.StatusOK)
	h.wantCounts(counts{bounces: 1, soft: 1, spam: 1, unsubscribes: 1, blocks: 1})
	if h.suppression("bob@example.org") != nil {
		t.Fatal("an untied event suppressed bob")
	}
	seen := h.wantUntied(0, "sendgrid/message-id does not verify/bob@example.org", "sendgrid/no token/bob@example.org")

	// Forged, stale, unsigned: 401, nothing changes.
	forged := []byte(`[{"email":"bob@example.org","timestamp":` + itoa(ts) + `,"smtp-id":"` + bob.messageID + `","event":"bounce","type":"bounce","status":"5.1.1"}]`)
	stale := strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
	for name, hdrs := range map[string][]string{
		"forged":   {"X-Twilio-Email-Event-Webhook-Signature", sign(now, body), "X-Twilio-Email-Event-Webhook-Timestamp", now},
		"stale":    {"X-Twilio-Email-Event-Webhook-Signature", sign(stale, forged), "X-Twilio-Email-Event-Webhook-Timestamp", stale},
		"unsigned": {},
	} {
		status, text := postHook(t, h.a, "/webhooks/sendgrid", forged, hdrs...)
		if status != http.StatusUnauthorized {
			t.Fatalf("%s: status %d, want 401: %s", name, status, text)
		}
	}
	h.wantCounts(counts{bounces: 1, soft: 1, spam: 1, unsubscribes: 1, blocks: 1})
	if h.suppression("bob@example.org") != nil {
		t.Fatal("a forged event suppressed bob")
	}
	h.wantUntied(seen)
}

// ---- Postmark ----

func TestWebhookPostmark(t *testing.T) {
	t.Parallel()
	h := newHookSetup(t, web.WebhookOptions{WebhookUser: "postmark", WebhookPassword: "s3cret-hook-pass"}, false)
	ann, bob, cy := h.sent["ann@example.com"], h.sent["bob@example.org"], h.sent["cy@example.org"]
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("postmark:s3cret-hook-pass"))
	// Postmark's documented bounce webhook body; its Metadata is what the
	// message's X-PM-Metadata-* headers said.
	record := func(recordType, typ, email, details, metadata string) []byte {
		return []byte(`{"RecordType":"` + recordType + `","MessageStream":"outbound","ID":4323372036854775807,"Type":"` + typ + `","TypeCode":1,
"Name":"Hard bounce","Tag":"Test","MessageID":"883953f4-6105-42a2-a16a-77a8eac79483","ServerID":23,
"Description":"The server was unable to deliver your message (ex: unknown user, mailbox not found).",
"Details":"` + details + `","Email":"` + email + `","From":"news@shop.example.com",
"BouncedAt":"` + time.Now().UTC().Format(time.RFC3339) + `","DumpAvailable":true,"Inactive":true,"CanActivate":true,
"Subject":"Hello","Content":"Return-Path:....","Metadata":{"a_key":"a_value"` + metadata + `}}`)
	}
	herald := func(m sentMail) string { return `,"herald":"` + m.metadata + `"` }
	hard := record("Bounce", "HardBounce", "ann@example.com", "smtp;550 5.1.1 The email account that you tried to reach does not exist.", herald(ann))
	for range 2 {
		status, text := postHook(t, h.a, "/webhooks/postmark", hard, "Authorization", auth)
		wantHook(t, status, text, http.StatusOK)
	}
	h.wantCounts(counts{bounces: 1})
	if s := h.suppression("ann@example.com"); s == nil || s.Source != "postmark" || s.StatusCode != "5.1.1" {
		t.Fatalf("ann's suppression: %+v", s)
	}
	// The documented spam complaint; a transient bounce (Postmark's
	// "Message delayed": a deferral, nothing counted) and a soft bounce.
	complaint := []byte(`{"RecordType":"SpamComplaint","MessageStream":"outbound","ID":42,"Type":"SpamComplaint","TypeCode":512,
"Name":"Spam complaint","Tag":"Test","MessageID":"00000000-0000-0000-0000-000000000000","ServerID":1234,"Description":"",
"Details":"Test spam complaint details","Email":"bob@example.org","From":"news@shop.example.com","BouncedAt":"` + time.Now().UTC().Format(time.RFC3339) + `",
"DumpAvailable":true,"Inactive":true,"CanActivate":false,"Subject":"Hello","Content":"<Abuse report dump content>","Metadata":{"Herald":"` + bob.metadata + `"}}`)
	for _, b := range [][]byte{complaint, record("Bounce", "Transient", "cy@example.org", "smtp;421 4.4.2 timed out", herald(cy)),
		record("Bounce", "SoftBounce", "cy@example.org", "smtp;452 4.2.2 Mailbox full", herald(cy)),
		record("Bounce", "AutoResponder", "cy@example.org", "Out of office", herald(cy)),
		[]byte(`{"RecordType":"Delivery","ServerID":23,"MessageStream":"outbound","MessageID":"883953f4-6105-42a2-a16a-77a8eac79483",
"Recipient":"cy@example.org","Tag":"welcome-email","DeliveredAt":"2019-11-05T16:33:54.9070259Z","Details":"Test delivery webhook details","Metadata":{}}`),
		[]byte(`{"RecordType":"Open","Recipient":"cy@example.org"}`)} {
		status, text := postHook(t, h.a, "/webhooks/postmark", b, "Authorization", auth)
		wantHook(t, status, text, http.StatusOK)
	}
	h.wantCounts(counts{bounces: 1, soft: 1, spam: 1, unsubscribes: 1})
	if !h.globallyUnsubscribed("bob@example.org") || h.suppression("cy@example.org") != nil {
		t.Fatal("bob's complaint or cy's transient and soft bounces were mishandled")
	}

	// A record whose metadata carries no token of herald's (the message
	// did not go through herald, or the header was dropped), or a forged
	// one: 200, nothing changes, however real the address.
	for _, b := range [][]byte{record("Bounce", "HardBounce", "cy@example.org", "smtp;550 5.1.1 unknown", ""),
		record("Bounce", "HardBounce", "cy@example.org", "smtp;550 5.1.1 unknown", `,"herald":"`+strings.Repeat("a", len(cy.metadata))+`"`)} {
		status, text := postHook(t, h.a, "/webhooks/postmark", b, "Authorization", auth)
		wantHook(t, status, text, http.StatusOK)
	}
	h.wantCounts(counts{bounces: 1, soft: 1, spam: 1, unsubscribes: 1})
	if h.suppression("cy@example.org") != nil {
		t.Fatal("an untied record suppressed cy")
	}
	seen := h.wantUntied(0, "postmark/no token/cy@example.org", "postmark/token does not verify/cy@example.org")

	// A wrong password, another user, no auth: 401, nothing changes.
	bad := record("Bounce", "HardBounce", "cy@example.org", "smtp;550 5.1.1 unknown", herald(cy))
	for _, a := range []string{
		"Basic " + base64.StdEncoding.EncodeToString([]byte("postmark:wrong")),
		"Basic " + base64.StdEncoding.EncodeToString([]byte("someone:s3cret-hook-pass")),
		"Bearer s3cret-hook-pass", "",
	} {
		status, text := postHook(t, h.a, "/webhooks/postmark", bad, "Authorization", a)
		if status != http.StatusUnauthorized {
			t.Fatalf("auth %q: status %d, want 401: %s", a, status, text)
		}
	}
	h.wantCounts(counts{bounces: 1, soft: 1, spam: 1, unsubscribes: 1})
	if h.suppression("cy@example.org") != nil {
		t.Fatal("an unauthenticated bounce suppressed cy")
	}
	h.wantUntied(seen)
}

// ---- Mailgun ----

func TestWebhookMailgun(t *testing.T) {
	t.Parallel()
	const signingKey = "key-7e55f8a0c5a5b6e4d3c2b1a0"
	h := newHookSetup(t, web.WebhookOptions{MailgunSigningKey: signingKey}, true)
	ann, bob, cy := h.sent["ann@example.com"], h.sent["bob@example.org"], h.sent["cy@example.org"]
	signature := func(key, ts, token string) string {
		m := hmac.New(sha256.New, []byte(key))
		m.Write([]byte(ts + token))
		return `{"timestamp":"` + ts + `","token":"` + token + `","signature":"` + hex.EncodeToString(m.Sum(nil)) + `"}`
	}
	ts := itoa(time.Now().Unix())
	// Mailgun's documented failed (permanent) event, about ann's message
	// by its message-id header (Mailgun keeps it without brackets).
	failed := func(severity, to, mid, code, msg, sender string) string {
		return `"event-data":{"id":"G9Bn5sl1TC6nu79C8C0bwg","timestamp":` + ts + `.1234,"log-level":"error","event":"failed",
"severity":"` + severity + `","reason":"bounce","envelope":{"sender":"` + sender + `","transport":"smtp","targets":"` + to + `"},
"delivery-status":{"attempt-no":1,"message":"` + msg + `","code":` + code + `,"description":"","session-seconds":0.1},
"message":{"headers":{"to":"` + to + `","message-id":"` + strings.Trim(mid, "<>") + `","from":"news@shop.example.com","subject":"Hello"},"attachments":[],"size":111},
"recipient":"` + to + `","recipient-domain":"example.com","tags":[],"user-variables":{}}`
	}
	post := func(sig, event string) (int, string) {
		return postHook(t, h.a, "/webhooks/mailgun", []byte(`{"signature":`+sig+`,`+event+`}`))
	}
	hard := failed("permanent", "ann@example.com", ann.messageID, "550", "5.1.1 The email account that you tried to reach does not exist", "news@shop.example.com")
	// The same event twice (Mailgun signs each attempt anew) counts once.
	for _, token := range []string{"a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0", "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de1"} {
		status, text := post(signature(signingKey, ts, token), hard)
		wantHook(t, status, text, http.StatusOK)
	}
	h.wantCounts(counts{bounces: 1})
	if s := h.suppression("ann@example.com"); s == nil || s.Source != "mailgun" || s.StatusCode != "5.1.1" {
		t.Fatalf("ann's suppression: %+v", s)
	}
	complained := `"event-data":{"id":"-Agny091SquKnsrW2NEKUA","timestamp":` + ts + `,"log-level":"warn","event":"complained",
"envelope":{"sending-ip":"173.193.210.33"},"flags":{"is-test-mode":false},
"message":{"headers":{"to":"bob@example.org","message-id":"` + strings.Trim(bob.messageID, "<>") + `","from":"news@shop.example.com","subject":"Hello"},"size":111},
"recipient":"bob@example.org","tags":[],"user-variables":{}}`
	// cy's temporary failure named by the return path only: a deferral
	// (Mailgun retries it), nothing counted.
	temp := failed("temporary", "cy@example.org", "", "452", "4.2.2 mailbox full", cy.returnPath)
	for i, e := range []string{complained, temp, `"event-data":{"event":"opened","recipient":"cy@example.org"}`} {
		status, text := post(signature(signingKey, ts, "token-"+itoa(int64(i))+"-0123456789012345678901234567890123456789"), e)
		wantHook(t, status, text, http.StatusOK)
	}
	h.wantCounts(counts{bounces: 1, spam: 1, unsubscribes: 1})
	if !h.globallyUnsubscribed("bob@example.org") || h.suppression("cy@example.org") != nil {
		t.Fatal("bob's complaint or cy's temporary failure was mishandled")
	}

	// A permanent failure for policy (5.7.1) is a block (decisions.md 8):
	// counted in blocks, never a suppression.
	block := failed("permanent", "cy@example.org", cy.messageID, "550", "5.7.1 Message rejected as spam by content filtering", "news@shop.example.com")
	status, text := post(signature(signingKey, ts, "block-0123456789012345678901234567890123456789012"), block)
	wantHook(t, status, text, http.StatusOK)
	h.wantCounts(counts{bounces: 1, spam: 1, unsubscribes: 1, blocks: 1})
	if h.suppression("cy@example.org") != nil {
		t.Fatal("a policy refusal suppressed cy")
	}

	// Neither herald's Message-ID nor its return path (a message sent by
	// another program through the same domain): 200, nothing changes.
	untied := failed("permanent", "cy@example.org", "20240101.1234@shop.example.com", "550", "5.1.1 unknown", "news@shop.example.com")
	status, text = post(signature(signingKey, ts, "untied-012345678901234567890123456789012345678901"), untied)
	wantHook(t, status, text, http.StatusOK)
	h.wantCounts(counts{bounces: 1, spam: 1, unsubscribes: 1, blocks: 1})
	if h.suppression("cy@example.org") != nil {
		t.Fatal("an untied failure suppressed cy")
	}
	seen := h.wantUntied(0, "mailgun/message-id does not verify/cy@example.org")

	// Forged: another key; a signature of another token; none. A captured
	// request is no lasting credential: its signature taken again (a
	// replay, whatever the event), one older than 10 minutes, one from
	// the future.
	bad := failed("permanent", "cy@example.org", cy.messageID, "550", "5.1.1 unknown", "news@shop.example.com")
	stale, ahead := itoa(time.Now().Add(-11*time.Minute).Unix()), itoa(time.Now().Add(10*time.Minute).Unix())
	for name, sig := range map[string]string{
		"other key":   signature("key-someone-else", ts, "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0"),
		"other token": strings.Replace(signature(signingKey, ts, "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0"), `"token":"a8`, `"token":"b8`, 1),
		"none":        `{}`,
		"replay":      signature(signingKey, ts, "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0"),
		"stale":       signature(signingKey, stale, "stale-0123456789012345678901234567890123456789012345"),
		"future":      signature(signingKey, ahead, "ahead-0123456789012345678901234567890123456789012345"),
		"not a time":  signature(signingKey, "soon", "soon-01234567890123456789012345678901234567890123456"),
	} {
		status, text := post(sig, bad)
		if status != http.StatusUnauthorized {
			t.Fatalf("%s: status %d, want 401: %s", name, status, text)
		}
	}
	h.wantCounts(counts{bounces: 1, spam: 1, unsubscribes: 1, blocks: 1})
	if h.suppression("cy@example.org") != nil {
		t.Fatal("a forged event suppressed cy")
	}
	h.wantUntied(seen)
}

// ---- Common rules ----

// An endpoint whose secret is unset is not there; bodies over 1 MB are
// refused; a failure of the service is a 500 (the provider retries).
func TestWebhookLimits(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	for _, p := range []string{"/webhooks/sendgrid", "/webhooks/postmark", "/webhooks/mailgun"} {
		status, text := postHook(t, a, p, []byte(`{}`))
		if status != http.StatusNotFound {
			t.Fatalf("%s unconfigured: status %d, want 404: %s", p, status, text)
		}
	}

	a = newTestApp(t, web.Options{Webhooks: web.WebhookOptions{MailgunSigningKey: "k", WebhookUser: "u", WebhookPassword: "p"}})
	big := bytes.Repeat([]byte(" "), 1<<20+1)
	status, text := postHook(t, a, "/webhooks/mailgun", big)
	wantHook(t, status, text, http.StatusRequestEntityTooLarge)
	status, text = postHook(t, a, "/webhooks/mailgun", []byte(`{"signature":{}}`+strings.Repeat(" ", 1<<20-16)))
	if status != http.StatusUnauthorized {
		t.Fatalf("a body of exactly 1 MB: status %d, want 401: %s", status, text)
	}

	// The database gone: Handle fails, the answer is 500.
	sqlDB, err := a.svc.DB.W.DB()
	if err != nil {
		t.Fatal(err)
	}
	rdb, err := a.svc.DB.R.DB()
	if err != nil {
		t.Fatal(err)
	}
	sqlDB.Close()
	rdb.Close()
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("u:p"))
	status, text = postHook(t, a, "/webhooks/postmark", []byte(`{"RecordType":"Bounce","Type":"HardBounce","Email":"ann@example.com"}`), "Authorization", auth)
	wantHook(t, status, text, http.StatusInternalServerError)
}
