package web

import "testing"

// Certificates and subscription links are taken only over https from
// sns.<region>.amazonaws.com (or a host a test names).
func TestSNSURLHostRule(t *testing.T) {
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

// Provider event types map to report kinds as docs/WEBHOOKS-PROVIDERS.md
// says; the ones herald keeps nothing of are skipped.
func TestProviderKinds(t *testing.T) {
	for _, c := range []struct {
		typ  string
		kind string // "" skipped
	}{
		{"HardBounce", "hard_bounce"}, {"BadEmailAddress", "hard_bounce"}, {"SoftBounce", "soft_bounce"},
		{"Transient", "soft_bounce"}, {"DnsError", "soft_bounce"}, {"Blocked", "soft_bounce"},
		{"SpamComplaint", "complaint"}, {"AutoResponder", ""}, {"Unsubscribe", ""}, {"ManuallyDeactivated", ""},
	} {
		r, ok := postmarkReport(postmarkRecord{RecordType: "Bounce", Type: c.typ, Email: "a@example.com"})
		if got := map[bool]string{true: r.Kind.String()}[ok]; got != c.kind {
			t.Errorf("postmark %s: %q, want %q", c.typ, got, c.kind)
		}
	}
	for _, c := range []struct {
		e    sendGridEvent
		kind string
	}{
		{sendGridEvent{Event: "bounce", Type: "bounce"}, "hard_bounce"},
		{sendGridEvent{Event: "bounce"}, "hard_bounce"},
		{sendGridEvent{Event: "bounce", Type: "blocked"}, "soft_bounce"},
		{sendGridEvent{Event: "dropped", Reason: "Bounced Address"}, "hard_bounce"},
		{sendGridEvent{Event: "dropped", Reason: "Invalid"}, "hard_bounce"},
		{sendGridEvent{Event: "dropped", Reason: "Unsubscribed Address"}, ""},
		{sendGridEvent{Event: "dropped", Reason: "Spam Reporting Address"}, ""},
		{sendGridEvent{Event: "deferred"}, "soft_bounce"},
		{sendGridEvent{Event: "spamreport"}, "complaint"},
		{sendGridEvent{Event: "delivered"}, "delivered"},
		{sendGridEvent{Event: "open"}, ""},
	} {
		r, ok := sendGridReport(c.e)
		if got := map[bool]string{true: r.Kind.String()}[ok]; got != c.kind {
			t.Errorf("sendgrid %+v: %q, want %q", c.e, got, c.kind)
		}
	}
	for _, c := range []struct {
		event, severity, kind string
	}{
		{"failed", "permanent", "hard_bounce"}, {"failed", "temporary", "soft_bounce"}, {"failed", "", ""},
		{"complained", "", "complaint"}, {"delivered", "", "delivered"}, {"accepted", "", ""}, {"unsubscribed", "", ""},
	} {
		var p mailgunPost
		p.EventData.Event, p.EventData.Severity = c.event, c.severity
		r, ok := mailgunReport(&p)
		if got := map[bool]string{true: r.Kind.String()}[ok]; got != c.kind {
			t.Errorf("mailgun %s/%s: %q, want %q", c.event, c.severity, got, c.kind)
		}
	}
}
