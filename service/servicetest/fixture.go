package servicetest

import (
	"context"
	"testing"
	"time"

	"herald/dbtest"
	"herald/delivery"
	"herald/service"
	"herald/smtptest"
)

// SendFixture is an account with a verified sender and a group, wired to
// a loopback SMTP server through the real engine.
type SendFixture struct {
	t       testing.TB
	Ctx     context.Context
	Svc     *service.Service
	SMTP    *smtptest.Server
	Sending *service.Sending
	Stop    func() // stops the engine started by newSendFixture (run), and waits for it
	Acct    int64
	Sender  int64
	Group   int64

	*dbtest.Clock // the engine's time, moved by the test
}

// NewSendFixture starts the engine unless manual (then the test calls Tick
// and runs the engine itself).
func NewSendFixture(t testing.TB, run bool) *SendFixture {
	t.Helper()
	return NewSendFixtureDeadAfter(t, run, 0)
}

// NewSendFixtureDeadAfter is newSendFixture with the engine's DeadAfter
// (0: the default).
func NewSendFixtureDeadAfter(t testing.TB, run bool, deadAfter time.Duration) *SendFixture {
	t.Helper()
	return NewSendFixtureWith(t, run, deadAfter, nil)
}

// NewSendFixtureWith is newSendFixtureDeadAfter with edit applied to the
// service's Config (nil: none) before the service is built.
func NewSendFixtureWith(t testing.TB, run bool, deadAfter time.Duration, edit func(*service.Config)) *SendFixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &SendFixture{t: t, Ctx: ctx, SMTP: smtptest.Start(t), Clock: dbtest.NewClock(time.Now())}
	tr, err := delivery.OpenTransport(f.SMTP.URL(), 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := service.Config{Transport: tr, BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test", Now: f.Now}
	if edit != nil {
		edit(&cfg)
	}
	f.Svc = dbtest.Service(t, cfg)
	f.Acct = NewAccount(t, f.Svc, "owner@herald.test")
	snd, err := f.Svc.Senders.Create(ctx, f.Acct, service.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com",
		ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
	f.Sender = snd.ID
	g, err := f.Svc.Groups.Create(ctx, f.Acct, service.GroupInput{GroupName: "Newsletter", Description: "Our monthly news", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	f.Group = g.ID
	f.Sending, err = f.Svc.NewSending(ctx, service.SendingConfig{Conns: 4, Backoff: 30 * time.Millisecond, Window: time.Hour,
		Tick: 20 * time.Millisecond, DeadAfter: deadAfter})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	done := make(chan struct{})
	if run {
		go func() { defer close(done); f.Sending.Run(runCtx) }()
	} else {
		close(done)
	}
	f.Stop = func() { stopRun(); <-done }
	t.Cleanup(func() { cancel(); <-done; tr.Close() })
	// The sender's verification mail went through the sink (unless edit
	// chose another transport): start counting from zero.
	if cfg.Transport == tr {
		f.SMTP.WaitCount(1, 5*time.Second)
	}
	return f
}

func NewAccount(t testing.TB, svc *service.Service, email string) int64 {
	t.Helper()
	u, _, err := svc.Accounts.Create(context.Background(), service.AccountInput{Name: "T", Email: email, Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}
