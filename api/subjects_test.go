package api_test

import "testing"

// TestSubjectWithLineBreaks: decisions.md 8 and finding 2. A subject with
// a control character is refused on input (422) on single send create and
// update and on automation schedule create; nothing is stored.
func TestSubjectWithLineBreaks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	msg := map[string][]string{"subject": {"The subject must not contain line breaks."}}
	utr := utrOfReply(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body())))
	auto := utrOfReply(t, e.a.send("POST", "/api/automations/create", form("type", "custom", "unsubscribe_group_id", "0")))
	for _, subject := range []string{"Hi\r\nBcc: victim@example.com", "Hi\nthere", "Hi\rthere", "tab\there", "nul\x00", "del\x7f", "sep\u2028x", "Hi\r\n"} {
		expectVAL(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body("subject", subject))), msg)
		expectVAL(t, e.a.send("POST", "/api/single/send/update", jsonBody(t, s.body("utr", utr, "subject", subject))), msg)
		expectVAL(t, e.a.send("POST", "/api/single/send/update", form("utr", utr, "template_id", "2", "sender_id", itoa(s.sender), "unsubscribe_group_id", itoa(s.group),
			"single_send_name", "N", "subject", subject, "preheader", "P", "recipient_id[]", "contacts_"+itoa(s.ctype), "schedule_type", "0")), msg)
		expectVAL(t, e.a.send("POST", "/api/automations/schedule/create", form("utr", auto, "sender_id", itoa(s.sender), "subject", subject,
			"waiting_period", "0", "waiting_type", "instantly", "template_id", "2", "preview_img", "02-newsletter.png")), msg)
	}
	if got := details(t, e.a, utr); got.Subject != "Hi" {
		t.Fatalf("subject stored: %q", got.Subject)
	}
	if got := schedulesOf(t, e.a, auto); len(got) != 0 {
		t.Fatalf("schedules stored: %v", got)
	}
	// Other characters are fine: accents, emoji, placeholders.
	utrOfReply(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body("subject", "Été 🌞 for ((first_name))"))))
}
