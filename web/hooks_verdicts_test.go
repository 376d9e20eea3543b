package web_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/web"
)

// verdict is what herald must make of one failure a provider reports:
// every provider's events are read by the one classifier, so the same
// words make the same verdict whoever brings them (decisions.md 8, 9).
type verdict string

const (
	vHard      verdict = "hard bounce" // counts bounces, suppresses the address
	vSoft      verdict = "soft bounce" // counts soft_bounces, no suppression
	vBlock     verdict = "block"       // counts blocks, no suppression
	vComplaint verdict = "complaint"   // counts spam_reports and unsubscribes, a global unsubscriber
	vNothing   verdict = "nothing"     // a deferral (the relay is still trying) or an event herald keeps nothing of
)

// delta is what a verdict adds to its send's counters.
func (v verdict) delta() counts {
	switch v {
	case vHard:
		return counts{bounces: 1}
	case vSoft:
		return counts{soft: 1}
	case vBlock:
		return counts{blocks: 1}
	case vComplaint:
		return counts{spam: 1, unsubscribes: 1}
	}
	return counts{}
}

func (c counts) plus(d counts) counts {
	return counts{c.bounces + d.bounces, c.soft + d.soft, c.spam + d.spam, c.unsubscribes + d.unsubscribes, c.blocks + d.blocks}
}

// verdictCase is one provider event about the message of a recipient of
// its own, so that no case counts on another's message.
type verdictCase struct {
	provider, name string
	want           verdict
	// event is the request body about recipient to's message m.
	event func(to string, m sentMail) []byte
}

// sendGridSigner stands for the key SendGrid signs its Event Webhook
// with.
type sendGridSigner struct{ key *ecdsa.PrivateKey }

func newSendGridSigner(t *testing.T) *sendGridSigner {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &sendGridSigner{key}
}

// verificationKey is the public key as SendGrid's console shows it.
func (s *sendGridSigner) verificationKey(t *testing.T) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&s.key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(der)
}

// post sends body to the SendGrid webhook, signed now.
func (s *sendGridSigner) post(t *testing.T, a *testApp, body []byte) (int, string) {
	t.Helper()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	sum := sha256.Sum256(append([]byte(ts), body...))
	sig, err := ecdsa.SignASN1(rand.Reader, s.key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return postHook(t, a, "/webhooks/sendgrid", body,
		"X-Twilio-Email-Event-Webhook-Signature", base64.StdEncoding.EncodeToString(sig), "X-Twilio-Email-Event-Webhook-Timestamp", ts)
}

// Each provider's failures, as its webhook reports them, go through the
// one classifier: a user unknown is a hard bounce, a listed IP a block, a
// full mailbox a soft bounce, a transient failure never a hard one, a
// failure the relay still retries a deferral; complaints stay complaints.
func TestWebhookVerdicts(t *testing.T) {
	t.Parallel()
	const mailgunKey = "key-7e55f8a0c5a5b6e4d3c2b1a0"
	signer := newSNSSigner(t)
	sendGrid := newSendGridSigner(t)
	opt := web.WebhookOptions{SESTopicARNs: []string{testTopic}, SESCertFile: signer.file(t), SendGridVerificationKey: sendGrid.verificationKey(t),
		WebhookUser: "postmark", WebhookPassword: "s3cret-hook-pass", MailgunSigningKey: mailgunKey}
	now := time.Now().UTC().Format(time.RFC3339)

	sesFailure := func(bounceType, status, diag string) func(string, sentMail) []byte {
		return func(to string, m sentMail) []byte {
			return []byte(sesBounce(bounceType, to, status, diag, sesMailObj(m.returnPath, to, "", "")))
		}
	}
	var cases []verdictCase
	cases = append(cases, []verdictCase{
		{"ses", "permanent user unknown", vHard,
			sesFailure("Permanent", "5.1.1", "smtp; 550 5.1.1 <someone@example.net>: Recipient address rejected: User unknown in virtual mailbox table")},
		{"ses", "permanent listed IP", vBlock,
			sesFailure("Permanent", "5.7.1", "smtp; 550 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org")},
		{"ses", "permanent mailbox full", vSoft, sesFailure("Permanent", "5.2.2", "smtp; 552 5.2.2 Mailbox full")},
		{"ses", "transient user unknown", vSoft, sesFailure("Transient", "5.1.1", "smtp; 550 5.1.1 user unknown")},
		{"ses", "delivery delay", vNothing, func(to string, m sentMail) []byte {
			return []byte(`{"eventType":"DeliveryDelay","mail":` + sesMailObj(m.returnPath, to, "", "") + `,
"deliveryDelay":{"timestamp":"` + now + `","delayType":"TransientCommunicationFailure","expirationTime":"` + now + `",
"delayedRecipients":[{"emailAddress":"` + to + `","status":"4.4.1","diagnosticCode":"smtp; 421 4.4.1 Unable to connect to remote host"}]}}`)
		}},
		{"ses", "complaint", vComplaint, func(to string, m sentMail) []byte {
			return []byte(`{"notificationType":"Complaint","complaint":{"complainedRecipients":[{"emailAddress":"` + to + `"}],
"complaintFeedbackType":"abuse","timestamp":"` + now + `","feedbackId":"000001378603177f-18c07c78-000000"},
"mail":` + sesMailObj(m.returnPath, to, "", "") + `}`)
		}},
	}...)

	// SendGrid: one event, named by its smtp-id.
	sg := func(fields string) func(string, sentMail) []byte {
		return func(to string, m sentMail) []byte {
			return []byte(`[{"email":"` + to + `","timestamp":` + itoa(time.Now().Unix()) + `,"smtp-id":"` + m.messageID + `",
"sg_event_id":"6g4ZI7SA-xmRDv57GoPIPw==","sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0",` + fields + `}]`)
		}
	}
	cases = append(cases, []verdictCase{
		{"sendgrid", "bounce user unknown", vHard, sg(`"event":"bounce","type":"bounce","status":"5.1.1","bounce_classification":"Invalid Address",
"reason":"550 5.1.1 <someone@example.net>: Recipient address rejected: User unknown in virtual mailbox table"`)},
		{"sendgrid", "bounce listed IP", vBlock, sg(`"event":"bounce","type":"bounce","status":"5.7.1",
"reason":"550 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org"`)},
		{"sendgrid", "bounce mailbox full", vSoft, sg(`"event":"bounce","type":"bounce","status":"5.2.2","reason":"552 5.2.2 Mailbox full"`)},
		// The documented example: "unknown recipient" without a mailbox
		// code, which SendGrid classifies as an invalid address: its
		// reading of the receiver's answer to the address (RCPT), a hard
		// bounce. Without the classification the same words may be a
		// filter's answer: a soft bounce.
		{"sendgrid", "documented bounce", vHard, sg(`"event":"bounce","type":"bounce","status":"5.0.0","bounce_classification":"Invalid Address",
"reason":"500 unknown recipient"`)},
		{"sendgrid", "unknown recipient unclassified", vSoft, sg(`"event":"bounce","type":"bounce","status":"5.0.0","reason":"500 unknown recipient"`)},
		{"sendgrid", "blocked saying nothing more", vBlock, sg(`"event":"bounce","type":"blocked","status":"5.0.0","reason":"550 Message rejected"`)},
		{"sendgrid", "blocked naming a mailbox", vSoft, sg(`"event":"bounce","type":"blocked","status":"5.1.1","reason":"550 5.1.1 user unknown"`)},
		{"sendgrid", "deferred", vNothing, sg(`"event":"deferred","response":"400 try again later","attempt":"5"`)},
		{"sendgrid", "dropped bounced address", vSoft, sg(`"event":"dropped","reason":"Bounced Address","status":"5.0.0"`)},
		{"sendgrid", "dropped invalid", vSoft, sg(`"event":"dropped","reason":"Invalid","status":"5.0.0"`)},
		{"sendgrid", "dropped unsubscribed address", vNothing, sg(`"event":"dropped","reason":"Unsubscribed Address","status":"5.0.0"`)},
		{"sendgrid", "dropped spam reporting address", vNothing, sg(`"event":"dropped","reason":"Spam Reporting Address","status":"5.0.0"`)},
		{"sendgrid", "dropped spam content", vBlock, sg(`"event":"dropped","reason":"Spam Content","status":"5.0.0"`)},
		{"sendgrid", "dropped over quota", vBlock, sg(`"event":"dropped","reason":"Recipient List over Package Quota","status":"5.0.0"`)},
		{"sendgrid", "spam report", vComplaint, sg(`"event":"spamreport"`)},
	}...)

	// Postmark: one record, named by the token in its metadata; its
	// Description is the Type's fixed text, whatever the Type.
	pm := func(recordType, typ, details string) func(string, sentMail) []byte {
		return func(to string, m sentMail) []byte {
			return []byte(`{"RecordType":"` + recordType + `","MessageStream":"outbound","ID":4323372036854775807,"Type":"` + typ + `",
"MessageID":"883953f4-6105-42a2-a16a-77a8eac79483","ServerID":23,
"Description":"The server was unable to deliver your message (ex: unknown user, mailbox not found).",
"Details":"` + details + `","Email":"` + to + `","From":"news@shop.example.com","BouncedAt":"` + now + `",
"Inactive":true,"CanActivate":true,"Subject":"Hello","Metadata":{"herald":"` + m.metadata + `"}}`)
		}
	}
	cases = append(cases, []verdictCase{
		{"postmark", "hard bounce user unknown", vHard, pm("Bounce", "HardBounce", "smtp;550 5.1.1 The email account that you tried to reach does not exist.")},
		{"postmark", "hard bounce listed IP", vBlock,
			pm("Bounce", "HardBounce", "smtp;554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org")},
		{"postmark", "hard bounce mailbox full", vSoft, pm("Bounce", "HardBounce", "smtp;552 5.2.2 Mailbox full")},
		{"postmark", "hard bounce saying nothing", vSoft, pm("Bounce", "HardBounce", "")},
		{"postmark", "soft bounce user unknown", vSoft, pm("Bounce", "SoftBounce", "smtp;550 5.1.1 user unknown")},
		{"postmark", "transient", vNothing, pm("Bounce", "Transient", "smtp;421 4.4.2 Connection timed out")},
		{"postmark", "dns error", vSoft, pm("Bounce", "DnsError", "")},
		{"postmark", "blocked", vBlock, pm("Bounce", "Blocked", "")},
		{"postmark", "spam notification", vBlock, pm("Bounce", "SpamNotification", "")},
		{"postmark", "dmarc policy", vBlock,
			pm("Bounce", "DMARCPolicy", "smtp;550 5.7.26 Unauthenticated email from example.com is not accepted due to domain's DMARC policy")},
		{"postmark", "bad email address", vSoft, pm("Bounce", "BadEmailAddress", "")},
		{"postmark", "manually deactivated", vSoft, pm("Bounce", "ManuallyDeactivated", "")},
		{"postmark", "auto responder", vNothing, pm("Bounce", "AutoResponder", "Out of office")},
		{"postmark", "spam complaint", vComplaint, pm("SpamComplaint", "SpamComplaint", "")},
	}...)

	// Mailgun: one failed event, named by its message-id header.
	mg := func(severity, reason, code, msg, desc string) func(string, sentMail) []byte {
		return func(to string, m sentMail) []byte {
			return []byte(`{"id":"G9Bn5sl1TC6nu79C8C0bwg","timestamp":` + itoa(time.Now().Unix()) + `.1234,"log-level":"error","event":"failed",
"severity":"` + severity + `","reason":"` + reason + `","envelope":{"sender":"news@shop.example.com","transport":"smtp","targets":"` + to + `"},
"delivery-status":{"attempt-no":1,"message":"` + msg + `","code":` + code + `,"description":"` + desc + `","session-seconds":0.1},
"message":{"headers":{"to":"` + to + `","message-id":"` + strings.Trim(m.messageID, "<>") + `","from":"news@shop.example.com","subject":"Hello"}},
"recipient":"` + to + `","tags":[],"user-variables":{}}`)
		}
	}
	cases = append(cases, []verdictCase{
		{"mailgun", "permanent user unknown", vHard, mg("permanent", "bounce", "550", "5.1.1 The email account that you tried to reach does not exist.", "")},
		{"mailgun", "permanent listed IP", vBlock,
			mg("permanent", "bounce", "550", "5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org", "")},
		{"mailgun", "permanent mailbox full", vSoft, mg("permanent", "bounce", "552", "5.2.2 Mailbox full", "")},
		{"mailgun", "temporary", vNothing, mg("temporary", "generic", "452", "4.2.2 The email account that you tried to reach is over quota.", "")},
		{"mailgun", "temporary user unknown", vNothing, mg("temporary", "generic", "550", "5.1.1 user unknown", "")},
		{"mailgun", "suppressed bounce", vSoft, mg("permanent", "suppress-bounce", "605", "", "Not delivering to previously bounced address")},
		{"mailgun", "suppressed unsubscribe", vNothing, mg("permanent", "suppress-unsubscribe", "606", "", "Not delivering to unsubscribed address")},
		{"mailgun", "suppressed complaint", vNothing,
			mg("permanent", "suppress-complaint", "607", "", "Not delivering to a user who marked your messages as spam")},
		{"mailgun", "esp block", vBlock, mg("permanent", "espblock", "550", "", "")},
		{"mailgun", "too old", vSoft, mg("permanent", "old", "451", "4.4.1 Connection timed out", "Too old")},
		{"mailgun", "complained", vComplaint, func(to string, m sentMail) []byte {
			return []byte(`{"id":"-Agny091SquKnsrW2NEKUA","timestamp":` + itoa(time.Now().Unix()) + `,"log-level":"warn","event":"complained",
"envelope":{"sending-ip":"173.193.210.33"},"message":{"headers":{"to":"` + to + `","message-id":"` + strings.Trim(m.messageID, "<>") + `"}},
"recipient":"` + to + `","tags":[],"user-variables":{}}`)
		}},
	}...)

	mailgunTokens := 0
	post := map[string]func(t *testing.T, a *testApp, body []byte) (int, string){
		"ses": func(t *testing.T, a *testApp, body []byte) (int, string) {
			return postHook(t, a, "/webhooks/ses", signer.sign(t, snsNotification(string(body)), "2"))
		},
		"sendgrid": sendGrid.post,
		"mailgun": func(t *testing.T, a *testApp, body []byte) (int, string) {
			// Each request signed anew, with a token of its own.
			mailgunTokens++
			ts, token := itoa(time.Now().Unix()), fmt.Sprintf("verdict-%04d-0123456789012345678901234567890123456789", mailgunTokens)
			mac := hmac.New(sha256.New, []byte(mailgunKey))
			mac.Write([]byte(ts + token))
			return postHook(t, a, "/webhooks/mailgun", []byte(`{"signature":{"timestamp":"`+ts+`","token":"`+token+`","signature":"`+
				hex.EncodeToString(mac.Sum(nil))+`"},"event-data":`+string(body)+`}`))
		},
		"postmark": func(t *testing.T, a *testApp, body []byte) (int, string) {
			return postHook(t, a, "/webhooks/postmark", body, "Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("postmark:s3cret-hook-pass")))
		},
	}

	var to []string
	for i := range cases {
		to = append(to, fmt.Sprintf("verdict%02d@example.net", i))
	}
	h := newHookSetupTo(t, opt, false, to...)
	for i, c := range cases {
		t.Run(c.provider+"/"+c.name, func(t *testing.T) {
			h := *h
			h.t = t // the setup's checks fail this case
			who := to[i]
			before := h.counts()
			status, text := post[c.provider](t, h.a, c.event(who, h.sent[who]))
			wantHook(t, status, text, http.StatusOK)
			if got, want := h.counts(), before.plus(c.want.delta()); got != want {
				t.Errorf("counters %+v, want %+v (a %s)", got, want, c.want)
			}
			if s := h.suppression(who); (s != nil) != (c.want == vHard) {
				t.Errorf("suppression %+v, want one only for a hard bounce (a %s)", s, c.want)
			}
			if u := h.globallyUnsubscribed(who); u != (c.want == vComplaint) {
				t.Errorf("globally unsubscribed %v, want it only for a complaint (a %s)", u, c.want)
			}
		})
	}
}
