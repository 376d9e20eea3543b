package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// POST api/single/send/resend: a scheduled (not completed) send is
// refused; once completed, the resend is saved with its subject and
// answers its utr; its details name the new subject; a second resend and
// a wait out of bounds are refused (422).
func TestSingleSendResend(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	utr := utrOfReply(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body())))
	body := func(kv ...string) string {
		m := map[string]any{"utr": utr, "subject": "Did you see it?", "wait_days": "3"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return jsonBody(t, m)
	}
	if r := e.a.send("POST", "/api/single/send/resend", body()); r.Code != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "Only a completed single send") {
		t.Fatalf("a scheduled send: %d %s", r.Code, r.raw)
	}
	if err := e.svc.DB.W.Exec("UPDATE single_sends SET status = 3, resolved = 1, sent_at = CURRENT_TIMESTAMP WHERE utr = ?", utr).Error; err != nil {
		t.Fatal(err)
	}
	if r := e.a.send("POST", "/api/single/send/resend", body("wait_days", "20")); r.Code != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "wait_days") {
		t.Fatalf("20 days: %d %s", r.Code, r.raw)
	}
	rs := utrOfReply(t, e.a.send("POST", "/api/single/send/resend", body()))
	got := details(t, e.a, rs)
	if got.Subject != "Did you see it?" || got.Status != 1 || got.ScheduleType != 1 || !strings.HasPrefix(got.SingleSendName, "Resend: ") {
		t.Fatalf("the resend: %+v", got)
	}
	if r := e.a.send("POST", "/api/single/send/resend", body()); r.Code != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "already has a resend") {
		t.Fatalf("a second resend: %d %s", r.Code, r.raw)
	}
}
