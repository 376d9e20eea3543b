package web

import (
	"encoding/json"
	"testing"

	"herald/delivery"
)

// Certificates and subscription links are taken only over https from
// sns.<region>.amazonaws.com (or a host a test names).
func TestSNSURLHostRule(t *testing.T) {
	t.Parallel()
	h, err := newHooks(WebhookOptions{SNSHosts: []string{"127.0.0.1:8443"}})
	if err != nil {
		t.Fatal(err)
	}
	for raw, ok := range map[string]bool{
		"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem":     true,
		"https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-abc.pem": true,
		"https://sns.eu-west-3.amazonaws.com/?Action=ConfirmSubscription&Token=x":   true,
		"https://127.0.0.1:8443/x.pem":                                              true,
		"http://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem":      false,
		"https://sns.us-east-1.amazonaws.com.evil.example/x.pem":                    false,
		"https://evil.example/sns.us-east-1.amazonaws.com/x.pem":                    false,
		"https://sqs.us-east-1.amazonaws.com/x.pem":                                 false,
		"https://sns.us-east-1.amazonaws.com:8443/x.pem":                            false,
		"https://user@sns.us-east-1.amazonaws.com/x.pem":                            false,
		"https://SNS.us-east-1.amazonaws.com/x.pem":                                 false,
		"https://127.0.0.1:9443/x.pem":                                              false,
		"file:///etc/passwd":                                                        false,
		"https://sns.us-east-1.amazonaws.com\\@evil.example/x.pem":                  false,
		"//sns.us-east-1.amazonaws.com/x.pem":                                       false,
	} {
		if _, err := h.snsURL(raw); (err == nil) != ok {
			t.Errorf("%s: accepted %v, want %v (%v)", raw, err == nil, ok, err)
		}
	}
}

// verdictOf is a report's kind, reason and status, or "" when skipped.
func verdictOf(r delivery.Report, ok bool) string {
	if !ok {
		return ""
	}
	return r.Kind.String() + "/" + r.Reason + "/" + r.Status
}

// Provider events map to reports as docs/WEBHOOKS-PROVIDERS.md says, each
// failure judged by the one classifier; the ones herald keeps nothing of
// are skipped.
func TestWebhookKinds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ, details string
		want         string // kind/reason/status; "" skipped
	}{
		{"HardBounce", "smtp;550 5.1.1 The email account that you tried to reach does not exist.", "hard_bounce/userunknown/5.1.1"},
		{"HardBounce", "smtp;554 5.7.1 Client host [192.0.2.1] blocked using zen.spamhaus.org", "block/blocked/5.7.1"},
		{"HardBounce", "smtp;552 5.2.2 Mailbox full", "soft_bounce/mailboxfull/5.2.2"},
		{"HardBounce", "", "soft_bounce/onhold/"},
		{"Unknown", "smtp;550 5.1.1 user unknown", "hard_bounce/userunknown/5.1.1"},
		{"Unknown", "", "soft_bounce/undefined/"},
		{"BadEmailAddress", "", "soft_bounce/onhold/"},
		{"SoftBounce", "smtp;550 5.1.1 user unknown", "soft_bounce/userunknown/5.1.1"},
		{"SoftBounce", "smtp;452 4.2.2 Mailbox full", "soft_bounce/mailboxfull/4.2.2"},
		{"Transient", "smtp;421 4.4.2 timed out", "deferral/networkerror/4.4.2"},
		{"DnsError", "", "soft_bounce/networkerror/"},
		{"Blocked", "", "block/blocked/"},
		{"Blocked", "smtp;550 5.1.1 user unknown", "soft_bounce/userunknown/5.1.1"},
		{"SpamNotification", "", "block/spamdetected/"},
		{"VirusNotification", "", "block/virusdetected/"},
		{"DMARCPolicy", "", "block/authfailure/"},
		{"ManuallyDeactivated", "", "soft_bounce/onhold/"},
		{"SpamComplaint", "", "complaint/feedback/"},
		{"AutoResponder", "Out of office", ""}, {"Unsubscribe", "", ""}, {"AddressChange", "", ""},
		{"ChallengeVerification", "", ""}, {"SMTPApiError", "", ""}, {"TemplateRenderingFailed", "", ""}, {"SomethingNew", "", ""},
	} {
		// Description is the Type's fixed text: never judged.
		rec := postmarkRecord{RecordType: "Bounce", Type: c.typ, Email: "a@example.com", Details: c.details,
			Description: "The server was unable to deliver your message (ex: unknown user, mailbox not found)."}
		if got := verdictOf(postmarkReport(rec)); got != c.want {
			t.Errorf("postmark %s %q: %q, want %q", c.typ, c.details, got, c.want)
		}
	}
	for _, c := range []struct{ rec, want string }{
		{"SpamComplaint", "complaint/feedback/"}, {"Delivery", "delivered/delivered/"}, {"Open", ""}, {"SubscriptionChange", ""},
	} {
		if got := verdictOf(postmarkReport(postmarkRecord{RecordType: c.rec, Type: c.rec, Email: "a@example.com"})); got != c.want {
			t.Errorf("postmark record %s: %q, want %q", c.rec, got, c.want)
		}
	}
	for _, c := range []struct {
		e    sendGridEvent
		want string // kind/reason/status; "" skipped
	}{
		{sendGridEvent{Event: "bounce", Type: "bounce", Status: "5.1.1", Reason: "550 5.1.1 user unknown"}, "hard_bounce/userunknown/5.1.1"},
		{sendGridEvent{Event: "bounce", Status: "5.1.1", Reason: "550 5.1.1 user unknown"}, "hard_bounce/userunknown/5.1.1"},
		{sendGridEvent{Event: "bounce", Type: "bounce", Status: "5.7.1", Reason: "550 5.7.1 Client host [192.0.2.1] blocked using zen.spamhaus.org"}, "block/blocked/5.7.1"},
		{sendGridEvent{Event: "bounce", Type: "bounce", Status: "5.0.0", Reason: "550 Mailbox full"}, "soft_bounce/mailboxfull/5.0.0"},
		{sendGridEvent{Event: "bounce", Type: "bounce", Status: "5.0.0", BounceClassification: "Reputation"}, "block/badreputation/5.0.0"},
		{sendGridEvent{Event: "bounce", Type: "blocked", Status: "4.0.0", Reason: "blocked by policy"}, "block/blocked/4.0.0"},
		{sendGridEvent{Event: "bounce", Type: "blocked", Status: "5.0.0", Reason: "550 Message rejected"}, "block/blocked/5.0.0"},
		{sendGridEvent{Event: "bounce", Type: "blocked", Status: "5.0.0", Reason: "550 Message rejected", BounceClassification: "Content"}, "block/spamdetected/5.0.0"},
		{sendGridEvent{Event: "bounce", Type: "blocked", Status: "5.1.1", Reason: "550 5.1.1 user unknown"}, "soft_bounce/userunknown/5.1.1"},
		{sendGridEvent{Event: "dropped", Reason: "Bounced Address", Status: "5.0.0"}, "soft_bounce/onhold/5.0.0"},
		{sendGridEvent{Event: "dropped", Reason: "Invalid", Status: "5.0.0"}, "soft_bounce/onhold/5.0.0"},
		{sendGridEvent{Event: "dropped", Reason: "Unsubscribed Address", Status: "5.0.0"}, ""},
		{sendGridEvent{Event: "dropped", Reason: "Spam Reporting Address", Status: "5.0.0"}, ""},
		{sendGridEvent{Event: "dropped", Reason: "Spam Content"}, "block/spamdetected/"},
		{sendGridEvent{Event: "dropped", Reason: "Invalid SMTPAPI header"}, "block/policyviolation/"},
		{sendGridEvent{Event: "dropped", Reason: "Recipient List over Package Quota"}, "block/policyviolation/"},
		{sendGridEvent{Event: "dropped", Reason: "Duplicate message"}, ""},
		{sendGridEvent{Event: "deferred", Response: "400 try again later"}, "deferral/speeding/"},
		{sendGridEvent{Event: "deferred", Response: "451 4.2.2 mailbox full"}, "deferral/mailboxfull/4.2.2"},
		{sendGridEvent{Event: "spamreport"}, "complaint/feedback/"},
		{sendGridEvent{Event: "delivered", Response: "250 OK"}, "delivered/delivered/"},
		{sendGridEvent{Event: "open"}, ""},
	} {
		if got := verdictOf(sendGridReport(c.e)); got != c.want {
			t.Errorf("sendgrid %+v: %q, want %q", c.e, got, c.want)
		}
	}
	for _, c := range []struct {
		event, severity, reason, code, message, enhanced string
		want                                             string // kind/reason/status; "" skipped
	}{
		{"failed", "permanent", "bounce", "550", "5.1.1 The email account that you tried to reach does not exist.", "", "hard_bounce/userunknown/5.1.1"},
		{"failed", "permanent", "bounce", "550", "The email account that you tried to reach does not exist.", "5.1.1", "hard_bounce/userunknown/5.1.1"},
		{"failed", "permanent", "bounce", "550", "5.7.1 Client host [192.0.2.1] blocked using zen.spamhaus.org", "", "block/blocked/5.7.1"},
		{"failed", "permanent", "bounce", "552", "5.2.2 Mailbox full", "", "soft_bounce/mailboxfull/5.2.2"},
		{"failed", "permanent", "generic", "", "", "", "soft_bounce/undefined/"},
		{"failed", "temporary", "generic", "452", "4.2.2 The email account that you tried to reach is over quota.", "", "deferral/mailboxfull/4.2.2"},
		{"failed", "temporary", "generic", "550", "5.1.1 user unknown", "", "deferral/userunknown/5.1.1"},
		{"failed", "permanent", "suppress-bounce", "605", "Not delivering to previously bounced address", "", "soft_bounce/onhold/"},
		{"failed", "permanent", "suppress-unsubscribe", "606", "Not delivering to unsubscribed address", "", ""},
		{"failed", "permanent", "suppress-complaint", "607", "Not delivering to a user who marked your messages as spam", "", ""},
		{"failed", "permanent", "espblock", "550", "", "", "block/blocked/"},
		{"failed", "permanent", "old", "451", "4.4.1 Connection timed out", "", "soft_bounce/networkerror/4.4.1"},
		{"failed", "permanent", "old", "", "", "", "soft_bounce/expired/"},
		{"failed", "", "bounce", "550", "5.1.1 user unknown", "", ""},
		{"complained", "", "", "", "", "", "complaint/feedback/"},
		{"delivered", "", "", "250", "OK", "", "delivered/delivered/"},
		{"accepted", "", "", "", "", "", ""}, {"unsubscribed", "", "", "", "", "", ""},
	} {
		var p mailgunPost
		e := &p.EventData
		e.Event, e.Severity, e.Reason = c.event, c.severity, c.reason
		e.DeliveryStatus.Code, e.DeliveryStatus.Message, e.DeliveryStatus.EnhancedCode = json.Number(c.code), c.message, c.enhanced
		if got := verdictOf(mailgunReport(&p)); got != c.want {
			t.Errorf("mailgun %+v: %q, want %q", c, got, c.want)
		}
	}
}
