package service_test

import (
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
	"herald/world"
)

// TestReportAudienceAndCompare: the counts by mail client, device and
// country kept as opens and clicks are counted, machines apart (a
// privacy proxy's opens, a scanner's click taken back), and the compare
// page's hours. With Debian's geoip-database installed the countries are
// read from its file; without it, every country is unknown and the report
// says no database names them.
func TestReportAudienceAndCompare(t *testing.T) {
	t.Parallel()
	geo, err := world.OpenGeoIP(world.DebianGeoIP, world.DebianGeoIPv6)
	if err != nil {
		t.Fatal(err)
	}
	if !geo.Loaded() {
		t.Log("Debian's geoip-database is not installed (" + world.DebianGeoIP + "): countries are checked as unknown")
	}
	f := servicetest.NewSendFixtureWith(t, true, 0, func(c *service.Config) { c.Countries = geo })
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com", "cy@example.com")
	in := f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.TemplateHTML = `<html><body><p>Hello</p><a href="https://shop.example.com/a">A</a> <a href="https://shop.example.com/b">B</a><a href="((unsubscribe_preferences))">Preferences</a></body></html>`
	ss := f.Create(in)
	ss = f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	ledger := f.Ledger(ss.ID)
	tok := map[string]string{}
	for _, m := range f.Sent(ss.Utr) {
		tok[m.To] = tokenOf(t, m)
	}
	at := func(email string, d time.Duration) { f.Set(ledger[email].SentAt.Time.Add(d)) }
	open := func(email string, h service.Hit) {
		t.Helper()
		if err := f.Svc.Tracking.OpenHit(f.Ctx, tok[email], h); err != nil {
			t.Fatal(err)
		}
	}
	click := func(email string, link int, h service.Hit) {
		t.Helper()
		if _, err := f.Svc.Tracking.ClickHit(f.Ctx, tok[email], link, h); err != nil {
			t.Fatal(err)
		}
	}
	iPhoneGB := service.Hit{Method: "GET", IP: netip.MustParseAddr("81.2.69.160"),
		UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"}
	outlookUS := service.Hit{Method: "GET", IP: netip.MustParseAddr("8.8.8.8"),
		UserAgent: "Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17425; Pro)"}
	chromeGB := service.Hit{Method: "GET", IP: netip.MustParseAddr("81.2.69.160"), UserAgent: personHit.UserAgent}

	for _, e := range []string{"ann@example.com", "bob@example.com", "cy@example.com"} {
		at(e, 5*time.Second)
		open(e, appleProxyHit) // Apple's proxy: a machine's
	}
	at("ann@example.com", time.Hour+time.Minute)
	open("ann@example.com", iPhoneGB)
	at("ann@example.com", time.Hour+3*time.Minute)
	open("ann@example.com", iPhoneGB) // again: a hit, not another person
	at("bob@example.com", 3*time.Hour)
	open("bob@example.com", outlookUS)
	at("ann@example.com", 2*time.Hour)
	click("ann@example.com", 0, chromeGB)
	// A scanner follows both links half a minute after delivery: the
	// second click takes the first back.
	at("cy@example.com", 30*time.Second)
	click("cy@example.com", 0, scannerHit)
	at("cy@example.com", 31*time.Second)
	click("cy@example.com", 1, scannerHit)

	a, err := f.Svc.SingleSends.Audience(f.Ctx, ss)
	if err != nil {
		t.Fatal(err)
	}
	want := func(name string, got []service.ClassCount, exp ...service.ClassCount) {
		t.Helper()
		if len(got) != len(exp) {
			t.Fatalf("%s: %+v, want %+v", name, got, exp)
		}
		for i := range exp {
			if got[i] != exp[i] {
				t.Fatalf("%s: %+v, want %+v", name, got, exp)
			}
		}
	}
	want("clients", a.Clients, service.ClassCount{Key: delivery.ClientAppleMail, Opened: 1}, service.ClassCount{Key: delivery.ClientOutlook, Opened: 1},
		service.ClassCount{Key: delivery.ClientOther, Clicked: 1})
	want("devices", a.Devices, service.ClassCount{Key: delivery.DeviceDesktop, Opened: 1, Clicked: 1}, service.ClassCount{Key: delivery.DeviceMobile, Opened: 1})
	if geo.Loaded() {
		if !a.CountriesKnown {
			t.Fatal("countries unknown with a database")
		}
		want("countries", a.Countries, service.ClassCount{Key: "GB", Opened: 1, Clicked: 1}, service.ClassCount{Key: "US", Opened: 1})
	} else {
		want("countries", a.Countries, service.ClassCount{Key: "", Opened: 2, Clicked: 1})
	}
	if a.MachineOpens != 3 || a.MachineClicks != 1 {
		t.Fatalf("machines: %d opens, %d clicks", a.MachineOpens, a.MachineClicks)
	}
	want("machines", a.Machines, service.ClassCount{Key: delivery.ClientAppleMail, Opened: 3}, service.ClassCount{Key: delivery.ClientOther, Clicked: 1})

	// A second send, opened by ann ten minutes after delivery.
	f.Set(time.Now().Add(24 * time.Hour))
	ss2 := f.Create(f.Input("Summer", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	ss2 = f.WaitStatus(ss2.Utr, models.SendCompleted, 20*time.Second)
	ledger2 := f.Ledger(ss2.ID)
	for _, m := range f.Sent(ss2.Utr) {
		tok[m.To] = tokenOf(t, m)
	}
	f.Set(ledger2["ann@example.com"].SentAt.Time.Add(10 * time.Minute))
	open("ann@example.com", iPhoneGB)

	got, err := f.Svc.SingleSends.Compare(f.Ctx, f.Acct, []string{ss.Utr, ss2.Utr, ss.Utr})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Send.Utr != ss.Utr || got[1].Send.Utr != ss2.Utr {
		t.Fatalf("compared %d sends", len(got))
	}
	for _, c := range []struct {
		name  string
		curve []int64
		hours map[int]int64
	}{
		{"Spring opened", got[0].OpenedBy, map[int]int64{0: 0, 1: 1, 2: 1, 3: 2, service.CompareHours - 1: 2}},
		{"Spring clicked", got[0].ClickedBy, map[int]int64{0: 0, 1: 0, 2: 1, service.CompareHours - 1: 1}},
		{"Summer opened", got[1].OpenedBy, map[int]int64{0: 1, service.CompareHours - 1: 1}},
	} {
		for h, n := range c.hours {
			if c.curve[h] != n {
				t.Errorf("%s within %d h: %d, want %d", c.name, h+1, c.curve[h], n)
			}
		}
	}
	if _, err := f.Svc.SingleSends.Compare(f.Ctx, f.Acct, []string{ss.Utr}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("one send compared: %v", err)
	}
	other := servicetest.NewAccount(t, f.Svc, "other@herald.test")
	if _, err := f.Svc.SingleSends.Compare(f.Ctx, other, []string{ss.Utr, ss2.Utr}); !service.IsNotFound(err) {
		t.Fatalf("another account's sends: %v", err)
	}
	if _, err := os.Stat(world.DebianGeoIP); err == nil && !geo.Loaded() {
		t.Fatal("the file is there but not loaded")
	}
}
