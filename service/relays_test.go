package service_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
	"herald/smtptest"
)

// A send through several relays: each ledger row names the relay that
// took its message, the send counts its messages per relay, and no
// message is lost or sent twice while one relay answers 421 part way.
func TestSendNamesItsRelays(t *testing.T) {
	t.Parallel()
	a, b := smtptest.Start(t), smtptest.Start(t)
	cfgs, err := delivery.ParseRelays(a.URL() + "&name=alpha " + b.URL() + "&name=beta&weight=2")
	if err != nil {
		t.Fatal(err)
	}
	var relays *delivery.Relays
	f := servicetest.NewSendFixtureWith(t, true, 0, func(c *service.Config) {
		relays = delivery.NewRelays(delivery.RelaysConfig{Relays: cfgs, MaxConns: 2, PauseMin: 50 * time.Millisecond})
		c.Transport = relays
	})
	t.Cleanup(func() { relays.Close() })
	var emails []string
	for i := range 30 {
		emails = append(emails, fmt.Sprintf("r%02d@example.com", i))
	}
	typeA := f.ContactType("Customers", emails...)
	// alpha refuses with 421 from the start: its share goes to beta.
	a.Refuse(smtptest.AtMail, "*", 421, "4.3.2", "shutting down")
	ss := f.Create(f.Input("Relayed", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	done := f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	if done.Delivered != 30 {
		t.Fatalf("delivered %d", done.Delivered)
	}
	got := map[string]int{}
	for _, s := range []*smtptest.Server{a, b} {
		for r, n := range s.PerRecipient() {
			got[r] += n
		}
	}
	for _, e := range emails {
		if got[e] != 1 {
			t.Errorf("%s received %d messages", e, got[e])
		}
	}
	counts, err := f.Svc.SingleSends.Relays(f.Ctx, f.Acct, ss.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 1 || counts[0].Relay != "beta" || counts[0].N != 30 {
		t.Fatalf("relays of the send: %+v", counts)
	}
	// Another account reads nothing of this send's relays.
	other, _ := f.OtherAccount("other@example.com")
	if c, err := f.Svc.SingleSends.Relays(f.Ctx, other, ss.ID); err != nil || len(c) != 0 {
		t.Fatalf("another account reads %+v, %v", c, err)
	}
	// Once alpha answers again, a second send is split between both and
	// each row says which.
	a.Lift(smtptest.AtMail, "*")
	f.WaitFor("alpha's pause is over", 10*time.Second, func() bool {
		st, _ := relays.Status(f.Ctx)
		return !time.Now().Before(st[0].PausedUntil)
	})
	ss2 := f.Create(f.Input("Relayed again", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	f.WaitStatus(ss2.Utr, models.SendCompleted, 20*time.Second)
	counts, err = f.Svc.SingleSends.Relays(f.Ctx, f.Acct, ss2.ID)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int64{}
	for _, c := range counts {
		byName[c.Relay] = c.N
	}
	if byName["alpha"]+byName["beta"] != 30 || byName["alpha"] == 0 || byName["beta"] == 0 {
		t.Fatalf("relays of the second send: %+v", counts)
	}
	n := int64(0)
	for _, e := range emails {
		n += int64(a.PerRecipient()[e])
	}
	if n != byName["alpha"] {
		t.Fatalf("alpha received %d, its rows say %d", n, byName["alpha"])
	}
}
