package web_test

import (
	"net/http"
	"strings"
	"testing"
)

const lineBreakMessage = "The subject must not contain line breaks."

// TestConsoleSendSubjectWithLineBreaks: decisions.md 8 and finding 2 in
// the console. A single send's subject with a line break is refused beside
// the field on create and update, and a test send with one is not sent.
func TestConsoleSendSubjectWithLineBreaks(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	c.get("/single-sends/new")
	bad := "Hello\r\nBcc: victim@example.com"

	form := s.form("Injected")
	form.Set("subject", bad)
	r := c.hxPost("/single-sends", form)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#send-subject-error")); !strings.Contains(got, lineBreakMessage) {
		t.Fatalf("create: subject error %q", got)
	}
	var n int64
	s.a.svc.DB.R.Table("single_sends").Where("user_id = ?", s.acct).Count(&n)
	if n != 0 {
		t.Fatalf("%d sends stored", n)
	}

	ss := s.create("Kept")
	r = c.hxPost("/single-sends/"+ss.Utr, form)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#send-subject-error")); !strings.Contains(got, lineBreakMessage) {
		t.Fatalf("update: subject error %q", got)
	}
	if got := s.get(ss.Utr); got.Subject != "Hello" {
		t.Fatalf("update stored the subject %q", got.Subject)
	}

	form.Set("test_email", "tester@example.net")
	r = c.hxPost("/single-sends/test", form)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#send-test-result .alert-error")); !strings.Contains(got, lineBreakMessage) {
		t.Fatalf("test send: %q", got)
	}
	if got := s.outbox()["tester@example.net"]; len(got) != 0 {
		t.Fatalf("test sent: %q", got)
	}
}

// TestConsoleEmailSubjectWithLineBreaks: the same for an automation's
// email, added and edited in the console.
func TestConsoleEmailSubjectWithLineBreaks(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	a := s.create("custom", "Drip", "0", [3]string{"instantly", "0", "First"})
	c.get("/automations/" + a.Utr)
	form := func(subject string) map[string][]string {
		return map[string][]string{"waiting_type": {"days"}, "waiting_period": {"1"}, "sender_id": {itoa(s.sender)}, "subject": {subject}, "design": {"library-2"}}
	}
	for _, bad := range []string{"Hi\nthere", "Hi\r\nBcc: victim@example.com", "tab\there"} {
		r := c.hxPost("/automations/"+a.Utr+"/emails", form(bad))
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if got := text(first(r.doc, "#email-subject-error")); !strings.Contains(got, lineBreakMessage) {
			t.Fatalf("add %q: subject error %q\n%.2000s", bad, got, r.body)
		}
		email := s.emails(a.Utr)[0]
		r = c.hxPost("/automations/"+a.Utr+"/emails/"+email.Utr, form(bad))
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if got := text(first(r.doc, "#email-subject-error")); !strings.Contains(got, lineBreakMessage) {
			t.Fatalf("edit %q: subject error %q", bad, got)
		}
	}
	if got := subjects(s.emails(a.Utr)); len(got) != 1 || got[0] != "First" {
		t.Fatalf("emails after refusals: %q", got)
	}
	// A plain subject is still saved.
	r := c.hxPost("/automations/"+a.Utr+"/emails", form("Day two"))
	wantStatus(t, r, http.StatusNoContent)
	if got := subjects(s.emails(a.Utr)); len(got) != 2 || got[1] != "Day two" {
		t.Fatalf("emails: %q", got)
	}
}
