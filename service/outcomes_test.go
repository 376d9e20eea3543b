package service_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/service/servicetest"
	"herald/smtptest"
)

// TestRelayRefusalsAreBlocksNotBounces: a real SMTP server refuses one
// recipient's mailbox (550 5.1.1), one recipient by policy (550 5.7.1
// Relay access denied) and one message's content at DATA (550 5.7.1).
// Only the mailbox refusal is a bounce and a suppression; the others are
// blocks, counted apart with the relay's full answer, and the stored
// reasons keep the enhanced status codes.
func TestRelayRefusalsAreBlocksNotBounces(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	f.SMTP.Refuse(smtptest.AtRcpt, "gone@example.com", 550, "5.1.1", "User unknown")
	f.SMTP.Refuse(smtptest.AtRcpt, "far@elsewhere.example", 550, "5.7.1", "Relay access denied")
	f.SMTP.Refuse(smtptest.AtData, "filtered@example.com", 550, "5.7.1", "Message content rejected")
	typeA := f.ContactType("Customers", "ann@example.com", "gone@example.com", "far@elsewhere.example", "filtered@example.com", "eve@example.com")
	to := []string{"contacts_" + strconv.FormatInt(typeA, 10)}
	ss := f.Create(f.Input("Spring", to, nil))
	done := f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)

	if done.Triggered != 5 || done.Delivered != 2 || done.Bounces != 1 || done.Blocks != 2 || done.Failures != 0 || done.PausedAt != nil {
		t.Fatalf("triggered %d delivered %d bounces %d blocks %d failures %d paused %v; want 5 2 1 2 0 none",
			done.Triggered, done.Delivered, done.Bounces, done.Blocks, done.Failures, done.PausedAt)
	}
	rows := f.Ledger(ss.ID)
	for _, c := range []struct {
		email string
		state models.MessageState
		err   string
	}{
		{"ann@example.com", models.MessageDelivered, ""},
		{"gone@example.com", models.MessageBounced, "delivery: permanent failure at rcpt: 550 5.1.1 User unknown"},
		{"far@elsewhere.example", models.MessageBlocked, "delivery: permanent failure at rcpt: 550 5.7.1 Relay access denied"},
		{"filtered@example.com", models.MessageBlocked, "delivery: permanent failure at data: 550 5.7.1 Message content rejected"},
	} {
		if r := rows[c.email]; r.State != c.state || r.Error != c.err {
			t.Errorf("%s: state %d error %q; want %d %q", c.email, r.State, r.Error, c.state, c.err)
		}
	}
	sup := f.Suppressed()
	if g := sup["gone@example.com"]; len(sup) != 1 || g == nil || g.Reason != "userunknown: 5.1.1 550 User unknown (smtp)" || g.ReasonCode != "userunknown" ||
		g.StatusCode != "5.1.1" || g.Source != service.SourceSMTP {
		t.Fatalf("suppressions: %+v", sup)
	}
	if done.LastBlock == "" || !strings.Contains(done.LastBlock, "550 5.7.1") {
		t.Fatalf("last block %q", done.LastBlock)
	}

	// The API record: blocks after unsubscribes, the engine's fields out.
	js, err := json.Marshal(done)
	if err != nil {
		t.Fatal(err)
	}
	s := string(js)
	if !strings.Contains(s, `"unsubscribes":0,"blocks":2,"soft_bounces":0,"spam_reports":0,"unique_open_token"`) {
		t.Fatalf("API record: %s", s)
	}
	for _, k := range []string{"failures", "first_failure", "last_failure", "last_block", "paused_at", "pause_reason", "block_streak"} {
		if strings.Contains(s, `"`+k+`"`) {
			t.Fatalf("API record carries %s: %s", k, s)
		}
	}

	// The next send leaves out only the bounced address; the blocked ones
	// get it once the relay takes them.
	f.SMTP.Lift(smtptest.AtRcpt, "far@elsewhere.example")
	f.SMTP.Lift(smtptest.AtData, "filtered@example.com")
	second := f.WaitStatus(f.Create(f.Input("Summer", to, nil)).Utr, models.SendCompleted, 20*time.Second)
	if second.Triggered != 4 || second.Delivered != 4 || second.Blocks != 0 {
		t.Fatalf("second send: triggered %d delivered %d blocks %d", second.Triggered, second.Delivered, second.Blocks)
	}
}

// TestSenderRefusalPausesTheSendAndResumeSendsItAgain: the relay refuses
// the sender at MAIL FROM (553 5.7.1) for every message. No recipient is
// suppressed, the send pauses itself (status still 2) after the rule's
// streak, claims nothing while paused, the notification recipients get
// one mail with the relay's answer, and Resume sends the blocked messages
// once the relay accepts.
func TestSenderRefusalPausesTheSendAndResumeSendsItAgain(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	if _, err := f.Svc.Notifications.Save(f.Ctx, f.Acct, service.NotificationInput{EmailAddress: "alerts@herald.test", EmailOwner: "Ops"}); err != nil {
		t.Fatal(err)
	}
	const reply = "Sender address rejected: not owned by user news@shop.example.com"
	f.SMTP.Refuse(smtptest.AtMail, "bounces+*@herald.test", 553, "5.7.1", reply)
	var emails []string
	for i := range 30 {
		emails = append(emails, fmt.Sprintf("r%02d@example.com", i))
	}
	typeA := f.ContactType("Customers", emails...)
	ss := f.Create(f.Input("Autumn", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	var got *models.SingleSend
	f.WaitFor("the send to pause", 20*time.Second, func() bool { got = f.PausedOrFail(ss.Utr); return got.PausedAt != nil })

	want := "delivery: permanent failure at mail: 553 5.7.1 " + reply
	if got.Status != models.SendRunning || got.PauseReason != want || got.Bounces != 0 || got.Blocks < 10 || got.Delivered != 0 {
		t.Fatalf("paused send: status %d reason %q bounces %d blocks %d delivered %d", got.Status, got.PauseReason, got.Bounces, got.Blocks, got.Delivered)
	}
	if sup := f.Suppressed(); len(sup) != 0 {
		t.Fatalf("a sender refusal suppressed %d recipients", len(sup))
	}
	// Messages claimed when it paused went back to the queue: none stays
	// claimed, and the queue is not taken while it is paused.
	f.WaitFor("claims to be given back", 10*time.Second, func() bool {
		var claimed int64
		f.Svc.DB.R.Model(&models.SendMessage{}).Where("send_id = ? AND state = ?", ss.ID, models.MessageClaimed).Count(&claimed)
		return claimed == 0
	})
	// Messages on the wire when it paused are recorded by now (nothing is
	// claimed); from here nothing changes while it stays paused.
	settled := f.Get(ss.Utr).Blocks
	time.Sleep(300 * time.Millisecond) // several engine polls
	rows := f.Ledger(ss.ID)
	blocked, queued := 0, 0
	for _, r := range rows {
		switch r.State {
		case models.MessageBlocked:
			blocked++
			if r.Error != want {
				t.Fatalf("blocked row %s: error %q", r.Email, r.Error)
			}
		case models.MessageQueued:
			queued++
		default:
			t.Fatalf("row %s in state %d", r.Email, r.State)
		}
	}
	if after := f.Get(ss.Utr); int64(blocked) != after.Blocks || blocked+queued != 30 || after.Blocks != settled || queued == 0 {
		t.Fatalf("blocked %d queued %d, send counts %d blocks (%d once nothing was claimed)", blocked, queued, after.Blocks, settled)
	}
	if done := f.Get(ss.Utr); done.Status != models.SendRunning {
		t.Fatalf("a paused send completed: status %d", done.Status)
	}

	// One notice, to the notification recipient, with the relay's answer.
	var notice []smtptest.Message
	f.WaitFor("the pause notice", 10*time.Second, func() bool {
		notice = notice[:0]
		for _, m := range f.SMTP.Messages() {
			if m.To == "alerts@herald.test" && strings.Contains(m.Header().Get("Subject"), "paused") {
				notice = append(notice, m)
			}
		}
		return len(notice) > 0
	})
	subject := servicetest.DecodeSubject(t, notice[0])
	if !strings.HasPrefix(subject, "Sending of “Autumn” paused: the relay refused it (553 5.7.1 Sender address rejected") {
		t.Fatalf("notice subject %q", subject)
	}
	html, _ := parts(t, notice[0].Data)
	if !strings.Contains(html, "553 5.7.1 "+reply) || !strings.Contains(html, "/single-sends/"+ss.Utr) || !strings.Contains(html, "Resume") {
		t.Fatalf("notice body:\n%s", html)
	}

	// Resume while still paused by another account: not found.
	if _, err := f.Svc.SingleSends.Resume(f.Ctx, servicetest.NewAccount(t, f.Svc, "other@herald.test"), ss.Utr); !service.IsNotFound(err) {
		t.Fatalf("resume by another account: %v", err)
	}
	// The relay is fixed; resume: every message goes, once.
	f.SMTP.Lift(smtptest.AtMail, "bounces+*@herald.test")
	n, err := f.Svc.SingleSends.Resume(f.Ctx, f.Acct, ss.Utr)
	if err != nil || n != int64(blocked) {
		t.Fatalf("resume: %d %v; want %d", n, err, blocked)
	}
	done := f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	if done.Delivered != 30 || done.Blocks != 0 || done.Bounces != 0 || done.PausedAt != nil {
		t.Fatalf("after resume: delivered %d blocks %d bounces %d paused %v", done.Delivered, done.Blocks, done.Bounces, done.PausedAt)
	}
	if r := recipients(f.Sent(ss.Utr)); len(r) != 30 {
		t.Fatalf("%d messages reached the relay, want 30", len(r))
	}
	if _, err := f.Svc.SingleSends.Resume(f.Ctx, f.Acct, ss.Utr); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("resume of a send that is not paused: %v", err)
	}
	// Still one notice.
	count := 0
	for _, m := range f.SMTP.Messages() {
		if m.To == "alerts@herald.test" && strings.Contains(m.Header().Get("Subject"), "paused") {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("%d pause notices, want 1", count)
	}
}

// TestContentRefusalOfEveryMessagePausesASmallSend: a send of fewer
// messages than the rule's streak pauses when every one of them was
// refused (here at DATA), instead of completing with all of them blocked.
func TestContentRefusalOfEveryMessagePausesASmallSend(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	emails := []string{"a@example.com", "b@example.com", "c@example.com"}
	for _, e := range emails {
		f.SMTP.Refuse(smtptest.AtData, e, 550, "5.7.1", "Message content rejected")
	}
	typeA := f.ContactType("Customers", emails...)
	ss := f.Create(f.Input("Small", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	var got *models.SingleSend
	f.WaitFor("the send to pause", 20*time.Second, func() bool { got = f.PausedOrFail(ss.Utr); return got.PausedAt != nil })
	if got.Blocks != 3 || got.Bounces != 0 || got.Status != models.SendRunning ||
		got.PauseReason != "delivery: permanent failure at data: 550 5.7.1 Message content rejected" {
		t.Fatalf("blocks %d bounces %d status %d reason %q", got.Blocks, got.Bounces, got.Status, got.PauseReason)
	}
	if sup := f.Suppressed(); len(sup) != 0 {
		t.Fatalf("a content refusal suppressed %d recipients", len(sup))
	}
	for _, e := range emails {
		f.SMTP.Lift(smtptest.AtData, e)
	}
	if _, err := f.Svc.SingleSends.Resume(f.Ctx, f.Acct, ss.Utr); err != nil {
		t.Fatal(err)
	}
	if done := f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second); done.Delivered != 3 || done.Blocks != 0 {
		t.Fatalf("after resume: delivered %d blocks %d", done.Delivered, done.Blocks)
	}
}

// TestMessageThatCannotBeBuiltIsAFailureOfTheSend: a contact whose name
// holds a line break (stored before input refused them) makes a message
// that cannot be built, and a sender domain whose DKIM key cannot be read
// makes every message of its send fail. Both count as failures on the
// send with their reason; nobody is suppressed; nothing is a bounce.
func TestMessageThatCannotBeBuiltIsAFailureOfTheSend(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com", "cy@example.com")
	if err := f.Svc.DB.W.Exec("UPDATE contacts SET first_name = ? WHERE email = ?", "Bob\r\nBcc: all@example.com", "bob@example.com").Error; err != nil {
		t.Fatal(err)
	}
	to := []string{"contacts_" + strconv.FormatInt(typeA, 10)}
	ss := f.Create(f.Input("Names", to, nil))
	done := f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	const reason = "delivery: invalid message: display name with a line break"
	if done.Delivered != 2 || done.Bounces != 0 || done.Blocks != 0 || done.Failures != 1 || done.FirstFailure != reason || done.LastFailure != reason {
		t.Fatalf("delivered %d bounces %d blocks %d failures %d first %q last %q", done.Delivered, done.Bounces, done.Blocks, done.Failures, done.FirstFailure, done.LastFailure)
	}
	if r := f.Ledger(ss.ID)["bob@example.com"]; r.State != models.MessageFailed || r.Error != reason {
		t.Fatalf("bob's row: state %d error %q", r.State, r.Error)
	}
	if sup := f.Suppressed(); len(sup) != 0 {
		t.Fatalf("a message that could not be built suppressed %v", sup)
	}

	// A DKIM key that cannot sign: every message fails, the send completes.
	if err := f.Svc.DB.W.Create(&models.SenderDomain{UserID: f.Acct, Domain: "shop.example.com", Selector: "herald", Algorithm: "rsa", Generation: 1, SignAnyway: 1,
		PrivateKey: "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n", CreatedAt: models.NewTimestamp(models.Now())}).Error; err != nil {
		t.Fatal(err)
	}
	signed := f.WaitStatus(f.Create(f.Input("Signed", to, nil)).Utr, models.SendCompleted, 20*time.Second)
	if signed.Delivered != 0 || signed.Bounces != 0 || signed.Failures != 3 || !strings.HasPrefix(signed.FirstFailure, "delivery: invalid DKIM key") {
		t.Fatalf("DKIM: delivered %d bounces %d failures %d first %q", signed.Delivered, signed.Bounces, signed.Failures, signed.FirstFailure)
	}
	if sup := f.Suppressed(); len(sup) != 0 {
		t.Fatalf("a DKIM failure suppressed %v", sup)
	}
}

// TestAutomationEmailBlocksDoNotSuppress: an automation's email is a send
// too; the relay's refusal of its sender blocks (never suppresses), the
// email's send pauses by the same rule, and resuming it from the
// automation sends the blocked messages.
func TestAutomationEmailBlocksDoNotSuppress(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	f.SMTP.Refuse(smtptest.AtMail, "bounces+*@herald.test", 553, "5.7.1", "Sender address rejected: Access denied")
	typeA := f.ContactType("Customers")
	a := f.Automation(typeA, "0")
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	f.AddContact(typeA, "new1@example.com")
	f.AddContact(typeA, "new2@example.com")
	var step *service.StepStats
	f.WaitFor("the email's send to pause", 20*time.Second, func() bool {
		steps, err := f.Svc.Automations.Steps(f.Ctx, f.Acct, a.Utr)
		if err != nil {
			t.Fatal(err)
		}
		step = &steps[0]
		if sup := f.Suppressed(); len(sup) != 0 {
			t.Fatalf("the relay's refusal of the sender suppressed %d contacts", len(sup))
		}
		return step.Send != nil && step.Send.PausedAt != nil
	})
	if step.Send.Bounces != 0 || step.Send.Blocks < 1 {
		t.Fatalf("email 1: bounces %d blocks %d", step.Send.Bounces, step.Send.Blocks)
	}
	if sup := f.Suppressed(); len(sup) != 0 {
		t.Fatalf("suppressed %v", sup)
	}
	f.SMTP.Lift(smtptest.AtMail, "bounces+*@herald.test")
	if _, err := f.Svc.Automations.ResumeEmail(f.Ctx, f.Acct, a.Utr, step.Schedule.Utr); err != nil {
		t.Fatal(err)
	}
	f.WaitFor("both contacts to get email 1", 20*time.Second, func() bool {
		return f.StepsOf("new1@example.com", "Step 1") == 1 && f.StepsOf("new2@example.com", "Step 1") == 1
	})
	if _, err := f.Svc.Automations.ResumeEmail(f.Ctx, f.Acct, a.Utr, "not-an-email"); !service.IsNotFound(err) {
		t.Fatalf("resume of an unknown email: %v", err)
	}
}

func TestReadRefusalAndFailure(t *testing.T) {
	t.Parallel()
	refusals := []struct{ in, want string }{
		{"delivery: permanent failure at mail: 553 5.7.1 Sender address rejected", "553 5.7.1 Sender address rejected (at MAIL FROM)"},
		{"delivery: permanent failure at rcpt: 554 5.7.1 Service unavailable\nClient host blocked", "554 5.7.1 Service unavailable Client host blocked (at RCPT TO)"},
		{"delivery: permanent failure at data: 550 5.7.1 Message content rejected", "550 5.7.1 Message content rejected (at DATA)"},
		{"delivery: temporary failure at connect: dial tcp: connection refused", "dial tcp: connection refused (at connecting)"},
		{"", ""},
	}
	for _, r := range refusals {
		if got := service.ReadRefusal(r.in).String(); got != r.want {
			t.Errorf("ReadRefusal(%q) = %q, want %q", r.in, got, r.want)
		}
	}
	failures := []struct {
		in    string
		built bool
		want  string
	}{
		{"delivery: invalid message: display name with a line break", true, "the message is not valid mail (display name with a line break)"},
		{"delivery: invalid DKIM key: no PEM block", true, "the DKIM key of the sender's domain cannot be used: no PEM block"},
		{"delivery: DKIM signing for shop.example.com: boom", true, "the message could not be signed with the sender domain's DKIM key (DKIM signing for shop.example.com: boom)"},
		{`delivery: permanent failure at envelope: recipient "a b"`, false, `recipient "a b" (at the envelope)`},
		{"delivery: temporary failure at connect: dial tcp: connection refused", false, "dial tcp: connection refused (at connecting)"},
	}
	for _, f := range failures {
		if got := service.ReadFailure(f.in); got.Built != f.built || got.Text != f.want {
			t.Errorf("ReadFailure(%q) = %+v, want %v %q", f.in, got, f.built, f.want)
		}
	}
}
