package api_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// TestMailSend: POST api/mail/send answers the message's id in the
// envelope (JSON and form bodies), the same id for a repeated key, the
// contract's field messages, and 422 with a string for a suppressed
// address. The message goes to the outbox (no relay in this app).
func TestMailSend(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	body := `{"sender_id":` + itoa(s.sender) + `,"to":"ann@example.com","subject":"Code ((code))",` +
		`"template_html":"<p>Hi ((name))</p>","data":{"name":"Ann","code":4711},"idempotency_key":"k1"}`
	r := e.a.send("POST", "/api/mail/send", body)
	var msg struct {
		ID string `json:"id"`
	}
	if r.Code != 200 || r.Status != "success" || json.Unmarshal(r.Message, &msg) != nil || !strings.Contains(msg.ID, "@shop.example.com") {
		t.Fatalf("send: %d %s", r.Code, r.raw)
	}
	again := e.a.send("POST", "/api/mail/send", body)
	if again.Code != 200 || string(again.Message) != string(r.Message) {
		t.Fatalf("repeated key: %s, first %s", again.raw, r.raw)
	}
	// A form body works the same; data as data[key].
	f := url.Values{"sender_id": {itoa(s.sender)}, "to": {"bob@example.com"}, "subject": {"Hi"}, "template_html": {"<p>((name))</p>"}, "data[name]": {"Bob"}}
	if r := e.a.send("POST", "/api/mail/send", f); r.Code != 200 || r.Status != "success" {
		t.Fatalf("form: %s", r.raw)
	}
	expectVAL(t, e.a.send("POST", "/api/mail/send", `{}`), map[string][]string{
		"sender_id": {"The sender id field is required."},
		"to":        {"The to field is required."},
		"subject":   {"The subject field is required."},
	})
	expectVAL(t, e.a.send("POST", "/api/mail/send", `{"sender_id":`+itoa(s.sender)+`,"to":"ann@example.com","subject":"x","template_html":"<p>x</p>","data":"x"}`),
		map[string][]string{"data": {"The data must be an object."}})
	// Another account's sender is not a choice of b's.
	expectVAL(t, e.b.send("POST", "/api/mail/send", body), map[string][]string{"sender_id": {"The selected sender id is invalid."}})

	if err := e.svc.DB.W.Exec("INSERT INTO suppressions (user_id, email, reason, created_at) VALUES (?, 'cat@example.com', 'userunknown', ?)",
		e.a.id, "2026-01-01 00:00:00").Error; err != nil {
		t.Fatal(err)
	}
	r = e.a.send("POST", "/api/mail/send", strings.Replace(strings.Replace(body, "ann@", "cat@", 1), "k1", "k2", 1))
	if r.Code != 422 || r.Status != "failed" || r.text(r.Errors) != "The address is suppressed." {
		t.Fatalf("suppressed: %d %s", r.Code, r.raw)
	}
}
