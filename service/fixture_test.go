package service_test

import (
	"context"
	"fmt"
	"herald/dbtest"
	"herald/delivery"
	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/smtptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// automation makes a live-ready custom automation on a contact type with
// two emails: one at once, one after two days.
func (f *sendFixture) automation(typeID int64, exit string) *models.Automation {
	f.t.Helper()
	a, err := f.svc.Automations.Create(f.ctx, f.acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + strconv.FormatInt(typeID, 10),
		AutomationName: "Onboarding", UnsubscribeGroupID: strconv.FormatInt(f.group, 10), ExitCriteria: exit})
	if err != nil {
		f.t.Fatal(err)
	}
	for i, st := range []struct{ period, unit string }{{"1", "instantly"}, {"2", "days"}} {
		if _, err := f.svc.Automations.AddSchedule(f.ctx, f.acct, service.ScheduleInput{Utr: a.Utr, SenderID: strconv.FormatInt(f.sender, 10),
			Subject: fmt.Sprintf("Step %d for ((first_name))", i+1), WaitingPeriod: st.period, WaitingType: st.unit, TemplateID: "1", PreviewImg: "01-blank.png",
			TemplateHTML: `<p>Step ` + strconv.Itoa(i+1) + ` <a href="https://shop.example.com/">shop</a></p>`}); err != nil {
			f.t.Fatal(err)
		}
	}
	return a
}

func (f *sendFixture) addContact(typeID int64, email string) {
	f.t.Helper()
	if _, err := f.svc.Contacts.Create(f.ctx, f.acct, service.ContactInput{ContactTypeID: strconv.FormatInt(typeID, 10), FirstName: "N", LastName: "L",
		Email: email, Country: "250"}); err != nil {
		f.t.Fatal(err)
	}
}

// stepsOf counts, per recipient, the automation mails with subject prefix.
func (f *sendFixture) stepsOf(email, prefix string) int {
	n := 0
	for _, m := range f.srv.Messages() {
		if m.To == email && strings.HasPrefix(m.Header().Get("Subject"), prefix) {
			n++
		}
	}
	return n
}

// settle ticks and lets the engine send until the sink stops growing.
func (f *sendFixture) settle() {
	f.t.Helper()
	for i := 0; i < 3; i++ {
		if err := f.sg.Tick(f.ctx); err != nil {
			f.t.Fatal(err)
		}
		before := -1
		for before != f.srv.Count() {
			before = f.srv.Count()
			time.Sleep(150 * time.Millisecond)
		}
	}
}

// blockingInput is a valid send whose design has no unsubscribe link and
// does not show the postal address: two failures.
func (f *sendFixture) blockingInput(typeID int64) service.SingleSendInput {
	in := f.input("Blocked", []string{"contacts_" + strconv.FormatInt(typeID, 10)}, nil)
	in.TemplateHTML = `<html><body><p>Hello ((first_name)), our autumn sale starts on Monday: every coat, scarf and pair of boots is thirty percent off for one week only.</p></body></html>`
	in.ScheduleType, in.ScheduleDate, in.ScheduleTime = "1", time.Now().Add(48*time.Hour).Format("2006-01-02"), "10:00"
	return in
}

// otherAccount is a second account of the fixture's service with its own
// verified sender, group and contacts, and a send to them, completed.
func (f *sendFixture) otherAccount(email string, contacts ...string) (int64, *models.SingleSend) {
	f.t.Helper()
	acct := newAccount(f.t, f.svc, email)
	snd, err := f.svc.Senders.Create(f.ctx, acct, service.SenderInput{FromName: "Other", FromEmail: "news@other.example.com",
		ReplyToEmail: "help@other.example.com", CountryID: "250", CompanyAddress: "2 rue de Rivoli", Nickname: "other"})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.svc.Senders.Verify(f.ctx, snd.VerifyToken); err != nil {
		f.t.Fatal(err)
	}
	g, err := f.svc.Groups.Create(f.ctx, acct, service.GroupInput{GroupName: "Other news", Description: "News", IsDisplay: "1"})
	if err != nil {
		f.t.Fatal(err)
	}
	ct, err := f.svc.ContactTypes.Create(f.ctx, acct, "People")
	if err != nil {
		f.t.Fatal(err)
	}
	for _, e := range contacts {
		if _, err := f.svc.Contacts.Create(f.ctx, acct, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10),
			FirstName: "O", LastName: "P", Email: e, Country: "250"}); err != nil {
			f.t.Fatal(err)
		}
	}
	in := f.input("Other send", []string{"contacts_" + strconv.FormatInt(ct.ID, 10)}, nil)
	in.SenderID, in.UnsubscribeGroupID = strconv.FormatInt(snd.ID, 10), strconv.FormatInt(g.ID, 10)
	ss, err := f.svc.SingleSends.Create(f.ctx, acct, in)
	if err != nil {
		f.t.Fatal(err)
	}
	var got *models.SingleSend
	eventually.NoError(f.t, 20*time.Second, func() error {
		var err error
		if got, err = f.svc.SingleSends.Get(f.ctx, acct, ss.Utr); err != nil {
			f.t.Fatal(err)
		}
		if got.Status != models.SendCompleted {
			return fmt.Errorf("other send: status %d", got.Status)
		}
		return nil
	})
	return acct, got
}

func (f *sendFixture) overview(acct int64) *service.Overview {
	f.t.Helper()
	o, err := f.svc.Dashboard.Overview(f.ctx, acct)
	if err != nil {
		f.t.Fatal(err)
	}
	if len(o.Days) != service.DashboardDays {
		f.t.Fatalf("%d days, want %d", len(o.Days), service.DashboardDays)
	}
	return o
}

// sentTo returns the message of a send to one address.
func (f *sendFixture) sentTo(utr, to string) smtptest.Message {
	f.t.Helper()
	for _, m := range f.sent(utr) {
		if m.To == to {
			return m
		}
	}
	f.t.Fatalf("no message of %s to %s", utr, to)
	return smtptest.Message{}
}

func (f *sendFixture) handle(reports ...service.Report) {
	f.t.Helper()
	if err := f.svc.Feedback.Handle(f.ctx, reports); err != nil {
		f.t.Fatal(err)
	}
}

func (f *sendFixture) feedbackRows() []models.Feedback {
	f.t.Helper()
	var rows []models.Feedback
	if err := f.svc.DB.R.Where("user_id = ?", f.acct).Order("id").Find(&rows).Error; err != nil {
		f.t.Fatal(err)
	}
	return rows
}

// secondAccount is a second account on f's service and engine, with its
// own verified sender and group.
func (f *sendFixture) secondAccount(email string) *sendFixture {
	f.t.Helper()
	o := *f
	o.acct = newAccount(f.t, f.svc, email)
	snd, err := f.svc.Senders.Create(f.ctx, o.acct, service.SenderInput{FromName: "Other", FromEmail: "news@other.example.net",
		ReplyToEmail: "help@other.example.net", CountryID: "250", CompanyAddress: "2 rue de Rivoli", Nickname: "other"})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.svc.Senders.Verify(f.ctx, snd.VerifyToken); err != nil {
		f.t.Fatal(err)
	}
	o.sender = snd.ID
	g, err := f.svc.Groups.Create(f.ctx, o.acct, service.GroupInput{GroupName: "News", Description: "News", IsDisplay: "1"})
	if err != nil {
		f.t.Fatal(err)
	}
	o.group = g.ID
	return &o
}

// unsubscribed says whether email is a global unsubscriber of acct.
func (f *sendFixture) unsubscribed(email string) bool {
	f.t.Helper()
	var n int64
	if err := f.svc.DB.R.Model(&models.Unsubscriber{}).Where("user_id = ? AND email_address = ?", f.acct, email).Count(&n).Error; err != nil {
		f.t.Fatal(err)
	}
	return n > 0
}

// ledger returns the send's ledger rows by address.
func (f *sendFixture) ledger(sendID int64) map[string]models.SendMessage {
	f.t.Helper()
	var rows []models.SendMessage
	if err := f.svc.DB.R.Where("send_id = ?", sendID).Find(&rows).Error; err != nil {
		f.t.Fatal(err)
	}
	out := map[string]models.SendMessage{}
	for _, r := range rows {
		out[r.Email] = r
	}
	return out
}

// suppressed returns the account's suppressions by address.
func (f *sendFixture) suppressed() map[string]*models.Suppression {
	f.t.Helper()
	out := map[string]*models.Suppression{}
	if err := f.svc.Suppressions.Each(f.ctx, f.acct, service.ListFilter{}, func(s *models.Suppression) error {
		out[s.Email] = s
		return nil
	}); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// waitFor polls cond until it holds, or fails the test after d.
func (f *sendFixture) waitFor(what string, d time.Duration, cond func() bool) {
	f.t.Helper()
	eventually.True(f.t, d, what, cond)
}

// pausedOrFail reads a send that should pause, failing at once when it
// completed instead.
func (f *sendFixture) pausedOrFail(utr string) *models.SingleSend {
	f.t.Helper()
	ss := f.get(utr)
	if ss.Status == models.SendCompleted {
		f.t.Fatalf("the send completed instead of pausing: delivered %d bounces %d blocks %d, %d addresses suppressed",
			ss.Delivered, ss.Bounces, ss.Blocks, len(f.suppressed()))
	}
	return ss
}

func (f *sendFixture) get(utr string) *models.SingleSend {
	f.t.Helper()
	ss, err := f.svc.SingleSends.Get(f.ctx, f.acct, utr)
	if err != nil {
		f.t.Fatal(err)
	}
	return ss
}

// scalar reads one number.
func (f *sendFixture) scalar(q string, args ...any) int64 {
	f.t.Helper()
	var n int64
	if err := f.svc.DB.R.Raw(q, args...).Scan(&n).Error; err != nil {
		f.t.Fatal(err)
	}
	return n
}

// exec runs a statement on the database.
func (f *sendFixture) exec(q string, args ...any) {
	f.t.Helper()
	if err := f.svc.DB.W.Exec(q, args...).Error; err != nil {
		f.t.Fatal(err)
	}
}

// waitResolved waits for the audience of a started send to be resolved
// (the start round resolves it in the background).
func (f *sendFixture) waitResolved(id int64) {
	f.t.Helper()
	f.waitFor("the audience resolved", 20*time.Second, func() bool {
		return f.scalar("SELECT resolved FROM single_sends WHERE id = ?", id) == 1
	})
}

func (f *sendFixture) status(id int64) models.SendStatus {
	f.t.Helper()
	return models.SendStatus(f.scalar("SELECT status FROM single_sends WHERE id = ?", id))
}

// sendFixture is an account with a verified sender and a group, wired to
// a loopback SMTP server through the real engine.
type sendFixture struct {
	t      *testing.T
	ctx    context.Context
	svc    *service.Service
	srv    *smtptest.Server
	sg     *service.Sending
	stop   func() // stops the engine started by newSendFixture (run), and waits for it
	acct   int64
	sender int64
	group  int64

	*dbtest.Clock // the engine's time, moved by the test
}

// newSendFixture starts the engine unless manual (then the test calls Tick
// and runs the engine itself).
func newSendFixture(t *testing.T, run bool) *sendFixture {
	t.Helper()
	return newSendFixtureDeadAfter(t, run, 0)
}

// newSendFixtureDeadAfter is newSendFixture with the engine's DeadAfter
// (0: the default).
func newSendFixtureDeadAfter(t *testing.T, run bool, deadAfter time.Duration) *sendFixture {
	t.Helper()
	return newSendFixtureWith(t, run, deadAfter, nil)
}

// newSendFixtureWith is newSendFixtureDeadAfter with edit applied to the
// service's Config (nil: none) before the service is built.
func newSendFixtureWith(t *testing.T, run bool, deadAfter time.Duration, edit func(*service.Config)) *sendFixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &sendFixture{t: t, ctx: ctx, srv: smtptest.Start(t), Clock: dbtest.NewClock(time.Now())}
	tr, err := delivery.OpenTransport(f.srv.URL(), 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := service.Config{Transport: tr, BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test", Now: f.Now}
	if edit != nil {
		edit(&cfg)
	}
	f.svc = dbtest.Service(t, cfg)
	f.acct = newAccount(t, f.svc, "owner@herald.test")
	snd, err := f.svc.Senders.Create(ctx, f.acct, service.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com",
		ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
	f.sender = snd.ID
	g, err := f.svc.Groups.Create(ctx, f.acct, service.GroupInput{GroupName: "Newsletter", Description: "Our monthly news", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	f.group = g.ID
	f.sg, err = f.svc.NewSending(ctx, service.SendingConfig{Conns: 4, Backoff: 30 * time.Millisecond, Window: time.Hour,
		Tick: 20 * time.Millisecond, DeadAfter: deadAfter})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	done := make(chan struct{})
	if run {
		go func() { defer close(done); f.sg.Run(runCtx) }()
	} else {
		close(done)
	}
	f.stop = func() { stopRun(); <-done }
	t.Cleanup(func() { cancel(); <-done; tr.Close() })
	// The sender's verification mail went through the sink: start counting
	// from zero.
	f.srv.WaitCount(1, 5*time.Second)
	return f
}

func (f *sendFixture) contactType(name string, emails ...string) int64 {
	f.t.Helper()
	ct, err := f.svc.ContactTypes.Create(f.ctx, f.acct, name)
	if err != nil {
		f.t.Fatal(err)
	}
	for i, e := range emails {
		if _, err := f.svc.Contacts.Create(f.ctx, f.acct, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10),
			FirstName: "Name" + strconv.Itoa(i), LastName: "Last", Email: e, Country: "250"}); err != nil {
			f.t.Fatal(err)
		}
	}
	return ct.ID
}

func (f *sendFixture) input(name string, to []string, exclude []string) service.SingleSendInput {
	return service.SingleSendInput{
		TemplateID: "1", TemplateHTML: `<html><body><p>Hello ((first_name)) ((last_name))!</p><p>Your code: ((code))</p>` +
			`<a href="https://shop.example.com/sale">Sale</a> <a href="https://shop.example.com/sale">Again</a> <a href="mailto:x@y.z">Mail</a>` +
			`<p>((sender_name)), ((sender_address))</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`,
		SenderID: strconv.FormatInt(f.sender, 10), UnsubscribeGroupID: strconv.FormatInt(f.group, 10),
		SingleSendName: name, Subject: "Hi ((first_name))", Preheader: "News for ((first_name))",
		RecipientID: to, ExcludeRecipientID: exclude, ScheduleType: "0",
	}
}

func (f *sendFixture) create(in service.SingleSendInput) *models.SingleSend {
	f.t.Helper()
	ss, err := f.svc.SingleSends.Create(f.ctx, f.acct, in)
	if err != nil {
		f.t.Fatalf("create: %v", err)
	}
	return ss
}

// waitStatus waits for a send to reach status.
func (f *sendFixture) waitStatus(utr string, status models.SendStatus, d time.Duration) *models.SingleSend {
	f.t.Helper()
	var ss *models.SingleSend
	eventually.NoError(f.t, d, func() error {
		var err error
		if ss, err = f.svc.SingleSends.Get(f.ctx, f.acct, utr); err != nil {
			f.t.Fatal(err)
		}
		if ss.Status != status {
			return fmt.Errorf("send %s: status %d, want %d (triggered %d delivered %d bounces %d)", utr, ss.Status, status, ss.Triggered, ss.Delivered, ss.Bounces)
		}
		return nil
	})
	return ss
}

// sent returns the messages of one send (by its X-Herald-Send header).
func (f *sendFixture) sent(utr string) []smtptest.Message {
	var out []smtptest.Message
	for _, m := range f.srv.Messages() {
		if m.Header().Get("X-Herald-Send") == utr {
			out = append(out, m)
		}
	}
	return out
}

func newAccount(t *testing.T, svc *service.Service, email string) int64 {
	t.Helper()
	u, _, err := svc.Accounts.Create(context.Background(), service.AccountInput{Name: "T", Email: email, Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}
