package delivery

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/emersion/go-smtp"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	none := EnhancedCode{}
	tests := []struct {
		stage     string
		code      int
		enhanced  EnhancedCode
		message   string
		want      Verdict
		exhausted Verdict // what a retry becomes at the end of the window
	}{
		{"", 250, EnhancedCode{2, 0, 0}, "ok", VerdictDelivered, VerdictDelivered},
		// Temporary answers and no answer at all: retried; at the end of
		// the window a soft bounce (never a suppression), a block when it
		// was policy, a failure of the send without a recipient's answer.
		{StageRcpt, 451, EnhancedCode{4, 3, 0}, "temporary local problem", VerdictRetry, VerdictSoftBounce},
		{StageRcpt, 450, EnhancedCode{4, 2, 1}, "mailbox unavailable", VerdictRetry, VerdictSoftBounce},
		{StageRcpt, 450, EnhancedCode{4, 1, 1}, "Recipient address rejected: User unknown in local recipient table", VerdictRetry, VerdictSoftBounce},
		{StageRcpt, 450, EnhancedCode{4, 7, 1}, "greylisted, try again later", VerdictRetry, VerdictBlock}, // greylisting, policy
		{StageRcpt, 421, EnhancedCode{4, 7, 0}, "[TSS04] Messages from 192.0.2.1 temporarily deferred due to user complaints", VerdictRetry, VerdictBlock},
		{StageMail, 451, EnhancedCode{4, 1, 8}, "Sender address rejected: Domain not found", VerdictRetry, VerdictBlock},
		{StageData, 452, EnhancedCode{4, 3, 1}, "insufficient system storage", VerdictRetry, VerdictBlock},
		{StageConnect, 421, EnhancedCode{4, 7, 0}, "too many errors", VerdictRetry, VerdictBlock},
		{StageConnect, 421, none, "service not available", VerdictRetry, VerdictFailed},
		{StageConnect, 0, none, "", VerdictRetry, VerdictFailed},
		{StageRcpt, 0, none, "", VerdictRetry, VerdictFailed}, // the connection dropped during RCPT
		// The relay's or the configuration's trouble: retried.
		{StageConnect, 554, none, "no SMTP service here", VerdictRetry, VerdictFailed},
		{StageAuth, 535, none, "Authentication credentials invalid", VerdictRetry, VerdictFailed},
		{StageAuth, 530, EnhancedCode{5, 5, 1}, "Authentication required", VerdictRetry, VerdictFailed},
		// Policy, any stage: a block.
		{StageAuth, 535, EnhancedCode{5, 7, 8}, "Authentication credentials invalid", VerdictBlock, VerdictBlock},
		{StageConnect, 554, EnhancedCode{5, 7, 1}, "Client host rejected", VerdictBlock, VerdictBlock},
		{StageMail, 553, EnhancedCode{5, 7, 1}, "Sender address rejected", VerdictBlock, VerdictBlock},
		{StageRcpt, 550, EnhancedCode{5, 7, 1}, "Service unavailable; client blocked using zen.spamhaus.org", VerdictBlock, VerdictBlock},
		{StageRcpt, 554, EnhancedCode{5, 7, 1}, "Relay access denied", VerdictBlock, VerdictBlock},
		{StageRcpt, 553, EnhancedCode{5, 7, 1}, "Sender address rejected: not owned by user", VerdictBlock, VerdictBlock}, // Postfix's sender restrictions answer at RCPT
		{StageData, 550, EnhancedCode{5, 7, 1}, "Message rejected as spam", VerdictBlock, VerdictBlock},
		{StageData, 554, EnhancedCode{5, 7, 26}, "Unauthenticated email is not accepted due to DMARC policy", VerdictBlock, VerdictBlock},
		// A policy refusal in the words alone, at RCPT: a block, however
		// the status reads ("5.1.1" beside "blacklisted").
		{StageRcpt, 550, EnhancedCode{5, 1, 1}, "IP address blacklisted by recipient", VerdictBlock, VerdictBlock},
		{StageRcpt, 554, none, "rejected because 192.0.2.1 is in a black list at zen.spamhaus.org", VerdictBlock, VerdictBlock},
		{StageRcpt, 550, none, "5.7.1 no PTR record for 192.0.2.1", VerdictBlock, VerdictBlock},
		{StageRcpt, 501, EnhancedCode{5, 1, 8}, "Sender address rejected", VerdictBlock, VerdictBlock},
		// The sender or the content refused: a block whatever the code.
		{StageMail, 553, none, "sorry, that domain isn't allowed", VerdictBlock, VerdictBlock},
		{StageMail, 550, EnhancedCode{5, 1, 8}, "bad sender's system address", VerdictBlock, VerdictBlock},
		{StageMail, 501, EnhancedCode{5, 1, 7}, "bad sender address syntax", VerdictBlock, VerdictBlock},
		{StageMail, 550, EnhancedCode{5, 1, 1}, "User unknown", VerdictBlock, VerdictBlock}, // the sender's mailbox, not the recipient's
		{StageData, 550, none, "", VerdictBlock, VerdictBlock},
		{StageData, 550, EnhancedCode{5, 1, 1}, "User unknown", VerdictBlock, VerdictBlock},
		{StageData, 552, EnhancedCode{5, 3, 4}, "Message too big", VerdictBlock, VerdictBlock},
		{StageData, 554, EnhancedCode{5, 6, 0}, "Message rejected", VerdictBlock, VerdictBlock},
		// The recipient's mailbox or domain gone: the only bounces.
		{StageRcpt, 550, EnhancedCode{5, 1, 1}, "User unknown", VerdictBounce, VerdictBounce},
		{StageRcpt, 550, EnhancedCode{5, 1, 1}, "", VerdictBounce, VerdictBounce},
		{StageRcpt, 550, EnhancedCode{5, 1, 10}, "RESOLVER.ADR.RecipientNotFound", VerdictBounce, VerdictBounce},
		{StageRcpt, 553, EnhancedCode{5, 1, 3}, "Invalid address syntax", VerdictBounce, VerdictBounce},
		{StageRcpt, 550, EnhancedCode{5, 1, 2}, "Host unknown", VerdictBounce, VerdictBounce},
		{StageRcpt, 551, EnhancedCode{5, 1, 6}, "User has moved", VerdictBounce, VerdictBounce},
		{StageRcpt, 550, none, "No such user here", VerdictBounce, VerdictBounce},
		{StageRcpt, 550, EnhancedCode{5, 0, 0}, "<a@b.example>: Recipient address rejected: User unknown in virtual mailbox table", VerdictBounce, VerdictBounce},
		// A disabled account, a filter, a reply that says nothing: this
		// message failed, the address stays.
		{StageRcpt, 550, EnhancedCode{5, 2, 1}, "The email account that you tried to reach is disabled", VerdictSoftBounce, VerdictSoftBounce},
		{StageRcpt, 550, none, "", VerdictSoftBounce, VerdictSoftBounce},
		{StageRcpt, 551, none, "", VerdictSoftBounce, VerdictSoftBounce},
		{StageRcpt, 554, none, "Transaction failed", VerdictSoftBounce, VerdictSoftBounce},
		{StageRcpt, 554, EnhancedCode{5, 0, 0}, "", VerdictSoftBounce, VerdictSoftBounce},
		{StageRcpt, 550, EnhancedCode{5, 4, 1}, "Recipient address rejected: Access denied", VerdictBounce, VerdictBounce}, // Exchange Online: no such recipient
		{StageRcpt, 503, EnhancedCode{5, 5, 1}, "Bad sequence of commands", VerdictSoftBounce, VerdictSoftBounce},
		// A full mailbox is retried (RFC 5321 4.5.3.1.10), a soft bounce at the end.
		{StageRcpt, 552, EnhancedCode{5, 2, 2}, "Mailbox full", VerdictRetry, VerdictSoftBounce},
		{StageRcpt, 552, none, "", VerdictRetry, VerdictSoftBounce},
		// The content's size at RCPT: a block.
		{StageRcpt, 552, EnhancedCode{5, 3, 4}, "Message too big for system", VerdictBlock, VerdictBlock},
		// Herald's own: a permanent answer nowhere else.
		{StageEnvelope, 550, none, "", VerdictFailed, VerdictFailed},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s %d %s %s", tt.stage, tt.code, tt.enhanced, tt.message)
		t.Run(name, func(t *testing.T) {
			if got := Classify(tt.stage, tt.code, tt.enhanced, tt.message); got != tt.want {
				t.Fatalf("Classify = %s, want %s", got, tt.want)
			}
			if tt.want != VerdictRetry {
				return
			}
			if got := Exhausted(tt.stage, tt.code, tt.enhanced, tt.message); got != tt.exhausted {
				t.Fatalf("Exhausted = %s, want %s", got, tt.exhausted)
			}
		})
	}
}

func TestClassifyError(t *testing.T) {
	t.Parallel()
	build := fmt.Errorf("%w: display name with a line break", ErrInvalidMessage)
	tests := []struct {
		name  string
		err   error
		final bool
		want  Verdict
	}{
		{"accepted", nil, false, VerdictDelivered},
		{"not built", build, false, VerdictFailed},
		{"not built, final", build, true, VerdictFailed},
		{"dkim", fmt.Errorf("delivery: DKIM signing for shop.example.com: %w", errors.New("boom")), false, VerdictFailed},
		{"bad recipient address", &SendError{Stage: StageEnvelope, Message: `recipient "a b"`}, false, VerdictFailed},
		{"no SMTPUTF8", &SendError{Stage: StageMail, Message: "non-ASCII address and the server lacks SMTPUTF8"}, false, VerdictFailed},
		{"dial", &SendError{Temporary: true, Stage: StageConnect, Message: "connection refused"}, false, VerdictRetry},
		{"dial, final", &SendError{Temporary: true, Stage: StageConnect, Message: "connection refused"}, true, VerdictFailed},
		{"no AUTH offered", &SendError{Stage: StageAuth, Message: "the server offers neither AUTH PLAIN nor AUTH LOGIN"}, false, VerdictRetry},
		{"outbox busy", &SendError{Temporary: true, Stage: StageStore, Message: "database is locked"}, false, VerdictRetry},
		{"451 at rcpt, final", &SendError{Temporary: true, Stage: StageRcpt, Code: 451}, true, VerdictSoftBounce},
		{"sender refused", &SendError{Stage: StageMail, Code: 553, Enhanced: EnhancedCode{5, 7, 1}}, false, VerdictBlock},
		{"unknown user", &SendError{Stage: StageRcpt, Code: 550, Enhanced: EnhancedCode{5, 1, 1}}, false, VerdictBounce},
		{"unknown user in words", &SendError{Stage: StageRcpt, Code: 550, Message: "sorry, no mailbox here by that name"}, false, VerdictBounce},
		{"blocklisted in words", &SendError{Stage: StageRcpt, Code: 550, Message: "Blocked - see https://support.proofpoint.com/dnsbl-lookup.cgi?ip=192.0.2.1"}, false, VerdictBlock},
		{"wrapped", fmt.Errorf("engine: %w", &SendError{Stage: StageData, Code: 550}), false, VerdictBlock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClassifyError(tt.err, tt.final); got != tt.want {
				t.Fatalf("ClassifyError(%v, %v) = %s, want %s", tt.err, tt.final, got, tt.want)
			}
			if got := (Outcome{Err: tt.err}).Verdict(tt.final); got != tt.want {
				t.Fatalf("Outcome.Verdict = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestSMTPRefusalsKeepTheEnhancedCode sends through a real go-smtp server
// that refuses the sender, the content and recipients as Postfix does, and
// checks the stage, the enhanced status code kept in the error (and its
// text, which the ledger stores), and the verdict.
func TestSMTPRefusalsKeepTheEnhancedCode(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{tls: TLSNone})
	p := NewSMTPPool(s.config(TLSNone), 1)
	defer p.Close()
	ctx := context.Background()

	tests := []struct {
		name    string
		from    string
		to      string
		setup   func()
		stage   string
		code    int
		enh     EnhancedCode
		text    string // SendError.Error()
		verdict Verdict
	}{
		{name: "sender refused at MAIL FROM", from: "blocked@shop.example",
			setup: func() {
				s.refuse("mail", "blocked@shop.example", &smtp.SMTPError{Code: 553, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "Sender address rejected: not owned by user"})
			},
			stage: StageMail, code: 553, enh: EnhancedCode{5, 7, 1},
			text: "delivery: permanent failure at mail: 553 5.7.1 Sender address rejected: not owned by user", verdict: VerdictBlock},
		{name: "content refused at DATA", to: "content@example.test",
			setup: func() {
				s.refuse("data", "content@example.test", &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "Message content rejected"})
			},
			stage: StageData, code: 550, enh: EnhancedCode{5, 7, 1},
			text: "delivery: permanent failure at data: 550 5.7.1 Message content rejected", verdict: VerdictBlock},
		{name: "unknown user at RCPT", to: "nobody@example.test",
			setup: func() {
				s.refuse("rcpt", "nobody@example.test", &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "User unknown"})
			},
			stage: StageRcpt, code: 550, enh: EnhancedCode{5, 1, 1},
			text: "delivery: permanent failure at rcpt: 550 5.1.1 User unknown", verdict: VerdictBounce},
		{name: "relay access denied at RCPT", to: "far@elsewhere.test",
			setup: func() {
				s.refuse("rcpt", "far@elsewhere.test", &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "Relay access denied"})
			},
			stage: StageRcpt, code: 550, enh: EnhancedCode{5, 7, 1},
			text: "delivery: permanent failure at rcpt: 550 5.7.1 Relay access denied", verdict: VerdictBlock},
		{name: "a reply without an enhanced code", to: "old@example.test",
			setup: func() {
				s.refuse("rcpt", "old@example.test", &smtp.SMTPError{Code: 550, EnhancedCode: smtp.NoEnhancedCode, Message: "No such user here"})
			},
			stage: StageRcpt, code: 550,
			text: "delivery: permanent failure at rcpt: 550 No such user here", verdict: VerdictBounce},
		{name: "a code on the last line only", to: "multi@example.test",
			setup: func() {
				s.refuse("rcpt", "multi@example.test", &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "Service unavailable\nClient host blocked using zen.example"})
			},
			stage: StageRcpt, code: 554, enh: EnhancedCode{5, 7, 1},
			text: "delivery: permanent failure at rcpt: 554 5.7.1 Service unavailable\nClient host blocked using zen.example", verdict: VerdictBlock},
		{name: "a full mailbox", to: "full@example.test",
			setup: func() {
				s.refuse("rcpt", "full@example.test", &smtp.SMTPError{Code: 552, EnhancedCode: smtp.EnhancedCode{5, 2, 2}, Message: "Mailbox full"})
			},
			stage: StageRcpt, code: 552, enh: EnhancedCode{5, 2, 2},
			text: "delivery: permanent failure at rcpt: 552 5.2.2 Mailbox full", verdict: VerdictRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			from, to := tt.from, tt.to
			if from == "" {
				from = "news@shop.example"
			}
			if to == "" {
				to = "ann@example.test"
			}
			err := p.Send(ctx, from, []string{to}, testMsg(1))
			se := asSendError(t, err)
			if se.Stage != tt.stage || se.Code != tt.code || se.Enhanced != tt.enh || se.Temporary {
				t.Fatalf("SendError %+v, want stage %s code %d enhanced %s", se, tt.stage, tt.code, tt.enh)
			}
			if se.Error() != tt.text {
				t.Fatalf("text %q\nwant %q", se.Error(), tt.text)
			}
			if v := ClassifyError(err, false); v != tt.verdict {
				t.Fatalf("verdict %s, want %s", v, tt.verdict)
			}
		})
	}
	// The connection is still good: a plain message goes through.
	if err := p.Send(ctx, "news@shop.example", []string{"ann@example.test"}, testMsg(2)); err != nil {
		t.Fatal(err)
	}
}

func TestReplyErrorEnhancedCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code int
		text string
		enh  smtp.EnhancedCode
		msg  string
	}{
		{550, "5.1.1 <a@b>: Recipient address rejected: User unknown", smtp.EnhancedCode{5, 1, 1}, "<a@b>: Recipient address rejected: User unknown"},
		{554, "5.7.1 first\n5.7.1 second", smtp.EnhancedCode{5, 7, 1}, "first\nsecond"},
		{554, "first\n5.7.1 second", smtp.EnhancedCode{5, 7, 1}, "first\nsecond"},
		{550, "4.7.1 not the reply's class", smtp.EnhancedCode{}, "4.7.1 not the reply's class"},
		{550, "No such user", smtp.EnhancedCode{}, "No such user"},
		{550, "5.1 not a code", smtp.EnhancedCode{}, "5.1 not a code"},
	}
	for _, tt := range tests {
		e := replyError(tt.code, tt.text)
		if e.EnhancedCode != tt.enh || e.Message != tt.msg {
			t.Errorf("replyError(%d, %q) = %v %q, want %v %q", tt.code, tt.text, e.EnhancedCode, e.Message, tt.enh, tt.msg)
		}
	}
}
