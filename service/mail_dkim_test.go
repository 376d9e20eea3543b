package service_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/emersion/go-msgauth/dkim"

	"herald/dbtest"
	"herald/delivery"
	"herald/dnstest"
	"herald/service"
	"herald/service/servicetest"
)

// TestSystemMailSignedOnceSeen: herald's own mail (verification, sign-up,
// notifications) is signed with the key of its domain only once a DNS
// check has seen that key's record; before, it goes out unsigned. The
// record is among a sender's DNS records even when the sender's domain is
// the one herald's own mail comes from, so an operator can publish it.
func TestSystemMailSignedOnceSeen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	mem := &delivery.MemoryOutbox{}
	svc := dbtest.Service(t, service.Config{Transport: delivery.NewOutbox(mem), BaseURL: "https://herald.shop.example.com",
		SystemFrom: "no-reply@shop.example.com", BounceAddress: "bounces@shop.example.com",
		DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr}})
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	if _, err := svc.Notifications.Save(ctx, acct, service.NotificationInput{EmailAddress: "ops@example.org", EmailOwner: "Ops"}); err != nil {
		t.Fatal(err)
	}
	resolver, err := service.NewResolver(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	// mails sends a sign-up link, a notification and a sender's
	// verification, and returns each one's DKIM signatures as verified
	// against the DNS server.
	n := 0
	mails := func() map[string][]*dkim.Verification {
		t.Helper()
		n++
		before := len(mem.Messages())
		if err := svc.Mail.SendSignupLink(ctx, "Ann", fmt.Sprintf("ann%d@example.org", n), "token"); err != nil {
			t.Fatal(err)
		}
		service.Notify(ctx, svc, acct, "Send completed")
		if _, err := svc.Senders.Create(ctx, acct, senderIn(fmt.Sprintf("news%d@shop.example.com", n))); err != nil {
			t.Fatal(err)
		}
		out := map[string][]*dkim.Verification{}
		for _, m := range mem.Messages()[before:] {
			vs, err := dkim.VerifyWithOptions(bytes.NewReader(m.Data), &dkim.VerifyOptions{LookupTXT: func(name string) ([]string, error) {
				return resolver.TXT(ctx, name)
			}})
			if err != nil {
				t.Fatal(err)
			}
			out[m.To[0]] = vs
		}
		if len(out) != 3 {
			t.Fatalf("%d mails, want 3", len(out))
		}
		return out
	}
	for to, vs := range mails() {
		if len(vs) != 0 {
			t.Fatalf("mail to %s signed before the key's record was seen: d=%s err=%v", to, vs[0].Domain, vs[0].Err)
		}
	}

	// The sender's DNS records show the key, though the sender's domain is
	// the one herald's own mail comes from.
	snd := senders(t, svc, acct)[0]
	recs, err := svc.Senders.DNSRecords(ctx, acct, snd.ID)
	if err != nil {
		t.Fatal(err)
	}
	var sys *service.DNSRecord
	for i, r := range recs {
		if r.Purpose == service.PurposeSystemDKIM {
			sys = &recs[i]
		}
	}
	if sys == nil || sys.Name != "herald._domainkey.shop.example.com" || !strings.HasPrefix(sys.Value, "v=DKIM1; k=rsa; p=") {
		t.Fatalf("no record of herald's own key among %+v", recs)
	}
	rep, err := svc.DomainChecks.Report(ctx, acct, "shop.example.com")
	if err != nil || rep.System == nil || rep.System.SeenAt != nil || rep.System.Record != *sys || rep.System.From != "no-reply@shop.example.com" {
		t.Fatalf("report of herald's own key %+v, %v", rep.System, err)
	}

	// Another key's record at that name is not herald's: still unsigned.
	acctKey, err := svc.Mail.DomainKey(ctx, acct, "shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	_, other := acctKey.DNSRecord()
	srv.TXT(t, sys.Name, other)
	if rep, err = svc.DomainChecks.CheckNow(ctx, acct, "shop.example.com"); err != nil || rep.System.SeenAt != nil {
		t.Fatalf("another key's record seen as herald's: %+v %v", rep.System, err)
	}
	for to, vs := range mails() {
		if len(vs) != 0 {
			t.Fatalf("mail to %s signed with a record holding another key", to)
		}
	}

	// Published: Check now sees it, and herald's own mail is signed from
	// then on, with a signature receivers verify.
	srv.Remove(sys.Name)
	srv.TXT(t, sys.Name, sys.Value)
	if rep, err = svc.DomainChecks.CheckNow(ctx, acct, "shop.example.com"); err != nil || rep.System.SeenAt == nil {
		t.Fatalf("the published record not seen: %+v %v", rep.System, err)
	}
	for to, vs := range mails() {
		if len(vs) != 1 || vs[0].Err != nil || vs[0].Domain != "shop.example.com" {
			t.Fatalf("mail to %s: signatures %+v", to, vs)
		}
	}
}

// TestSystemKeySeenByTheDailyRound: the hourly part of the daily round
// looks for the record of herald's own key too, so its mail gets signed
// without anyone pressing Check now.
func TestSystemKeySeenByTheDailyRound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	svc := dbtest.Service(t, service.Config{BaseURL: "https://herald.example.net", SystemFrom: "no-reply@herald.example.net",
		DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr}})
	st, err := svc.Mail.SystemKeyState(ctx)
	if err != nil || st == nil || st.SeenAt != nil {
		t.Fatalf("before: %+v %v", st, err)
	}
	srv.TXT(t, st.Record.Name, st.Record.Value)
	if _, err := svc.DomainChecks.CheckDue(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err = svc.Mail.SystemKeyState(ctx); err != nil || st.SeenAt == nil {
		t.Fatalf("after the round: %+v %v", st, err)
	}
}
