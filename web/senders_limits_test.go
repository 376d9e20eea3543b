package web_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/web"
)

// The console says when a verification mail is refused: too many (429,
// Retry-After, an alert), or the relay down (503); nothing is stored.
func TestSenderConsoleMailRefused(t *testing.T) {
	t.Parallel()
	tr := &switchable{}
	tr.use(delivery.NewOutbox(&delivery.MemoryOutbox{}))
	a := newTestAppOn(t, dbtest.Service(t, service.Config{Transport: tr}), web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	c.get("/senders/new")
	form := url.Values{"from_name": {"Ada"}, "from_email": {"news@example.com"}, "reply_to_email": {"ada@example.com"},
		"nickname": {"News"}, "country_id": {"250"}, "company_address": {"1 Main Street"}}
	wantRedirect(t, c.post("/senders", form), "/senders/")
	var id int64
	_ = a.svc.Senders.Each(context.Background(), acct, service.ListFilter{}, func(s *models.Sender) error { id = s.ID; return nil })
	resend := "/senders/" + strconv.FormatInt(id, 10) + "/resend"
	for i := 0; i < 2; i++ {
		wantStatus(t, c.hxPost(resend, nil), http.StatusOK)
	}
	r := c.hxPost(resend, nil)
	wantStatus(t, r, http.StatusTooManyRequests)
	if secs, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || secs < 1 || secs > 600 {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if got := text(first(r.doc, `#flash[hx-swap-oob="true"] .flash-error[role="alert"]`)); !strings.HasPrefix(got, "Too many verification mails. Try again in ") {
		t.Fatalf("resend refused:\n%s", r.body)
	}

	// A sender of the same address: the form again, with the reason.
	form.Set("nickname", "Again")
	r = c.hxPost("/senders", form)
	wantStatus(t, r, http.StatusTooManyRequests)
	if r.header.Get("Retry-After") == "" || !strings.HasPrefix(text(first(r.doc, `#sender-form .alert[role="alert"]`)), "Too many verification mails.") ||
		value(r.doc, "#sender-nickname") != "Again" {
		t.Fatalf("save refused:\n%.3000s", r.body)
	}
	// A name with a line break: the message beside the field.
	form.Set("from_email", "other@example.com")
	form.Set("from_name", "Ada\r\nBcc: victim@example.org")
	r = c.hxPost("/senders", form)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(text(first(r.doc, "#sender-form")), "The from name must not contain line breaks.") {
		t.Fatalf("line break:\n%.3000s", r.body)
	}

	// The relay down.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "smtp://" + ln.Addr().String() + "?tls=none"
	ln.Close()
	down, err := delivery.OpenTransport(dead, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	tr.use(down)
	form.Set("from_name", "Ada")
	r = c.hxPost("/senders", form)
	wantStatus(t, r, http.StatusServiceUnavailable)
	if got := text(first(r.doc, `#sender-form .alert[role="alert"]`)); got != "The verification mail could not be sent. Try again later." {
		t.Fatalf("relay down: %q\n%.3000s", got, r.body)
	}
	n := 0
	_ = a.svc.Senders.Each(context.Background(), acct, service.ListFilter{}, func(*models.Sender) error { n++; return nil })
	if n != 1 {
		t.Fatalf("%d senders stored, want 1", n)
	}
}
