package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"herald/dbtest"
	"herald/delivery"
	"herald/service"
	"herald/service/servicetest"
)

// joinMember invites email to the account and accepts the mailed link
// with the password "member-passphrase-7"; it returns the member's login.
func joinMember(t *testing.T, svc *service.Service, mem *delivery.MemoryOutbox, accountID int64, email string, role service.Role) service.Who {
	t.Helper()
	ctx := context.Background()
	if _, err := svc.Team.Invite(ctx, accountID, email, role); err != nil {
		t.Fatal(err)
	}
	toks := invitationTokens(mem)
	m, err := svc.Team.Accept(ctx, toks[len(toks)-1], service.AcceptInput{Name: strings.Split(email, "@")[0], Password: memberPassword})
	if err != nil {
		t.Fatal(err)
	}
	return service.Who{AccountID: accountID, MemberID: m.ID}
}

const memberPassword = "member-passphrase-7"

// liveSessions reports which of the tokens name a live session.
func liveSessions(t *testing.T, svc *service.Service, tokens ...string) []bool {
	t.Helper()
	out := make([]bool, len(tokens))
	for i, tok := range tokens {
		_, err := svc.Sessions.Check(context.Background(), tok)
		if err != nil && !service.IsNotFound(err) {
			t.Fatal(err)
		}
		out[i] = err == nil
	}
	return out
}

func session(t *testing.T, svc *service.Service, w service.Who) string {
	t.Helper()
	tok, err := svc.Sessions.StartMember(context.Background(), w.AccountID, w.MemberID)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestMemberPasswordResetByMail: "Forgot your password?" works for a
// member's address as for an owner's: the link sets the member's
// password, once; finishing ends the member's sessions only; an unknown
// address gets the same answer; the throttle is the same; removing the
// member ends its links.
func TestMemberPasswordResetByMail(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc, clk := clockedService(t, service.Config{Transport: delivery.NewOutbox(mem), BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test"})
	ctx := context.Background()
	ann := servicetest.NewAccount(t, svc, "ann@example.com")
	bob := joinMember(t, svc, mem, ann, "bob@example.com", service.RoleEditor)
	cat := joinMember(t, svc, mem, ann, "cat@example.com", service.RoleViewer)
	sOwner, sBob1, sBob2, sCat := session(t, svc, service.Owner(ann)), session(t, svc, bob), session(t, svc, bob), session(t, svc, cat)

	// The same answer for a member's address and an unknown one; the
	// member gets a link, the unknown address a notice.
	before := len(mem.Messages())
	for _, e := range []string{"nobody@example.com", "Bob@example.com", "ann@example.com"} {
		if err := svc.Accounts.RequestPasswordReset(ctx, e); err != nil {
			t.Fatalf("%s: %v", e, err)
		}
	}
	msgs := mem.Messages()[before:]
	if len(msgs) != 3 || msgs[0].To[0] != "nobody@example.com" || msgs[1].To[0] != "bob@example.com" {
		t.Fatalf("mails: %+v", msgs)
	}
	if body := string(msgs[0].Data); strings.Contains(body, "/reset/") {
		t.Fatalf("a link to an unknown address:\n%s", body)
	}
	tokens := resetTokens(t, mem)
	if len(tokens) != 2 {
		t.Fatalf("tokens %v", tokens)
	}
	bobTok, annTok := tokens[0], tokens[1]
	var rows []struct{ UserID, MemberID int64 }
	svc.DB.R.Table("password_resets").Select("user_id", "member_id").Order("id").Scan(&rows)
	if len(rows) != 2 || rows[0].UserID != ann || rows[0].MemberID != bob.MemberID || rows[1].MemberID != 0 {
		t.Fatalf("reset rows %+v", rows)
	}
	if e, err := svc.Accounts.PasswordReset(ctx, bobTok); err != nil || e != "bob@example.com" {
		t.Fatalf("open: %q %v", e, err)
	}

	who, err := svc.Accounts.FinishPasswordReset(ctx, bobTok, service.NewPassword{Password: "new-passphrase-5", Confirmation: "new-passphrase-5"})
	if err != nil || who != bob {
		t.Fatalf("finish: %+v %v", who, err)
	}
	// Bob's sessions end; the owner's and Cat's live on.
	if got := liveSessions(t, svc, sOwner, sBob1, sBob2, sCat); got[0] != true || got[1] || got[2] || got[3] != true {
		t.Fatalf("live sessions (owner, bob, bob, cat): %v", got)
	}
	u, m, err := svc.Accounts.SignIn(ctx, service.LoginInput{Email: "bob@example.com", Password: "new-passphrase-5"})
	if err != nil || m == nil || m.ID != bob.MemberID || u.ID != ann {
		t.Fatalf("member login with the new password: %v %v", m, err)
	}
	if _, _, err := svc.Accounts.SignIn(ctx, service.LoginInput{Email: "bob@example.com", Password: memberPassword}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("the old password: %v", err)
	}
	// The owner's password is as it was, and the owner's link still works.
	if _, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: "test-passphrase-9"}); err != nil {
		t.Fatal(err)
	}
	if e, err := svc.Accounts.PasswordReset(ctx, annTok); err != nil || e != "ann@example.com" {
		t.Fatalf("the owner's link after the member's reset: %q %v", e, err)
	}
	// Once.
	if _, err := svc.Accounts.FinishPasswordReset(ctx, bobTok, service.NewPassword{Password: "third-passphrase-6", Confirmation: "third-passphrase-6"}); err != service.ErrResetLink {
		t.Fatalf("twice: %v", err)
	}

	// Throttled per address as the owner's: three at once (one above),
	// then nothing for 10 minutes, with the same answer.
	before = len(mem.Messages())
	for range 4 {
		if err := svc.Accounts.RequestPasswordReset(ctx, "bob@example.com"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(mem.Messages()) - before; n != 2 {
		t.Fatalf("%d mails to the member within the throttle, want 2", n)
	}
	clk.Advance(10*time.Minute + time.Second)

	// Removing a member deletes its links: a mailed one stops working.
	if err := svc.Accounts.RequestPasswordReset(ctx, "cat@example.com"); err != nil {
		t.Fatal(err)
	}
	tokens = resetTokens(t, mem)
	catTok := tokens[len(tokens)-1]
	if e, err := svc.Accounts.PasswordReset(ctx, catTok); err != nil || e != "cat@example.com" {
		t.Fatalf("cat's link: %q %v", e, err)
	}
	if err := svc.Team.Remove(ctx, ann, cat.MemberID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Accounts.PasswordReset(ctx, catTok); err != service.ErrResetLink {
		t.Fatalf("a removed member's link: %v", err)
	}
	var n int64
	svc.DB.R.Table("password_resets").Where("user_id = ? AND member_id = ?", ann, cat.MemberID).Count(&n)
	if n != 0 {
		t.Fatalf("%d reset rows of a removed member", n)
	}
	// And a removed member's address is now unknown: a notice, no link.
	clk.Advance(10*time.Minute + time.Second)
	before = len(resetTokens(t, mem))
	if err := svc.Accounts.RequestPasswordReset(ctx, "cat@example.com"); err != nil {
		t.Fatal(err)
	}
	if len(resetTokens(t, mem)) != before {
		t.Fatal("a link mailed to a removed member")
	}
}

// TestMemberResetCommands: `herald account reset-password` and
// `reset-2fa` (service.Accounts.ResetPassword, ResetTOTP) take a member's
// address and touch that login only.
func TestMemberResetCommands(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc := dbtest.Service(t, service.Config{Transport: delivery.NewOutbox(mem), BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test", SecretKey: testSecretKey})
	ctx := context.Background()
	ann := servicetest.NewAccount(t, svc, "ann@example.com")
	bob := joinMember(t, svc, mem, ann, "bob@example.com", service.RoleAdmin)
	sOwner, sBob := session(t, svc, service.Owner(ann)), session(t, svc, bob)

	pw, who, err := svc.Accounts.ResetPassword(ctx, "BOB@example.com", "")
	if err != nil || who != bob || len(pw) < 20 {
		t.Fatalf("reset-password: %q %+v %v", pw, who, err)
	}
	if got := liveSessions(t, svc, sOwner, sBob); !got[0] || got[1] {
		t.Fatalf("live sessions (owner, bob): %v", got)
	}
	if _, m, err := svc.Accounts.SignIn(ctx, service.LoginInput{Email: "bob@example.com", Password: pw}); err != nil || m == nil {
		t.Fatalf("the new password: %v", err)
	}
	if _, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: "test-passphrase-9"}); err != nil {
		t.Fatalf("the owner's password changed: %v", err)
	}

	enableTOTP(t, svc, bob, time.Now())
	who, err = svc.Accounts.ResetTOTP(ctx, "bob@example.com")
	if err != nil || who != bob {
		t.Fatalf("reset-2fa: %+v %v", who, err)
	}
	if _, m, _ := svc.Accounts.SignIn(ctx, service.LoginInput{Email: "bob@example.com", Password: pw}); m == nil || m.TwoFactor() || len(m.TOTPPending) != 0 {
		t.Fatal("still on after reset-2fa")
	}
}

// enableTOTP turns two-factor login of w on at now and returns its key.
func enableTOTP(t *testing.T, svc *service.Service, w service.Who, now time.Time) string {
	t.Helper()
	ctx := context.Background()
	st, err := svc.Accounts.BeginTOTP(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := totp.GenerateCode(st.Key, now)
	if _, err := svc.Accounts.EnableTOTP(ctx, w, code, ""); err != nil {
		t.Fatal(err)
	}
	return st.Key
}

// TestMemberTwoFactor: a member turns two-factor login on for itself;
// its login then asks for a code, each code once and never one of an
// earlier step, wrong ones throttled as the owner's; its sealed key does
// not open on another login's row; removing the member deletes it.
func TestMemberTwoFactor(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc, clk := clockedService(t, service.Config{Transport: delivery.NewOutbox(mem), BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test", SecretKey: testSecretKey})
	ctx := context.Background()
	ann := servicetest.NewAccount(t, svc, "ann@example.com")
	bob := joinMember(t, svc, mem, ann, "bob@example.com", service.RoleViewer)
	cat := joinMember(t, svc, mem, ann, "cat@example.com", service.RoleEditor)
	sOwner, sBob, sCat := session(t, svc, service.Owner(ann)), session(t, svc, bob), session(t, svc, cat)

	setup, err := svc.Accounts.BeginTOTP(ctx, bob)
	if err != nil || !strings.HasPrefix(setup.URL, "otpauth://totp/Herald:bob@example.com?") {
		t.Fatalf("set-up: %+v %v", setup, err)
	}
	if again, err := svc.Accounts.PendingTOTP(ctx, bob); err != nil || again.Key != setup.Key {
		t.Fatalf("pending: %v", err)
	}
	if _, err := svc.Accounts.PendingTOTP(ctx, service.Owner(ann)); !service.IsNotFound(err) {
		t.Fatalf("the member's set-up shows on the owner's login: %v", err)
	}
	// Another account's member id names nothing here.
	if _, err := svc.Accounts.BeginTOTP(ctx, service.Who{AccountID: servicetest.NewAccount(t, svc, "zed@example.com"), MemberID: bob.MemberID}); !service.IsNotFound(err) {
		t.Fatalf("another account's member: %v", err)
	}
	code := func(at time.Time) string {
		c, err := totp.GenerateCode(setup.Key, at)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	wrong := func(c string) string {
		b := []byte(c)
		b[0] = '0' + (b[0]-'0'+1)%10
		return string(b)
	}
	if _, err := svc.Accounts.EnableTOTP(ctx, bob, wrong(code(clk.Now())), ""); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("wrong code: %v", err)
	}
	if _, err := svc.Accounts.EnableTOTP(ctx, bob, code(clk.Now()), ""); err != nil {
		t.Fatal(err)
	}
	// Only the member's sessions end.
	if got := liveSessions(t, svc, sOwner, sBob, sCat); !got[0] || got[1] || !got[2] {
		t.Fatalf("live sessions (owner, bob, cat): %v", got)
	}
	if _, err := svc.Accounts.BeginTOTP(ctx, bob); err != service.ErrTOTPOn {
		t.Fatalf("set-up while on: %v", err)
	}

	// The member's login asks for a code; the owner's and Cat's do not.
	u, m, err := svc.Accounts.SignIn(ctx, service.LoginInput{Email: "bob@example.com", Password: memberPassword})
	if err != nil || m == nil || !service.TwoFactorOn(u, m) || service.WhoOf(u, m) != bob {
		t.Fatalf("member login: %v %v", m, err)
	}
	for _, e := range []string{"ann@example.com", "cat@example.com"} {
		pw := memberPassword
		if e == "ann@example.com" {
			pw = "test-passphrase-9"
		}
		if u, m, err := svc.Accounts.SignIn(ctx, service.LoginInput{Email: e, Password: pw}); err != nil || service.TwoFactorOn(u, m) {
			t.Fatalf("%s asks for a code: %v", e, err)
		}
	}
	loginCode := func(w service.Who, c string) error {
		return svc.Accounts.LoginCode(ctx, service.CodeInput{Who: w, Code: c, IP: "203.0.113.9"})
	}
	// The enabling code is used; so is its step.
	if err := loginCode(bob, code(clk.Now())); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("the enabling code again: %v", err)
	}
	clk.Advance(30 * time.Second)
	if err := loginCode(bob, code(clk.Now().Add(-30*time.Second))); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("the enabling step's code: %v", err)
	}
	if err := loginCode(bob, wrong(code(clk.Now()))); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("a wrong code: %v", err)
	}
	if err := loginCode(bob, code(clk.Now())); err != nil {
		t.Fatalf("current code: %v", err)
	}
	if err := loginCode(bob, code(clk.Now())); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("a replayed code: %v", err)
	}
	var steps []int64
	svc.DB.R.Table("members").Where("id = ?", bob.MemberID).Pluck("totp_last_step", &steps)
	if len(steps) != 1 || steps[0] != clk.Now().Unix()/30 {
		t.Fatalf("last step %v", steps)
	}

	// Wrong codes slow the member's address as the owner's (5 free; one
	// above).
	clk.Advance(5 * time.Minute)
	for i := range 5 {
		if err := loginCode(bob, wrong(code(clk.Now()))); service.ErrorCode(err) != service.CodeValidation {
			t.Fatalf("wrong code %d: %v", i+2, err)
		}
	}
	if err := loginCode(bob, code(clk.Now())); service.ErrorCode(err) != service.CodeRateLimited {
		t.Fatalf("after 6 wrong codes: %v", err)
	}
	clk.Advance(time.Minute)

	// The key is sealed for Bob: copied onto Cat's row or the owner's, it
	// does not open (and the copy on Cat's row asks Cat for a code).
	var sealed [][]byte
	svc.DB.R.Table("members").Where("id = ?", bob.MemberID).Pluck("totp_secret", &sealed)
	if len(sealed) != 1 || len(sealed[0]) == 0 || strings.Contains(string(sealed[0]), setup.Key) {
		t.Fatalf("stored %q", sealed)
	}
	svc.DB.W.Exec("UPDATE members SET totp_secret = ? WHERE id = ?", sealed[0], cat.MemberID)
	svc.DB.W.Exec("UPDATE users SET totp_secret = ? WHERE id = ?", sealed[0], ann)
	for _, w := range []service.Who{cat, service.Owner(ann)} {
		if err := loginCode(w, code(clk.Now())); err != service.ErrNoSecretKey {
			t.Fatalf("bob's key on %+v: %v", w, err)
		}
	}
	svc.DB.W.Exec("UPDATE members SET totp_secret = NULL WHERE id = ?", cat.MemberID)
	svc.DB.W.Exec("UPDATE users SET totp_secret = NULL WHERE id = ?", ann)
	if err := loginCode(bob, code(clk.Now())); err != nil {
		t.Fatalf("bob's own code: %v", err)
	}

	// Off with the member's own password, not the owner's.
	if err := svc.Accounts.DisableTOTP(ctx, bob, "test-passphrase-9", ""); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("the owner's password: %v", err)
	}
	if err := svc.Accounts.DisableTOTP(ctx, bob, memberPassword, ""); err != nil {
		t.Fatal(err)
	}
	if u, m, _ := svc.Accounts.SignIn(ctx, service.LoginInput{Email: "bob@example.com", Password: memberPassword}); m == nil || service.TwoFactorOn(u, m) {
		t.Fatal("still on after turning it off")
	}

	// Removing the member deletes its key with it.
	enableTOTP(t, svc, bob, clk.Now())
	if err := svc.Team.Remove(ctx, ann, bob.MemberID); err != nil {
		t.Fatal(err)
	}
	var n int64
	svc.DB.R.Table("members").Where("id = ?", bob.MemberID).Count(&n)
	if n != 0 {
		t.Fatal("the member's row lived on")
	}
	if err := loginCode(bob, code(clk.Now())); !service.IsNotFound(err) {
		t.Fatalf("a removed member's code: %v", err)
	}
	if _, err := svc.Accounts.ResetTOTP(ctx, "bob@example.com"); !service.IsNotFound(err) {
		t.Fatalf("reset-2fa of a removed member: %v", err)
	}
}

// TestLoginChangesAreAudited: turning two-factor login on and off,
// changing a password, resetting one by mail and from the command line
// each write an audit line naming the login's address; a change in the
// console names who made it, a mailed link the login itself, the command
// line no one.
func TestLoginChangesAreAudited(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc, clk := clockedService(t, service.Config{Transport: delivery.NewOutbox(mem), BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test", SecretKey: testSecretKey})
	ann := servicetest.NewAccount(t, svc, "ann@example.com")
	bob := joinMember(t, svc, mem, ann, "bob@example.com", service.RoleEditor)
	asBob := service.WithActor(context.Background(), service.Actor{AccountID: ann, MemberID: bob.MemberID, Role: service.RoleEditor, Name: "bob <bob@example.com>"})

	enableTOTP(t, svc, bob, clk.Now())
	if err := svc.Accounts.DisableTOTP(asBob, bob, memberPassword, ""); err != nil {
		t.Fatal(err)
	}
	if err := svc.Accounts.ChangePassword(asBob, bob, service.PasswordChange{Current: memberPassword, Password: "another-passphrase-8", Confirmation: "another-passphrase-8"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Accounts.RequestPasswordReset(context.Background(), "bob@example.com"); err != nil {
		t.Fatal(err)
	}
	toks := resetTokens(t, mem)
	if _, err := svc.Accounts.FinishPasswordReset(context.Background(), toks[len(toks)-1], service.NewPassword{Password: "third-passphrase-9", Confirmation: "third-passphrase-9"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Accounts.ResetPassword(context.Background(), "ann@example.com", ""); err != nil {
		t.Fatal(err)
	}

	rows, _, err := svc.Audit.List(context.Background(), ann, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(rows) - 1; i >= 0; i-- {
		if r := rows[i]; strings.HasPrefix(r.Action, "login.") {
			got = append(got, service.AuditLabel(r.Action)+"|"+r.Target+"|"+r.Detail+"|"+r.Actor)
		}
	}
	want := []string{
		"Turned two-factor login on|bob@example.com||API key or command line",
		"Made two-factor recovery codes|bob@example.com|10 codes, with two-factor login|API key or command line",
		"Turned two-factor login off|bob@example.com||bob <bob@example.com>",
		"Changed a password|bob@example.com||bob <bob@example.com>",
		"Reset a password|bob@example.com|by mail|bob <bob@example.com>",
		"Reset a password|ann@example.com|from the command line|API key or command line",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
