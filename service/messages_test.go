package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
	"herald/smtptest"
)

// messageInput is a single message to ann with a tracked link and a
// placeholder filled by data.
func messageInput(f *servicetest.SendFixture, to string) service.MessageInput {
	return service.MessageInput{
		SenderID: strconv.FormatInt(f.Sender, 10), To: to, Subject: "Your code ((code))",
		TemplateHTML: `<html><body><p>Hello ((name)), your code is ((code)).</p><a href="https://shop.example.com/account">Account</a></body></html>`,
		Data:         map[string]string{"name": "Ann <3", "code": "4711"},
	}
}

// sentTo waits for the sink's message to an address and returns it.
func sentTo(t *testing.T, f *servicetest.SendFixture, to string, n int) smtptest.Message {
	t.Helper()
	var got []smtptest.Message
	f.WaitFor("the message to "+to, 20*time.Second, func() bool {
		got = got[:0]
		for _, m := range f.SMTP.Messages() {
			if m.To == to {
				got = append(got, m)
			}
		}
		return len(got) >= n
	})
	return got[len(got)-1]
}

// htmlPart is the decoded HTML part of a message.
func htmlPart(t *testing.T, m smtptest.Message) string {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(string(m.Data)))
	if err != nil {
		t.Fatal(err)
	}
	_, params, _ := strings.Cut(msg.Header.Get("Content-Type"), "boundary=")
	r := multipart.NewReader(msg.Body, strings.Trim(params, `"`))
	for {
		p, err := r.NextPart()
		if err != nil {
			t.Fatalf("no html part: %v", err)
		}
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			b, _ := io.ReadAll(p)
			return string(b)
		}
	}
}

// TestMessageSendsAtOnceTrackedWithItsEvents: a single message reaches the
// relay with its data, tracking and VERP return path, without the
// marketing headers; its events (processed, delivered, and a bounce
// reported by Message-ID) reach the webhook with message_id, the id the
// API answered, and no single_send_utr; the bounce suppresses the address,
// and the next message to it is refused.
func TestMessageSendsAtOnceTrackedWithItsEvents(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixtureWith(t, true, 0, allowPrivate)
	rcv := newReceiver(t)
	w, err := f.Svc.EventWebhooks.Save(f.Ctx, f.Acct, service.EventWebhookInput{URL: rcv.srv.URL + "/hook", Events: []string{"processed", "delivered", "bounce"}})
	if err != nil {
		t.Fatal(err)
	}
	rcv.secret = w.Secret
	sent, err := f.Svc.Messages.Send(f.Ctx, f.Acct, messageInput(f, "Ann@Example.com"))
	if err != nil {
		t.Fatal(err)
	}
	m := sentTo(t, f, "ann@example.com", 1)
	h := m.Header()
	if h.Get("Message-Id") != "<"+sent.ID+">" {
		t.Fatalf("Message-Id %q, id %q", h.Get("Message-Id"), sent.ID)
	}
	if s := servicetest.DecodeSubject(t, m); s != "Your code 4711" {
		t.Fatalf("subject %q", s)
	}
	for _, k := range []string{"List-Unsubscribe", "List-Unsubscribe-Post", "List-Id", "Precedence"} {
		if h.Get(k) != "" {
			t.Fatalf("%s: %q on a single message", k, h.Get(k))
		}
	}
	if !strings.HasPrefix(m.From, "bounces+b") {
		t.Fatalf("envelope sender %q: want the VERP return path", m.From)
	}
	body := htmlPart(t, m)
	for _, want := range []string{"Hello Ann &lt;3, your code is 4711.", "http://herald.test/t/c/", "http://herald.test/t/o/"} {
		if !strings.Contains(body, want) {
			t.Fatalf("body lacks %q:\n%s", want, body)
		}
	}
	// Not a single send: no list of sends shows it.
	var n int
	if err := f.Svc.SingleSends.Each(f.Ctx, f.Acct, service.ListFilter{}, func(*models.SingleSend) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("single sends listed %d (%v)", n, err)
	}
	rows, err := f.Svc.Messages.Recent(f.Ctx, f.Acct)
	if err != nil || len(rows) != 1 || rows[0].ID != sent.ID || rows[0].To != "ann@example.com" {
		t.Fatalf("recent %+v %v", rows, err)
	}
	f.WaitFor("the delivery recorded", 10*time.Second, func() bool {
		rows, _ := f.Svc.Messages.Recent(f.Ctx, f.Acct)
		return len(rows) == 1 && rows[0].Outcome == service.MessageOutcome("delivered")
	})

	// A DSN naming the message by its Message-ID only.
	f.Handle(service.Report{Kind: delivery.ReportHardBounce, Source: "dsn", MessageID: sent.ID, Recipient: "ann@example.com",
		Reason: "userunknown", Status: "5.1.1", Diagnostic: "550 5.1.1 no such user"})
	if _, ok := f.Suppressed()["ann@example.com"]; !ok {
		t.Fatal("the bounce did not suppress the address")
	}
	rows, _ = f.Svc.Messages.Recent(f.Ctx, f.Acct)
	if rows[0].Outcome != service.MessageOutcome("bounced") {
		t.Fatalf("outcome %q after the bounce", rows[0].Outcome)
	}
	_, err = f.Svc.Messages.Send(f.Ctx, f.Acct, messageInput(f, "ann@example.com"))
	var se *service.Error
	if !errors.As(err, &se) || se.Code != service.CodeConflict || se.Message != "The address is suppressed." {
		t.Fatalf("a suppressed address: %v", err)
	}

	d, _ := dispatcher(t, f.Svc)
	pass(t, d)
	kinds := map[string]bool{}
	for _, raw := range rcv.events {
		var ev map[string]any
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		if ev["message_id"] != sent.ID || ev["email"] != "ann@example.com" {
			t.Fatalf("event %s; id %s", raw, sent.ID)
		}
		if _, ok := ev["single_send_utr"]; ok {
			t.Fatalf("event %s carries a single_send_utr", raw)
		}
		kinds[ev["event"].(string)] = true
	}
	if rcv.bad != 0 || !kinds["processed"] || !kinds["delivered"] || !kinds["bounce"] {
		t.Fatalf("events %v (bad signatures %d)", kinds, rcv.bad)
	}
}

// TestMessageUnsubscribesDoNotApplyComplaintsDo: a global unsubscriber
// still gets a single message; one who complained does not.
func TestMessageUnsubscribesDoNotApplyComplaintsDo(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	if _, err := f.Svc.Unsubscribers.Add(f.Ctx, f.Acct, "bob@example.com"); err != nil {
		t.Fatal(err)
	}
	sent, err := f.Svc.Messages.Send(f.Ctx, f.Acct, messageInput(f, "bob@example.com"))
	if err != nil {
		t.Fatalf("a global unsubscriber: %v", err)
	}
	sentTo(t, f, "bob@example.com", 1)
	f.Handle(service.Report{Kind: delivery.ReportComplaint, Source: "arf", MessageID: sent.ID, Recipient: "bob@example.com"})
	if _, err := f.Svc.Messages.Send(f.Ctx, f.Acct, messageInput(f, "bob@example.com")); service.ErrorCode(err) != service.CodeConflict {
		t.Fatalf("after a complaint: %v", err)
	}
}

// TestMessageIdempotencyKey: a repeated key answers the first id and
// sends nothing more, whether the calls follow each other or race; after
// 24 hours the key sends again. Keys are the account's own.
func TestMessageIdempotencyKey(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	in := messageInput(f, "cat@example.com")
	in.IdempotencyKey = "order-1"
	first, err := f.Svc.Messages.Send(f.Ctx, f.Acct, in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.Svc.Messages.Send(f.Ctx, f.Acct, in)
	if err != nil || again.ID != first.ID {
		t.Fatalf("again: %+v %v, first %s", again, err, first.ID)
	}
	// Racing calls with a new key: one message.
	in.IdempotencyKey = "order-2"
	ids := make([]string, 8)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := f.Svc.Messages.Send(context.Background(), f.Acct, in)
			if err == nil {
				ids[i] = m.ID
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] || ids[0] == first.ID {
			t.Fatalf("racing calls: ids %v errors %v", ids, errs)
		}
	}
	// Another account's same key is its own.
	other := f.SecondAccount("other@herald.test")
	oin := messageInput(other, "cat@example.com")
	oin.IdempotencyKey = "order-1"
	theirs, err := other.Svc.Messages.Send(f.Ctx, other.Acct, oin)
	if err != nil || theirs.ID == first.ID {
		t.Fatalf("other account: %+v %v", theirs, err)
	}
	sentTo(t, f, "cat@example.com", 3)
	// A day later the key is free again.
	f.Advance(25 * time.Hour)
	in.IdempotencyKey = "order-1"
	later, err := f.Svc.Messages.Send(f.Ctx, f.Acct, in)
	if err != nil || later.ID == first.ID {
		t.Fatalf("after 24 hours: %+v %v", later, err)
	}
	sentTo(t, f, "cat@example.com", 4)
	if got := f.Scalar("SELECT COUNT(*) FROM single_sends WHERE message = 1"); got != 4 {
		t.Fatalf("%d messages, want 4", got)
	}
}

// TestMessageValidation: every problem of the body at once, in the
// contract's words; another account's design is not found.
func TestMessageValidation(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	problems := func(in service.MessageInput) map[string][]string {
		t.Helper()
		_, err := f.Svc.Messages.Send(f.Ctx, f.Acct, in)
		var se *service.Error
		if !errors.As(err, &se) || se.Code != service.CodeValidation {
			t.Fatalf("want a validation error, got %v", err)
		}
		return se.Fields
	}
	got := problems(service.MessageInput{})
	want := map[string]string{
		"sender_id": "The sender id field is required.",
		"to":        "The to field is required.",
		"subject":   "The subject field is required.",
	}
	if len(got) != len(want) {
		t.Fatalf("problems %v", got)
	}
	for k, v := range want {
		if len(got[k]) != 1 || got[k][0] != v {
			t.Fatalf("%s: %v, want %q", k, got[k], v)
		}
	}
	in := messageInput(f, "dan@example.com")
	in.TemplateHTML = ""
	if got = problems(in); len(got) != 1 || got["template_html"][0] != "The template html field is required when template id is not present." {
		t.Fatalf("problems %v", got)
	}
	in = messageInput(f, "not an address")
	in.Subject = "Two\nlines"
	got = problems(in)
	if got["to"][0] != "The to must be a valid email address." || got["subject"][0] != "The subject must not contain line breaks." {
		t.Fatalf("problems %v", got)
	}
	in = messageInput(f, "dan@example.com")
	in.Subject = strings.Repeat("s", 256)
	in.IdempotencyKey = strings.Repeat("k", 256)
	got = problems(in)
	if got["subject"][0] != "The subject may not be greater than 255 characters." || got["idempotency_key"][0] != "The idempotency key may not be greater than 255 characters." {
		t.Fatalf("problems %v", got)
	}
	in = messageInput(f, "dan@example.com")
	in.DataNotObject = true
	if got = problems(in); got["data"][0] != "The data must be an object." {
		t.Fatalf("problems %v", got)
	}

	// A design of the account's is used; another account's is not found.
	own, err := f.Svc.Designs.Create(f.Ctx, f.Acct, service.DesignInput{Name: "Receipt", TemplateHTML: "<p>Receipt for ((name))</p>"})
	if err != nil {
		t.Fatal(err)
	}
	other := f.SecondAccount("other@herald.test")
	theirs, err := other.Svc.Designs.Create(f.Ctx, other.Acct, service.DesignInput{Name: "Theirs", TemplateHTML: "<p>Theirs</p>"})
	if err != nil {
		t.Fatal(err)
	}
	in = messageInput(f, "dan@example.com")
	in.TemplateHTML, in.TemplateID = "", strconv.FormatInt(theirs.ID, 10)
	if got = problems(in); len(got) != 1 || got["template_id"][0] != "The selected template id is invalid." {
		t.Fatalf("problems %v", got)
	}
	in.TemplateID = strconv.FormatInt(own.ID, 10)
	if _, err := f.Svc.Messages.Send(f.Ctx, f.Acct, in); err != nil {
		t.Fatalf("own design: %v", err)
	}
	var html string
	if err := f.Svc.DB.R.Raw("SELECT template_html FROM single_sends WHERE message = 1").Scan(&html).Error; err != nil || html != "<p>Receipt for ((name))</p>" {
		t.Fatalf("design %q %v", html, err)
	}
	// Another account's sender is not a choice; an unverified one is refused.
	in = messageInput(f, "dan@example.com")
	in.SenderID = strconv.FormatInt(other.Sender, 10)
	if got = problems(in); got["sender_id"][0] != "The selected sender id is invalid." {
		t.Fatalf("problems %v", got)
	}
	snd, err := f.Svc.Senders.Create(f.Ctx, f.Acct, service.SenderInput{FromName: "New", FromEmail: "new@shop.example.com",
		ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "new"})
	if err != nil {
		t.Fatal(err)
	}
	in.SenderID = strconv.FormatInt(snd.ID, 10)
	if got = problems(in); got["sender_id"][0] != "The selected sender is not verified." {
		t.Fatalf("problems %v", got)
	}
}
