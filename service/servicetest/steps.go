package servicetest

import (
	"fmt"
	"mime"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/smtptest"
)

// Automation makes a live-ready custom automation on a contact type with
// two emails: one at once, one after two days.
func (f *SendFixture) Automation(typeID int64, exit string) *models.Automation {
	f.t.Helper()
	a, err := f.Svc.Automations.Create(f.Ctx, f.Acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + strconv.FormatInt(typeID, 10),
		AutomationName: "Onboarding", UnsubscribeGroupID: strconv.FormatInt(f.Group, 10), ExitCriteria: exit})
	if err != nil {
		f.t.Fatal(err)
	}
	for i, st := range []struct{ period, unit string }{{"1", "instantly"}, {"2", "days"}} {
		if _, err := f.Svc.Automations.AddSchedule(f.Ctx, f.Acct, service.ScheduleInput{Utr: a.Utr, SenderID: strconv.FormatInt(f.Sender, 10),
			Subject: fmt.Sprintf("Step %d for ((first_name))", i+1), WaitingPeriod: st.period, WaitingType: st.unit, TemplateID: "1", PreviewImg: "01-blank.png",
			TemplateHTML: `<p>Step ` + strconv.Itoa(i+1) + ` <a href="https://shop.example.com/">shop</a></p>`}); err != nil {
			f.t.Fatal(err)
		}
	}
	return a
}

func (f *SendFixture) AddContact(typeID int64, email string) {
	f.t.Helper()
	if _, err := f.Svc.Contacts.Create(f.Ctx, f.Acct, service.ContactInput{ContactTypeID: strconv.FormatInt(typeID, 10), FirstName: "N", LastName: "L",
		Email: email, Country: "250"}); err != nil {
		f.t.Fatal(err)
	}
}

// StepsOf counts, per recipient, the automation mails with subject prefix.
func (f *SendFixture) StepsOf(email, prefix string) int {
	n := 0
	for _, m := range f.SMTP.Messages() {
		if m.To == email && strings.HasPrefix(m.Header().Get("Subject"), prefix) {
			n++
		}
	}
	return n
}

// Settle ticks and lets the engine send: after each tick it waits until
// the ledger holds no message due now that is not yet sent (queued and
// due, or claimed), then until the sink stops growing. Waiting on the
// ledger, not on the sink alone, matters on a slow run: a claim under
// -race on PostgreSQL took longer than the sink's quiet interval, and a
// quiet sink was read as a settled engine. A message held at the relay
// (smtptest Hold) stays claimed: Settle gives up waiting for it after
// settleBound and goes on.
func (f *SendFixture) Settle() {
	f.t.Helper()
	for i := 0; i < 3; i++ {
		if err := f.Sending.Tick(f.Ctx); err != nil {
			f.t.Fatal(err)
		}
		for deadline := time.Now().Add(settleBound); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if f.Scalar("SELECT COUNT(*) FROM send_messages WHERE state = ? OR (state = ? AND next_at <= ?)",
				models.MessageClaimed, models.MessageQueued, f.Now().UnixMilli()) == 0 {
				break
			}
		}
		before := -1
		for before != f.SMTP.Count() {
			before = f.SMTP.Count()
			time.Sleep(150 * time.Millisecond)
		}
	}
}

// settleBound is how long Settle waits for the ledger's due messages.
const settleBound = 30 * time.Second

// BlockingInput is a valid send whose design has no unsubscribe link and
// does not show the postal address: two failures.
func (f *SendFixture) BlockingInput(typeID int64) service.SingleSendInput {
	in := f.Input("Blocked", []string{"contacts_" + strconv.FormatInt(typeID, 10)}, nil)
	in.TemplateHTML = `<html><body><p>Hello ((first_name)), our autumn sale starts on Monday: every coat, scarf and pair of boots is thirty percent off for one week only.</p></body></html>`
	in.ScheduleType, in.ScheduleDate, in.ScheduleTime = "1", time.Now().Add(48*time.Hour).Format("2006-01-02"), "10:00"
	return in
}

// OtherAccount is a second account of the fixture's service with its own
// verified sender, group and contacts, and a send to them, completed.
func (f *SendFixture) OtherAccount(email string, contacts ...string) (int64, *models.SingleSend) {
	f.t.Helper()
	acct := NewAccount(f.t, f.Svc, email)
	snd, err := f.Svc.Senders.Create(f.Ctx, acct, service.SenderInput{FromName: "Other", FromEmail: "news@other.example.com",
		ReplyToEmail: "help@other.example.com", CountryID: "250", CompanyAddress: "2 rue de Rivoli", Nickname: "other"})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.Svc.Senders.Verify(f.Ctx, snd.VerifyToken); err != nil {
		f.t.Fatal(err)
	}
	g, err := f.Svc.Groups.Create(f.Ctx, acct, service.GroupInput{GroupName: "Other news", Description: "News", IsDisplay: "1"})
	if err != nil {
		f.t.Fatal(err)
	}
	ct, err := f.Svc.ContactTypes.Create(f.Ctx, acct, "People")
	if err != nil {
		f.t.Fatal(err)
	}
	for _, e := range contacts {
		if _, err := f.Svc.Contacts.Create(f.Ctx, acct, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10),
			FirstName: "O", LastName: "P", Email: e, Country: "250"}); err != nil {
			f.t.Fatal(err)
		}
	}
	in := f.Input("Other send", []string{"contacts_" + strconv.FormatInt(ct.ID, 10)}, nil)
	in.SenderID, in.UnsubscribeGroupID = strconv.FormatInt(snd.ID, 10), strconv.FormatInt(g.ID, 10)
	ss, err := f.Svc.SingleSends.Create(f.Ctx, acct, in)
	if err != nil {
		f.t.Fatal(err)
	}
	var got *models.SingleSend
	eventually.NoError(f.t, 20*time.Second, func() error {
		var err error
		if got, err = f.Svc.SingleSends.Get(f.Ctx, acct, ss.Utr); err != nil {
			f.t.Fatal(err)
		}
		if got.Status != models.SendCompleted {
			return fmt.Errorf("other send: status %d", got.Status)
		}
		return nil
	})
	return acct, got
}

func (f *SendFixture) Overview(acct int64) *service.Overview {
	f.t.Helper()
	o, err := f.Svc.Dashboard.Overview(f.Ctx, acct)
	if err != nil {
		f.t.Fatal(err)
	}
	if len(o.Days) != service.DashboardDays {
		f.t.Fatalf("%d days, want %d", len(o.Days), service.DashboardDays)
	}
	return o
}

// SentTo returns the message of a send to one address.
func (f *SendFixture) SentTo(utr, to string) smtptest.Message {
	f.t.Helper()
	for _, m := range f.Sent(utr) {
		if m.To == to {
			return m
		}
	}
	f.t.Fatalf("no message of %s to %s", utr, to)
	return smtptest.Message{}
}

func (f *SendFixture) Handle(reports ...service.Report) {
	f.t.Helper()
	if err := f.Svc.Feedback.Handle(f.Ctx, reports); err != nil {
		f.t.Fatal(err)
	}
}

func (f *SendFixture) FeedbackRows() []models.Feedback {
	f.t.Helper()
	var rows []models.Feedback
	if err := f.Svc.DB.R.Where("user_id = ?", f.Acct).Order("id").Find(&rows).Error; err != nil {
		f.t.Fatal(err)
	}
	return rows
}

// SecondAccount is a second account on f's service and engine, with its
// own verified sender and group.
func (f *SendFixture) SecondAccount(email string) *SendFixture {
	f.t.Helper()
	o := *f
	o.Acct = NewAccount(f.t, f.Svc, email)
	snd, err := f.Svc.Senders.Create(f.Ctx, o.Acct, service.SenderInput{FromName: "Other", FromEmail: "news@other.example.net",
		ReplyToEmail: "help@other.example.net", CountryID: "250", CompanyAddress: "2 rue de Rivoli", Nickname: "other"})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.Svc.Senders.Verify(f.Ctx, snd.VerifyToken); err != nil {
		f.t.Fatal(err)
	}
	o.Sender = snd.ID
	g, err := f.Svc.Groups.Create(f.Ctx, o.Acct, service.GroupInput{GroupName: "News", Description: "News", IsDisplay: "1"})
	if err != nil {
		f.t.Fatal(err)
	}
	o.Group = g.ID
	return &o
}

// Unsubscribed says whether email is a global unsubscriber of acct.
func (f *SendFixture) Unsubscribed(email string) bool {
	f.t.Helper()
	var n int64
	if err := f.Svc.DB.R.Model(&models.Unsubscriber{}).Where("user_id = ? AND email_address = ?", f.Acct, email).Count(&n).Error; err != nil {
		f.t.Fatal(err)
	}
	return n > 0
}

// Ledger returns the send's ledger rows by address.
func (f *SendFixture) Ledger(sendID int64) map[string]models.SendMessage {
	f.t.Helper()
	var rows []models.SendMessage
	if err := f.Svc.DB.R.Where("send_id = ?", sendID).Find(&rows).Error; err != nil {
		f.t.Fatal(err)
	}
	out := map[string]models.SendMessage{}
	for _, r := range rows {
		out[r.Email] = r
	}
	return out
}

// Suppressed returns the account's suppressions by address.
func (f *SendFixture) Suppressed() map[string]*models.Suppression {
	f.t.Helper()
	out := map[string]*models.Suppression{}
	if err := f.Svc.Suppressions.Each(f.Ctx, f.Acct, service.ListFilter{}, func(s *models.Suppression) error {
		out[s.Email] = s
		return nil
	}); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// WaitFor polls cond until it holds, or fails the test after d.
func (f *SendFixture) WaitFor(what string, d time.Duration, cond func() bool) {
	f.t.Helper()
	eventually.True(f.t, d, what, cond)
}

// PausedOrFail reads a send that should pause, failing at once when it
// completed instead.
func (f *SendFixture) PausedOrFail(utr string) *models.SingleSend {
	f.t.Helper()
	ss := f.Get(utr)
	if ss.Status == models.SendCompleted {
		f.t.Fatalf("the send completed instead of pausing: delivered %d bounces %d blocks %d, %d addresses suppressed",
			ss.Delivered, ss.Bounces, ss.Blocks, len(f.Suppressed()))
	}
	return ss
}

func (f *SendFixture) Get(utr string) *models.SingleSend {
	f.t.Helper()
	ss, err := f.Svc.SingleSends.Get(f.Ctx, f.Acct, utr)
	if err != nil {
		f.t.Fatal(err)
	}
	return ss
}

// Scalar reads one number.
func (f *SendFixture) Scalar(q string, args ...any) int64 {
	f.t.Helper()
	var n int64
	if err := f.Svc.DB.R.Raw(q, args...).Scan(&n).Error; err != nil {
		f.t.Fatal(err)
	}
	return n
}

// Exec runs a statement on the database.
func (f *SendFixture) Exec(q string, args ...any) {
	f.t.Helper()
	if err := f.Svc.DB.W.Exec(q, args...).Error; err != nil {
		f.t.Fatal(err)
	}
}

// WaitResolved waits for the audience of a started send to be resolved
// (the start round resolves it in the background).
func (f *SendFixture) WaitResolved(id int64) {
	f.t.Helper()
	f.WaitFor("the audience resolved", 20*time.Second, func() bool {
		return f.Scalar("SELECT resolved FROM single_sends WHERE id = ?", id) == 1
	})
}

func (f *SendFixture) Status(id int64) models.SendStatus {
	f.t.Helper()
	return models.SendStatus(f.Scalar("SELECT status FROM single_sends WHERE id = ?", id))
}

func (f *SendFixture) ContactType(name string, emails ...string) int64 {
	f.t.Helper()
	ct, err := f.Svc.ContactTypes.Create(f.Ctx, f.Acct, name)
	if err != nil {
		f.t.Fatal(err)
	}
	for i, e := range emails {
		if _, err := f.Svc.Contacts.Create(f.Ctx, f.Acct, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10),
			FirstName: "Name" + strconv.Itoa(i), LastName: "Last", Email: e, Country: "250"}); err != nil {
			f.t.Fatal(err)
		}
	}
	return ct.ID
}

func (f *SendFixture) Input(name string, to []string, exclude []string) service.SingleSendInput {
	return service.SingleSendInput{
		TemplateID: "1", TemplateHTML: `<html><body><p>Hello ((first_name)) ((last_name))!</p><p>Your code: ((code))</p>` +
			`<a href="https://shop.example.com/sale">Sale</a> <a href="https://shop.example.com/sale">Again</a> <a href="mailto:x@y.z">Mail</a>` +
			`<p>((sender_name)), ((sender_address))</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`,
		SenderID: strconv.FormatInt(f.Sender, 10), UnsubscribeGroupID: strconv.FormatInt(f.Group, 10),
		SingleSendName: name, Subject: "Hi ((first_name))", Preheader: "News for ((first_name))",
		RecipientID: to, ExcludeRecipientID: exclude, ScheduleType: "0",
	}
}

func (f *SendFixture) Create(in service.SingleSendInput) *models.SingleSend {
	f.t.Helper()
	ss, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, in)
	if err != nil {
		f.t.Fatalf("create: %v", err)
	}
	return ss
}

// WaitStatus waits for a send to reach status.
func (f *SendFixture) WaitStatus(utr string, status models.SendStatus, d time.Duration) *models.SingleSend {
	f.t.Helper()
	var ss *models.SingleSend
	eventually.NoError(f.t, d, func() error {
		var err error
		if ss, err = f.Svc.SingleSends.Get(f.Ctx, f.Acct, utr); err != nil {
			f.t.Fatal(err)
		}
		if ss.Status != status {
			return fmt.Errorf("send %s: status %d, want %d (triggered %d delivered %d bounces %d)", utr, ss.Status, status, ss.Triggered, ss.Delivered, ss.Bounces)
		}
		return nil
	})
	return ss
}

// Sent returns the messages of one send (by its X-Herald-Send header).
func (f *SendFixture) Sent(utr string) []smtptest.Message {
	var out []smtptest.Message
	for _, m := range f.SMTP.Messages() {
		if m.Header().Get("X-Herald-Send") == utr {
			out = append(out, m)
		}
	}
	return out
}

// DecodeSubject is m's Subject, its encoded words decoded.
func DecodeSubject(t *testing.T, m smtptest.Message) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(m.Header().Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
