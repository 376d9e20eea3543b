package service_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"herald/dbtest"
	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
	"herald/smtptest"
)

// mailedSvc is a service over svc's database with a transport for
// smtpURL ("" = the outbox) and the clock.
func mailedSvc(t *testing.T, svc *service.Service, smtpURL string, c *dbtest.Clock) *service.Service {
	t.Helper()
	tr, err := delivery.OpenTransport(smtpURL, 2, service.NewOutbox(svc.DB))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	out, err := service.New(svc.DB, service.Config{Transport: tr, BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test", Now: c.Now,
		PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func senderIn(email string) service.SenderInput {
	return service.SenderInput{FromName: "Shop", FromEmail: email, ReplyToEmail: "help@shop.example.com",
		CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"}
}

// senders lists the account's senders (copies: the reader reuses rows).
func senders(t *testing.T, svc *service.Service, acct int64) []models.Sender {
	t.Helper()
	var out []models.Sender
	if err := svc.Senders.Each(context.Background(), acct, service.ListFilter{}, func(s *models.Sender) error {
		out = append(out, *s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantLimited checks a refusal over a verification limit, with its wait.
func wantLimited(t *testing.T, err error, wait time.Duration) {
	t.Helper()
	var se *service.Error
	if !errors.As(err, &se) || se.Code != service.CodeRateLimited || se.RetryAfter != wait {
		t.Fatalf("want rate limited, retry after %v; got %#v", wait, err)
	}
	mins := int((wait + time.Minute - 1) / time.Minute)
	unit := "minutes"
	if mins == 1 {
		unit = "minute"
	}
	if want := fmt.Sprintf("Too many verification mails. Try again in %d %s.", mins, unit); se.Message != want {
		t.Fatalf("message %q, want %q", se.Message, want)
	}
}

// decisions.md 8: at most 3 verification mails per sender per 10 minutes,
// save, resend and a change of from_email counted together; the mails are
// seen on a real SMTP server.
func TestVerificationMailsPerSender(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, srv := dbtest.Service(t), smtptest.Start(t)
	c := dbtest.NewClock(time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC))
	svc = mailedSvc(t, svc, srv.URL(), c)
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")

	s, err := svc.Senders.Create(ctx, acct, senderIn("news@shop.example.com")) // 1
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute)
	for i := 0; i < 2; i++ { // 2, 3
		if err := svc.Senders.ResendVerification(ctx, acct, s.ID); err != nil {
			t.Fatalf("resend %d: %v", i+2, err)
		}
	}
	c.Advance(time.Minute)
	// The 4th waits until the first is 10 minutes old: 8 minutes.
	wantLimited(t, svc.Senders.ResendVerification(ctx, acct, s.ID), 8*time.Minute)
	if n := srv.Count(); n != 3 {
		t.Fatalf("%d mails reached the relay, want 3", n)
	}
	// A new sender of the same address is the same sender for the count:
	// refused, and not stored.
	wantLimited(t, func() error { _, err := svc.Senders.Create(ctx, acct, senderIn("news@shop.example.com")); return err }(), 8*time.Minute)
	if ss := senders(t, svc, acct); len(ss) != 1 {
		t.Fatalf("%d senders stored, want 1", len(ss))
	}
	// A change of from_email mails the new address, and counts for the
	// sender too.
	in := senderIn("other@shop.example.com")
	in.SenderID = strconv.FormatInt(s.ID, 10)
	_, err = svc.Senders.Update(ctx, acct, in)
	wantLimited(t, err, 8*time.Minute)
	if got, _ := svc.Senders.Get(ctx, acct, s.ID); got.FromEmail != "news@shop.example.com" {
		t.Fatalf("a refused update was stored: %s", got.FromEmail)
	}
	// An update that keeps the address mails nothing and is not limited.
	in = senderIn("news@shop.example.com")
	in.SenderID, in.Nickname = strconv.FormatInt(s.ID, 10), "renamed"
	if _, err := svc.Senders.Update(ctx, acct, in); err != nil {
		t.Fatal(err)
	}
	// Another sender of the account has its own count.
	if _, err := svc.Senders.Create(ctx, acct, senderIn("other@shop.example.com")); err != nil {
		t.Fatal(err)
	}

	c.Advance(8*time.Minute - time.Second)
	wantLimited(t, svc.Senders.ResendVerification(ctx, acct, s.ID), time.Second)
	c.Advance(time.Second)
	if err := svc.Senders.ResendVerification(ctx, acct, s.ID); err != nil {
		t.Fatalf("10 minutes after the first mail: %v", err)
	}
	c.Advance(time.Minute) // the two mails of 9:01 age out of the sender's count
	in = senderIn("third@shop.example.com")
	in.SenderID = strconv.FormatInt(s.ID, 10)
	if _, err := svc.Senders.Update(ctx, acct, in); err != nil {
		t.Fatalf("update: %v", err)
	}
	got, _ := svc.Senders.Get(ctx, acct, s.ID)
	if got.FromEmail != "third@shop.example.com" || got.IsVerified != 0 {
		t.Fatalf("after update: %+v", got)
	}
	if per := srv.PerRecipient(); per["news@shop.example.com"] != 4 || per["other@shop.example.com"] != 1 || per["third@shop.example.com"] != 1 || srv.Count() != 6 {
		t.Fatalf("mails per address: %v", per)
	}
}

// decisions.md 8: at most 20 verification mails per account per hour; a
// save over the limit stores nothing; other accounts are not affected.
func TestVerificationMailsPerAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := dbtest.Service(t)
	c := dbtest.NewClock(time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC))
	svc = mailedSvc(t, svc, "", c) // the outbox
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	other := servicetest.NewAccount(t, svc, "other@herald.test")

	for i := 0; i < service.VerifyMailsPerAccount; i++ {
		if _, err := svc.Senders.Create(ctx, acct, senderIn(fmt.Sprintf("s%d@shop.example.com", i))); err != nil {
			t.Fatalf("sender %d: %v", i+1, err)
		}
		c.Advance(time.Minute)
	}
	// 20 minutes after the first: it counts for 40 more.
	_, err := svc.Senders.Create(ctx, acct, senderIn("s20@shop.example.com"))
	wantLimited(t, err, 40*time.Minute)
	if n := len(senders(t, svc, acct)); n != service.VerifyMailsPerAccount {
		t.Fatalf("%d senders stored, want %d", n, service.VerifyMailsPerAccount)
	}
	if n, _ := svc.Outbox.Count(ctx, acct); n != service.VerifyMailsPerAccount {
		t.Fatalf("%d mails in the outbox, want %d", n, service.VerifyMailsPerAccount)
	}
	first := senders(t, svc, acct)[0]
	wantLimited(t, svc.Senders.ResendVerification(ctx, acct, first.ID), 40*time.Minute)
	if _, err := svc.Senders.Create(ctx, other, senderIn("s20@shop.example.com")); err != nil {
		t.Fatalf("another account: %v", err)
	}

	c.Advance(40*time.Minute - 30*time.Second)
	_, err = svc.Senders.Create(ctx, acct, senderIn("s20@shop.example.com"))
	wantLimited(t, err, 30*time.Second)
	c.Advance(30 * time.Second)
	if _, err := svc.Senders.Create(ctx, acct, senderIn("s20@shop.example.com")); err != nil {
		t.Fatalf("an hour after the first: %v", err)
	}
	_, err = svc.Senders.Create(ctx, acct, senderIn("s21@shop.example.com"))
	wantLimited(t, err, time.Minute)
}

// Two processes on one database share the counts: sequentially, and when
// their requests race (the count and the record are one locked step).
func TestVerificationLimitsShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svcs := dbtest.Processes(t, 2)
	one, two := svcs[0], svcs[1]
	c := dbtest.NewClock(time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC))
	one = mailedSvc(t, one, "", c)
	two = mailedSvc(t, two, "", c)
	acct := servicetest.NewAccount(t, one, "owner@herald.test")

	s, err := one.Senders.Create(ctx, acct, senderIn("news@shop.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if err := two.Senders.ResendVerification(ctx, acct, s.ID); err != nil {
		t.Fatal(err)
	}
	if err := one.Senders.ResendVerification(ctx, acct, s.ID); err != nil {
		t.Fatal(err)
	}
	wantLimited(t, two.Senders.ResendVerification(ctx, acct, s.ID), 10*time.Minute)

	// 30 saves at once, split over both processes: 17 more fit in the hour.
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, limited := 0, 0
	for i := 0; i < 30; i++ {
		svc := one
		if i%2 == 1 {
			svc = two
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.Senders.Create(ctx, acct, senderIn(fmt.Sprintf("race%d@shop.example.com", i)))
			mu.Lock()
			defer mu.Unlock()
			switch service.ErrorCode(err) {
			case service.CodeRateLimited:
				limited++
			default:
				if err != nil {
					t.Errorf("save %d: %v", i, err)
				}
				ok++
			}
		}()
	}
	wg.Wait()
	if ok != 17 || limited != 13 {
		t.Fatalf("%d saved, %d limited; want 17 and 13", ok, limited)
	}
	if n := len(senders(t, one, acct)); n != 18 {
		t.Fatalf("%d senders stored, want 18", n)
	}
	if n, _ := one.Outbox.Count(ctx, acct); n != 20 {
		t.Fatalf("%d mails, want 20", n)
	}
}

// Links expire 7 days after they are issued; a resend issues a fresh one
// and the old one names nothing any more.
func TestVerificationLinkExpires(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := dbtest.Service(t)
	c := dbtest.NewClock(time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC))
	svc = mailedSvc(t, svc, "", c)
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	a, err := svc.Senders.Create(ctx, acct, senderIn("a@shop.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.Senders.Create(ctx, acct, senderIn("b@shop.example.com"))
	if err != nil {
		t.Fatal(err)
	}

	c.Advance(service.VerifyLinkLifetime - time.Second)
	if _, err := svc.Senders.Verify(ctx, b.VerifyToken); err != nil {
		t.Fatalf("a link a second short of 7 days: %v", err)
	}
	c.Advance(time.Second)
	if _, err := svc.Senders.Link(ctx, a.VerifyToken); !errors.Is(err, service.ErrLinkExpired) {
		t.Fatalf("Link of an expired link: %v", err)
	}
	if _, err := svc.Senders.Verify(ctx, a.VerifyToken); !errors.Is(err, service.ErrLinkExpired) || !service.IsNotFound(err) {
		t.Fatalf("Verify of an expired link: %v", err)
	}
	if got, _ := svc.Senders.Get(ctx, acct, a.ID); got.IsVerified != 0 {
		t.Fatal("an expired link verified the sender")
	}
	// A verified sender's link still says so (it verifies nothing new).
	if got, err := svc.Senders.Verify(ctx, b.VerifyToken); err != nil || got.IsVerified != 1 {
		t.Fatalf("verified sender's old link: %v", err)
	}

	if err := svc.Senders.ResendVerification(ctx, acct, a.ID); err != nil {
		t.Fatal(err)
	}
	fresh, _ := svc.Senders.Get(ctx, acct, a.ID)
	if fresh.VerifyToken == a.VerifyToken {
		t.Fatal("resend kept the old token")
	}
	if _, err := svc.Senders.Verify(ctx, a.VerifyToken); err == nil || errors.Is(err, service.ErrLinkExpired) || !service.IsNotFound(err) {
		t.Fatalf("the replaced link: %v", err)
	}
	if got, err := svc.Senders.Verify(ctx, fresh.VerifyToken); err != nil || got.IsVerified != 1 {
		t.Fatalf("the fresh link: %v", err)
	}
}

// finding 2: a name with a line break is refused (422) and nothing is
// stored or mailed.
func TestSenderNamesSingleLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, srv := dbtest.Service(t), smtptest.Start(t)
	c := dbtest.NewClock(time.Now())
	svc = mailedSvc(t, svc, srv.URL(), c)
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	in := senderIn("news@shop.example.com")
	in.FromName, in.Nickname = "Shop\r\nBcc: victim@example.org", "two\nlines"
	_, err := svc.Senders.Create(ctx, acct, in)
	var se *service.Error
	if !errors.As(err, &se) || se.Code != service.CodeValidation ||
		fmt.Sprint(se.Fields["from_name"]) != "[The from name must not contain line breaks.]" ||
		fmt.Sprint(se.Fields["nickname"]) != "[The nickname must not contain line breaks.]" {
		t.Fatalf("got %v", err)
	}
	if len(senders(t, svc, acct)) != 0 || srv.Count() != 0 {
		t.Fatal("a refused sender was stored or mailed")
	}
	s, err := svc.Senders.Create(ctx, acct, senderIn("news@shop.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	in.SenderID = strconv.FormatInt(s.ID, 10)
	if _, err := svc.Senders.Update(ctx, acct, in); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("update: %v", err)
	}
}

// deadRelay is the address of an SMTP server that is not there.
func deadRelay(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "smtp://" + addr + "?tls=none"
}

// A sender is stored only when its verification mail was handed over: the
// relay down stores nothing and counts nothing (finding 2: it answered
// 500 after storing). Update and resend keep the sender as it was.
func TestSenderMailFailureStoresNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := dbtest.Service(t)
	c := dbtest.NewClock(time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC))
	svc = mailedSvc(t, svc, deadRelay(t), c)
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	for i := 0; i < service.VerifyMailsPerSender+1; i++ {
		_, err := svc.Senders.Create(ctx, acct, senderIn("news@shop.example.com"))
		if !errors.Is(err, service.ErrVerificationMail) || service.ErrorCode(err) != service.CodeUnavailable {
			t.Fatalf("save %d with the relay down: %v", i+1, err)
		}
	}
	if n := len(senders(t, svc, acct)); n != 0 {
		t.Fatalf("%d senders stored with the relay down", n)
	}

	// The relay is back: the attempts above were not counted.
	srv := smtptest.Start(t)
	svc = mailedSvc(t, svc, srv.URL(), c)
	s, err := svc.Senders.Create(ctx, acct, senderIn("news@shop.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	// Down again: resend and a change of address fail, the sender is kept.
	svc = mailedSvc(t, svc, deadRelay(t), c)
	if err := svc.Senders.ResendVerification(ctx, acct, s.ID); !errors.Is(err, service.ErrVerificationMail) {
		t.Fatalf("resend: %v", err)
	}
	in := senderIn("new@shop.example.com")
	in.SenderID = strconv.FormatInt(s.ID, 10)
	if _, err := svc.Senders.Update(ctx, acct, in); !errors.Is(err, service.ErrVerificationMail) {
		t.Fatalf("update: %v", err)
	}
	got, err := svc.Senders.Get(ctx, acct, s.ID)
	if err != nil || got.FromEmail != "news@shop.example.com" || got.VerifyToken != s.VerifyToken {
		t.Fatalf("sender changed by failed mails: %+v %v", got, err)
	}
	if _, err := svc.Senders.Verify(ctx, s.VerifyToken); err != nil {
		t.Fatalf("the link mailed before: %v", err)
	}
}
