package api_test

import "testing"

// Warm-up plans through the API: a JSON start with numbers, the list, the
// field problems, another account's domain, the end and an end of
// nothing.
func TestWarmupPlans(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	expectOK(t, e.a.send("POST", "/api/sender/save", form(toForm(senderForm())...)), "Added Successfully")
	expectOK(t, e.a.send("POST", "/api/senders/warmup", `{"domain":"Acme.example.com","start":50,"growth":1.5,"until":1000}`), "Saved Successfully")
	type plan struct {
		Domain    string  `json:"domain"`
		Start     int64   `json:"start"`
		Growth    float64 `json:"growth"`
		Until     int64   `json:"until"`
		Days      int64   `json:"days"`
		Day       int64   `json:"day"`
		Done      bool    `json:"done"`
		TodayCap  int64   `json:"today_cap"`
		TodaySent int64   `json:"today_sent"`
		TodayLeft int64   `json:"today_left"`
	}
	ps := list[plan](t, e.a.send("GET", "/api/senders/warmup", nil), "warmups")
	if len(ps) != 1 || ps[0] != (plan{Domain: "acme.example.com", Start: 50, Growth: 1.5, Until: 1000, Days: 9, Day: 1, TodayCap: 50, TodayLeft: 50}) {
		t.Fatalf("plans %+v", ps)
	}
	expectVAL(t, e.a.send("POST", "/api/senders/warmup", form("domain", "other.example.com", "start", "0", "growth", "11", "until", "x")), map[string][]string{
		"domain": {"The domain must be the domain of one of your senders."},
		"start":  {"The start must be at least 1."},
		"growth": {"The growth must be greater than 1 and at most 10."},
		"until":  {"The until must be an integer."},
	})
	expectVAL(t, e.a.send("POST", "/api/senders/warmup", form("start", "10", "growth", "2", "until", "10")), map[string][]string{
		"domain": {"The domain field is required."},
		"until":  {"The until must be greater than the start."},
	})
	// Another account neither sees nor ends the plan, nor starts one for
	// a domain of someone else's sender.
	b := e.account(t, "b@herald.test")
	if ps := list[plan](t, b.send("GET", "/api/senders/warmup", nil), "warmups"); len(ps) != 0 {
		t.Fatalf("another account's plans %+v", ps)
	}
	expectNF(t, b.send("DELETE", "/api/senders/warmup?domain=acme.example.com", nil), "The domain has no warm-up plan.")
	expectVAL(t, b.send("POST", "/api/senders/warmup", form("domain", "acme.example.com", "start", "10", "growth", "2", "until", "100")), map[string][]string{
		"domain": {"The domain must be the domain of one of your senders."},
	})
	expectOK(t, e.a.send("DELETE", "/api/senders/warmup?domain=ACME.example.com", nil), "Deleted Successfully")
	expectNF(t, e.a.send("DELETE", "/api/senders/warmup?domain=acme.example.com", nil), "The domain has no warm-up plan.")
	if ps := list[plan](t, e.a.send("GET", "/api/senders/warmup", nil), "warmups"); len(ps) != 0 {
		t.Fatalf("plans after the end %+v", ps)
	}
}
