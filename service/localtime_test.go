package service_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/delivery"
	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
	"herald/smtptest"
)

// A local-time send at 09:00 across three zones: New York's 09:00 is still
// to come at the start (10:00 UTC), Paris's and Tokyo's have passed and go
// the next day. Process one sends the first wave and stops; process two,
// on the same database, sends the second; both run for the third. Nothing
// goes early, each wave goes when its time comes, every recipient gets
// one message.
func TestLocalTimeSendReleasesEachZoneAtItsTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := smtptest.Start(t)
	tr, err := delivery.OpenTransport(srv.URL(), 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	start := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	clock := dbtest.NewClock(start)
	procs := dbtest.Processes(t, 2, service.Config{Transport: tr, BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test", Now: clock.Now})
	svc := procs[0]
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	// Contacts with no place take the account's zone.
	if err := svc.Accounts.SetTimeZone(ctx, acct, "America/New_York"); err != nil {
		t.Fatal(err)
	}
	snd, err := svc.Senders.Create(ctx, acct, service.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com",
		ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
	srv.WaitCount(1, 5*time.Second) // the verification mail
	g, err := svc.Groups.Create(ctx, acct, service.GroupInput{GroupName: "News", Description: "News", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: "tz", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	ct, err := svc.ContactTypes.Create(ctx, acct, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	type place struct{ email, country, state, city, tz string }
	nyWave := []place{
		{"ny-city@example.com", "840", "NY", "New York City", ""}, // the city's zone
		{"ny-state@example.com", "840", "New York", "", ""},       // the state's, by name
		{"nowhere@example.com", "", "", "", ""},                   // the account's (an imported contact with no country)
	}
	tokyoWave := []place{
		{"tokyo@example.com", "392", "", "Tokyo", ""},
		{"field@example.com", "250", "", "", "Asia/Tokyo"},    // the field wins over France
		{"bad-field@example.com", "392", "", "", "Mars/Base"}, // not a zone: Japan's
	}
	parisWave := []place{
		{"paris@example.com", "250", "", "Paris", ""},
		{"france@example.com", "France", "", "", ""},
	}
	for _, p := range slices.Concat(nyWave, tokyoWave, parisWave) {
		country := p.country
		if country == "" {
			country = "250" // set to none below: the console and API require one, imports do not
		}
		in := service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), Email: p.email, Country: country, State: p.state, City: p.city}
		if p.tz != "" {
			in.Custom = map[string]string{"tz": p.tz}
		}
		if _, err := svc.Contacts.Create(ctx, acct, in); err != nil {
			t.Fatalf("contact %s: %v", p.email, err)
		}
	}
	if err := svc.DB.W.Exec("UPDATE contacts SET country = '' WHERE email = 'nowhere@example.com'").Error; err != nil {
		t.Fatal(err)
	}

	run := func(svc *service.Service) (stop func()) {
		sg, err := svc.NewSending(ctx, service.SendingConfig{Conns: 2, Backoff: 30 * time.Millisecond, Window: time.Hour, Tick: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); sg.Run(cctx) }()
		return func() { cancel(); <-done }
	}
	stop := run(procs[0])
	defer func() { stop() }()

	ss, err := svc.SingleSends.Create(ctx, acct, service.SingleSendInput{
		TemplateID: "1", TemplateHTML: `<html><body><p>Hello</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`,
		SenderID: strconv.FormatInt(snd.ID, 10), UnsubscribeGroupID: strconv.FormatInt(g.ID, 10),
		SingleSendName: "Morning", Subject: "Good morning", Preheader: "News",
		RecipientID: []string{"contacts_" + strconv.FormatInt(ct.ID, 10)}, ScheduleType: "0",
		Local: &service.LocalTimeInput{On: true, Clock: "09:00", ZoneField: "tz"},
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := func() []string {
		var out []string
		for _, m := range srv.Messages() {
			if m.Header().Get("X-Herald-Send") == ss.Utr {
				out = append(out, m.To)
			}
		}
		slices.Sort(out)
		return out
	}
	emails := func(ps ...[]place) []string {
		var out []string
		for _, p := range slices.Concat(ps...) {
			out = append(out, p.email)
		}
		slices.Sort(out)
		return out
	}
	// still checks for a while (the engine polls every 500 ms) that the
	// send's messages are exactly want.
	still := func(when string, want []string) {
		t.Helper()
		time.Sleep(1200 * time.Millisecond)
		if got := sent(); !slices.Equal(got, want) {
			t.Fatalf("%s: sent %v, want %v", when, got, want)
		}
	}
	waitFor := func(when string, want []string) {
		t.Helper()
		eventually.NoError(t, 15*time.Second, func() error {
			if got := sent(); !slices.Equal(got, want) {
				return fmt.Errorf("%s: sent %v, want %v", when, got, want)
			}
			return nil
		})
	}

	// The waves, once the audience is resolved.
	var waves []service.Wave
	eventually.NoError(t, 10*time.Second, func() error {
		if waves, err = svc.SingleSends.Waves(ctx, acct, ss.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := svc.SingleSends.Get(ctx, acct, ss.Utr); got.Triggered == 8 && len(waves) > 0 {
			return nil
		}
		return fmt.Errorf("not resolved: waves %+v", waves)
	})
	nyAt := time.Date(2030, 5, 1, 13, 0, 0, 0, time.UTC)   // 09:00 EDT, the same day
	tokyoAt := time.Date(2030, 5, 2, 0, 0, 0, 0, time.UTC) // 09:00 JST, the next day (19:00 there at the start)
	parisAt := time.Date(2030, 5, 2, 7, 0, 0, 0, time.UTC) // 09:00 CEST, the next day (12:00 there at the start)
	want := []service.Wave{
		{At: nyAt, Zones: []string{"America/New_York"}, Recipients: 3},
		{At: tokyoAt, Zones: []string{"Asia/Tokyo"}, Recipients: 3},
		{At: parisAt, Zones: []string{"Europe/Paris"}, Recipients: 2},
	}
	checkWaves := func(sentEach ...int64) {
		t.Helper()
		got, err := svc.SingleSends.Waves(ctx, acct, ss.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("waves %+v, want %+v", got, want)
		}
		for i, w := range want {
			g := got[i]
			if !g.At.Equal(w.At) || !slices.Equal(g.Zones, w.Zones) || g.Recipients != w.Recipients || g.Sent != sentEach[i] {
				t.Errorf("wave %d: %v %v %d sent %d; want %v %v %d sent %d", i, g.At, g.Zones, g.Recipients, g.Sent, w.At, w.Zones, w.Recipients, sentEach[i])
			}
		}
	}
	checkWaves(0, 0, 0)

	still("at the start", nil)
	clock.Set(nyAt.Add(-time.Second))
	still("a second before New York's 09:00", nil)
	clock.Set(nyAt)
	waitFor("New York's 09:00", emails(nyWave))
	still("after New York's wave", emails(nyWave))
	checkWaves(3, 0, 0)

	// A restart between waves: this process stops, another takes over.
	stop()
	clock.Set(tokyoAt.Add(-time.Minute))
	stop = run(procs[1])
	still("a minute before Tokyo's 09:00, after the restart", emails(nyWave))
	if got, _ := svc.SingleSends.Get(ctx, acct, ss.Utr); got.Status != models.SendRunning {
		t.Fatalf("status %d with waves to go, want running", got.Status)
	}
	clock.Set(tokyoAt)
	waitFor("Tokyo's 09:00", emails(nyWave, tokyoWave))
	still("after Tokyo's wave", emails(nyWave, tokyoWave))
	if got, _ := svc.SingleSends.Get(ctx, acct, ss.Utr); got.Status != models.SendRunning {
		t.Fatalf("status %d with a wave to go, want running", got.Status)
	}
	// The last wave with both processes running (several processes share
	// the waves through the ledger's claims).
	stopFirst := run(procs[0])
	defer stopFirst()
	still("both processes, before Paris's 09:00", emails(nyWave, tokyoWave))
	clock.Set(parisAt)
	waitFor("Paris's 09:00", emails(nyWave, tokyoWave, parisWave))
	eventually.NoError(t, 10*time.Second, func() error {
		got, _ := svc.SingleSends.Get(ctx, acct, ss.Utr)
		if got.Status == models.SendCompleted {
			if got.Delivered != 8 {
				t.Fatalf("delivered %d, want 8", got.Delivered)
			}
			return nil
		}
		return fmt.Errorf("status %d after the last wave, want completed", got.Status)
	})
	for addr, n := range srv.PerRecipient() {
		if n != 1 && addr != "news@shop.example.com" && addr != "help@shop.example.com" {
			t.Errorf("%s got %d messages", addr, n)
		}
	}
	checkWaves(3, 3, 2)
}

func TestLocalTimeOptionIsValidated(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeA := f.ContactType("Customers", "ann@example.com")
	if _, err := f.Svc.Fields.Create(f.Ctx, f.Acct, service.FieldInput{FieldName: "tz", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	in := f.Input("Local", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	for _, tc := range []struct {
		local service.LocalTimeInput
		field string // "" : valid
	}{
		{service.LocalTimeInput{On: true, Clock: "25:00"}, "local_time"},
		{service.LocalTimeInput{On: true, Clock: "nine"}, "local_time"},
		{service.LocalTimeInput{On: true}, "local_time"},
		{service.LocalTimeInput{On: true, Clock: "09:00", ZoneField: "nope"}, "local_zone_field"},
		{service.LocalTimeInput{On: true, Clock: "09:00", ZoneField: "tz"}, ""},
		{service.LocalTimeInput{On: true, Clock: "9:30:00"}, ""},
	} {
		in.Local = &tc.local
		ss, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, in)
		if tc.field != "" {
			if service.ErrorCode(err) != service.CodeValidation || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("%+v: %v, want a validation error on %s", tc.local, err, tc.field)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.local, err)
			continue
		}
		if ss.LocalTime != normalClock(tc.local.Clock) || ss.LocalZoneField != tc.local.ZoneField {
			t.Errorf("%+v: stored %q %q", tc.local, ss.LocalTime, ss.LocalZoneField)
		}
		// An update without the option keeps it; with it off, it is off.
		up := in
		up.Utr, up.Local = ss.Utr, nil
		got, err := f.Svc.SingleSends.Update(f.Ctx, f.Acct, up)
		if err != nil || got.LocalTime != ss.LocalTime {
			t.Errorf("update without the option: %v, local time %q", err, got.LocalTime)
		}
		up.Local = &service.LocalTimeInput{}
		if got, err = f.Svc.SingleSends.Update(f.Ctx, f.Acct, up); err != nil || got.LocalTime != "" {
			t.Errorf("update turning it off: %v, local time %q", err, got.LocalTime)
		}
	}
}

func normalClock(s string) string {
	if len(s) == 7 || len(s) == 4 { // 9:30:00, 9:30
		s = "0" + s
	}
	return s[:5]
}
