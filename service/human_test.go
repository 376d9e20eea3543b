package service_test

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// Request shapes of the send below, as tracking logs record them.
var (
	personHit = service.Hit{Method: "GET", IP: netip.MustParseAddr("203.0.113.7"),
		UserAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"}
	// A link scanner that passes itself off as a browser: only its timing
	// gives it away.
	scannerHit = service.Hit{Method: "GET", IP: netip.MustParseAddr("198.51.100.20"),
		UserAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"}
	gmailProxyHit = service.Hit{Method: "GET", IP: netip.MustParseAddr("66.249.84.3"),
		UserAgent: "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)"}
	appleProxyHit = service.Hit{Method: "GET", IP: netip.MustParseAddr("17.58.101.12"),
		UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"}
	yahooProxyHit = service.Hit{Method: "GET", IP: netip.MustParseAddr("74.6.231.20"),
		UserAgent: "YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html"}
)

// TestScannersAndProxiesAreNotPeople: a send to three addresses with
// three tracked links. A privacy proxy fetches every pixel (Gmail's,
// Apple's, Yahoo's); a link scanner clicks every link of every message
// within 2 s (for ann and bob a second after delivery, for cy half a
// minute after, where only the every-link rule sees it and takes the
// first click back); then ann opens and clicks hours later, once more
// within the minute (not counted again) and once after it. The raw
// counters of the spec count everything as before; the human counters,
// the per-link counts and the events' "machine" say what people did.
func TestScannersAndProxiesAreNotPeople(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixtureWith(t, true, 0, func(c *service.Config) { c.EventWebhooksPrivate = true })
	if _, err := f.Svc.EventWebhooks.Save(f.Ctx, f.Acct, service.EventWebhookInput{URL: "http://127.0.0.1:9/hook", Events: []string{"open", "click"}}); err != nil {
		t.Fatal(err)
	}
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com", "cy@example.com")
	in := f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.TemplateHTML = `<html><body><p>Hello ((first_name))</p><a href="https://shop.example.com/a">A</a> <a href="https://shop.example.com/b">B</a>` +
		` <a href="https://shop.example.com/c">C</a><p>((sender_name)), ((sender_address))</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`
	ss := f.Create(in)
	ss = f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	if len(ss.Links) != 3 {
		t.Fatalf("links %v", ss.Links)
	}
	ledger := f.Ledger(ss.ID)
	tok := map[string]string{}
	for _, m := range f.Sent(ss.Utr) {
		tok[m.To] = tokenOf(t, m)
	}
	at := func(email string, d time.Duration) {
		m := ledger[email]
		if m.SentAt == nil {
			t.Fatalf("%s not delivered", email)
		}
		f.Set(m.SentAt.Time.Add(d))
	}
	open := func(email string, h service.Hit) {
		t.Helper()
		if err := f.Svc.Tracking.OpenHit(f.Ctx, tok[email], h); err != nil {
			t.Fatal(err)
		}
	}
	click := func(email string, link int, h service.Hit) {
		t.Helper()
		to, err := f.Svc.Tracking.ClickHit(f.Ctx, tok[email], link, h)
		if err != nil || to != ss.Links[link] {
			t.Fatalf("click %s %d: %q %v", email, link, to, err)
		}
	}

	// Proxies fetch every pixel.
	for email, h := range map[string]service.Hit{"ann@example.com": gmailProxyHit, "bob@example.com": appleProxyHit, "cy@example.com": yahooProxyHit} {
		at(email, 3*time.Second)
		open(email, h)
	}
	// The scanner clicks every link within 2 s.
	for _, email := range []string{"ann@example.com", "bob@example.com"} {
		for i, d := range []time.Duration{1000, 1500, 1900} {
			at(email, d*time.Millisecond)
			click(email, i, scannerHit)
		}
	}
	for i, d := range []time.Duration{30000, 30600, 31200} {
		at("cy@example.com", d*time.Millisecond)
		click("cy@example.com", i, scannerHit)
	}
	// One person opens and clicks hours later; a reload within the
	// minute counts nowhere; an open two minutes later counts again.
	at("ann@example.com", 2*time.Hour)
	open("ann@example.com", personHit)
	at("ann@example.com", 2*time.Hour+5*time.Second)
	click("ann@example.com", 1, personHit)
	at("ann@example.com", 2*time.Hour+20*time.Second)
	open("ann@example.com", personHit)
	at("ann@example.com", 2*time.Hour+2*time.Minute)
	open("ann@example.com", personHit)

	got := f.Get(ss.Utr)
	type counts struct{ UniqueOpens, TotalOpens, UniqueClicks, TotalClicks int64 }
	raw := counts{got.UniqueOpens, got.TotalOpens, got.UniqueClicks, got.TotalClicks}
	human := counts{got.HumanUniqueOpens, got.HumanTotalOpens, got.HumanUniqueClicks, got.HumanTotalClicks}
	// Raw, as the spec counts: 3 proxy opens + ann's two counted opens;
	// the first click of each message (the others within its minute) and
	// ann's click.
	if want := (counts{3, 5, 3, 4}); raw != want {
		t.Fatalf("raw %+v, want %+v", raw, want)
	}
	if want := (counts{1, 2, 1, 1}); human != want {
		t.Fatalf("human %+v, want %+v", human, want)
	}

	_, links, err := f.Svc.SingleSends.Activity(f.Ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	// Raw, human per link: each link sees every message's clicks on it
	// (the scanner's on all three, ann's on the second), though the
	// message counted only the first of its minute.
	wantLinks := [][2]int64{{3, 0}, {4, 1}, {3, 0}}
	for i, l := range links {
		if [2]int64{l.Clicks, l.Human} != wantLinks[i] {
			t.Fatalf("link %d (%s): raw %d human %d, want %v", i, l.URL, l.Clicks, l.Human, wantLinks[i])
		}
	}

	// The events say which were machines. cy's first click went out as a
	// person's before the second link showed the scanner (an event is not
	// taken back; docs/MACHINE_ACTIVITY.md).
	var evs []struct {
		Kind    string
		Email   string
		Machine *int
	}
	if err := f.Svc.DB.R.Table("events").Select("kind, email, machine").Where("user_id = ? AND kind IN ?", f.Acct, []string{"open", "click"}).
		Order("id").Scan(&evs).Error; err != nil {
		t.Fatal(err)
	}
	tally := map[string]int{}
	for _, e := range evs {
		if e.Machine == nil {
			t.Fatalf("%s event of %s without machine", e.Kind, e.Email)
		}
		tally[e.Kind+" "+e.Email+" "+strconv.Itoa(*e.Machine)]++
	}
	want := map[string]int{
		"open ann@example.com 1": 1, "open bob@example.com 1": 1, "open cy@example.com 1": 1, "open ann@example.com 0": 2,
		"click ann@example.com 1": 1, "click bob@example.com 1": 1, "click cy@example.com 0": 1, "click ann@example.com 0": 1,
	}
	if len(tally) != len(want) {
		t.Fatalf("events %v, want %v", tally, want)
	}
	for k, n := range want {
		if tally[k] != n {
			t.Fatalf("events %v, want %v", tally, want)
		}
	}
}

// TestTakeBackOnlyTheHumanCount: a person clicks one link, then a
// scanner (on the same message, seconds later) clicks another within 2 s
// of it: the person's click is taken back only when the two are within
// 2 s; a HEAD request and an empty agent never count as a person; the
// operator's ranges (Config.MachineRanges) are machines for opens and clicks.
func TestTakeBackOnlyTheHumanCount(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixtureWith(t, true, 0, func(c *service.Config) {
		c.MachineRanges = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	})
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com")
	in := f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.TemplateHTML = `<html><body><a href="https://shop.example.com/a">A</a> <a href="https://shop.example.com/b">B</a>` +
		`<p>((sender_name)), ((sender_address))</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`
	ss := f.Create(in)
	ss = f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	ledger := f.Ledger(ss.ID)
	tok := map[string]string{}
	for _, m := range f.Sent(ss.Utr) {
		tok[m.To] = tokenOf(t, m)
	}
	at := func(email string, d time.Duration) { f.Set(ledger[email].SentAt.Time.Add(d)) }
	// ann: a person's click, then another link 5 s later (a person's pace).
	at("ann@example.com", time.Hour)
	if _, err := f.Svc.Tracking.ClickHit(f.Ctx, tok["ann@example.com"], 0, personHit); err != nil {
		t.Fatal(err)
	}
	at("ann@example.com", time.Hour+5*time.Second)
	if _, err := f.Svc.Tracking.ClickHit(f.Ctx, tok["ann@example.com"], 1, personHit); err != nil {
		t.Fatal(err)
	}
	// bob: HEAD, no agent, the operator's range: none is a person.
	for i, h := range []service.Hit{{Method: "HEAD", UserAgent: personHit.UserAgent, IP: personHit.IP},
		{Method: "GET", IP: personHit.IP}, {Method: "GET", UserAgent: personHit.UserAgent, IP: netip.MustParseAddr("192.0.2.9")}} {
		at("bob@example.com", time.Hour+time.Duration(i)*2*time.Minute)
		if err := f.Svc.Tracking.OpenHit(f.Ctx, tok["bob@example.com"], h); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Svc.Tracking.ClickHit(f.Ctx, tok["bob@example.com"], 0, h); err != nil {
			t.Fatal(err)
		}
	}
	got := f.Get(ss.Utr)
	// ann's second click is within the minute of her first: raw counts it
	// not, nor does human (the same once-a-minute rule), and nothing is
	// taken back (5 s apart).
	if got.TotalClicks != 4 || got.UniqueClicks != 2 || got.HumanTotalClicks != 1 || got.HumanUniqueClicks != 1 {
		t.Fatalf("clicks raw %d/%d human %d/%d", got.UniqueClicks, got.TotalClicks, got.HumanUniqueClicks, got.HumanTotalClicks)
	}
	if got.TotalOpens != 3 || got.UniqueOpens != 1 || got.HumanTotalOpens != 0 || got.HumanUniqueOpens != 0 {
		t.Fatalf("opens raw %d/%d human %d/%d", got.UniqueOpens, got.TotalOpens, got.HumanUniqueOpens, got.HumanTotalOpens)
	}
}
