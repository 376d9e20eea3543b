package api_test

import (
	"context"
	"net/http"
	"testing"
)

// mendedDesign passes the checklist's design rules.
const mendedDesign = `<p>Hello ((first_name)), our autumn sale starts on Monday.</p><p>((sender_address))</p><a href="((unsubscribe_preferences))">Unsubscribe</a>`

// With the account's checklist blocking, a failing send and set-live are
// refused with the usual 422 envelope, one message per failure under
// "checklist"; the same requests pass once it is off, and once mended.
func TestChecklistEnvelope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	sb := newSendSetup(t, e, e.b)
	ctx := context.Background()
	if err := e.svc.Checklist.SetBlocks(ctx, e.a.id, true); err != nil {
		t.Fatal(err)
	}
	// The default body's design, "<p>Hello ((first_name))</p>", has no
	// unsubscribe link and no postal address.
	const want = `{"status":"failed","errors":{"checklist":["The design has no unsubscribe link: add ((unsubscribe_preferences)) to it. Gmail and Yahoo ask bulk mail for a visible way out.","The design does not show the sender's postal address: add ((sender_address)) to its footer."]}}`
	r := e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body()))
	if r.Code != http.StatusUnprocessableEntity || r.raw != want {
		t.Fatalf("create: %d %s", r.Code, r.raw)
	}
	// Body errors answer as before, without the checklist.
	expectVAL(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body("subject", "<delete>"))), map[string][]string{
		"subject": {"The subject field is required."}})
	// Another account, not blocking, sends the same body.
	utrOfReply(t, e.b.send("POST", "/api/single/send/create", jsonBody(t, sb.body())))

	utr := utrOfReply(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body("template_html", mendedDesign))))
	r = e.a.send("POST", "/api/single/send/update", jsonBody(t, s.body("utr", utr)))
	if r.Code != http.StatusUnprocessableEntity || r.raw != want {
		t.Fatalf("update: %d %s", r.Code, r.raw)
	}
	if got := details(t, e.a, utr); *got.TemplateHTML != mendedDesign {
		t.Fatalf("a refused update changed the send: %q", *got.TemplateHTML)
	}

	// Set live: each email's failures, numbered.
	autoUtr := utrOfReply(t, e.a.send("POST", "/api/automations/create", jsonBody(t, map[string]any{"type": "custom",
		"automation_for": "contacts_" + itoa(s.ctype), "automation_name": "Onboarding", "unsubscribe_group_id": itoa(s.group)})))
	utrOfReply(t, e.a.send("POST", "/api/automations/schedule/create", form("utr", autoUtr, "sender_id", itoa(s.sender), "subject", "Day 1",
		"waiting_period", "1", "waiting_type", "instantly", "template_id", "1", "preview_img", "01-blank.png", "template_html", mendedDesign)))
	utrOfReply(t, e.a.send("POST", "/api/automations/schedule/create", form("utr", autoUtr, "sender_id", itoa(s.sender), "subject", "Day 2",
		"waiting_period", "2", "waiting_type", "days", "template_id", "1", "preview_img", "01-blank.png", "template_html", "<p>Two</p><p>((sender_address))</p>")))
	r = e.a.send("GET", "/api/automations/set-live?utr="+autoUtr, nil)
	const wantLive = `{"status":"failed","errors":{"checklist":["Email 2: The design has no unsubscribe link: add ((unsubscribe_preferences)) to it. Gmail and Yahoo ask bulk mail for a visible way out."]}}`
	if r.Code != http.StatusUnprocessableEntity || r.raw != wantLive {
		t.Fatalf("set live: %d %s", r.Code, r.raw)
	}

	// Off: the same requests pass, answered as the spec says.
	if err := e.svc.Checklist.SetBlocks(ctx, e.a.id, false); err != nil {
		t.Fatal(err)
	}
	if r := e.a.send("POST", "/api/single/send/update", jsonBody(t, s.body("utr", utr))); r.raw != `{"status":"success","message":{"utr":"`+utr+`"}}` {
		t.Fatalf("update, not blocking: %d %s", r.Code, r.raw)
	}
	utrOfReply(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body())))
	expectOK(t, e.a.send("GET", "/api/automations/set-live?utr="+autoUtr, nil), "Automation has been set live")
}
