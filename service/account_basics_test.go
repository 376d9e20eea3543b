package service_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"herald/dbtest"
	"herald/delivery"
	"herald/service"
	"herald/service/servicetest"
)

const testSecretKey = "a-test-secret-key-of-at-least-32-characters"

func TestSignupClosed(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t, service.Config{SignupClosed: true})
	ctx := context.Background()
	if svc.Accounts.SignupOpen() {
		t.Fatal("SignupOpen with HERALD_SIGNUP=off")
	}
	// Even the first account of the server: only the command line opens it.
	in := service.AccountInput{Name: "Ann", Email: "ann@example.com", Password: "test-passphrase-9"}
	if _, err := svc.Accounts.SignUp(ctx, in); service.ErrorCode(err) != service.CodeForbidden {
		t.Fatalf("sign-up: %v", err)
	}
	if _, err := svc.Accounts.PendingSignUp(ctx, "x"); service.ErrorCode(err) != service.CodeForbidden {
		t.Fatalf("pending: %v", err)
	}
	if _, _, err := svc.Accounts.FinishSignUp(ctx, "x"); service.ErrorCode(err) != service.CodeForbidden {
		t.Fatalf("finish: %v", err)
	}
	if _, _, err := svc.Accounts.Create(ctx, in); err != nil {
		t.Fatalf("create: %v", err)
	}
	if open := dbtest.Service(t); !open.Accounts.SignupOpen() {
		t.Fatal("sign-up closed by default")
	}
}

func TestResetPasswordCommand(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	ann := servicetest.NewAccount(t, svc, "ann@example.com")
	bob := servicetest.NewAccount(t, svc, "bob@example.com")
	s1, _ := svc.Sessions.Start(ctx, ann)
	s2, _ := svc.Sessions.Start(ctx, ann)
	sb, _ := svc.Sessions.Start(ctx, bob)

	if _, _, err := svc.Accounts.ResetPassword(ctx, "nobody@example.com", ""); !service.IsNotFound(err) {
		t.Fatalf("unknown address: %v", err)
	}
	if _, _, err := svc.Accounts.ResetPassword(ctx, "ann@example.com", "1234567890"); passwordProblem(err) == "" {
		t.Fatalf("common password: %v", err)
	}
	if _, err := svc.Sessions.Check(ctx, s1); err != nil {
		t.Fatalf("a refused reset ended a session: %v", err)
	}
	got, _, err := svc.Accounts.ResetPassword(ctx, "ANN@example.com", "chosen-passphrase-4")
	if err != nil || got != "chosen-passphrase-4" {
		t.Fatalf("given password: %q %v", got, err)
	}
	for _, s := range []string{s1, s2} {
		if _, err := svc.Sessions.Check(ctx, s); !service.IsNotFound(err) {
			t.Fatalf("a session of the account lived on: %v", err)
		}
	}
	if _, err := svc.Sessions.Check(ctx, sb); err != nil {
		t.Fatalf("another account's session ended: %v", err)
	}
	if _, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: "chosen-passphrase-4"}); err != nil {
		t.Fatal(err)
	}
	// A random one, different each time, that logs in.
	r1, _, err := svc.Accounts.ResetPassword(ctx, "ann@example.com", "")
	if err != nil || len(r1) < 20 {
		t.Fatalf("random: %q %v", r1, err)
	}
	r2, _, _ := svc.Accounts.ResetPassword(ctx, "ann@example.com", "")
	if r1 == r2 {
		t.Fatal("the same random password twice")
	}
	if _, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: r1}); err == nil {
		t.Fatal("the replaced random password still logs in")
	}
	if _, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: r2}); err != nil {
		t.Fatal(err)
	}
}

// resetTokens are the tokens of the reset links mailed, in order.
func resetTokens(t *testing.T, mem *delivery.MemoryOutbox) []string {
	t.Helper()
	var out []string
	for _, m := range mem.Messages() {
		body := strings.ReplaceAll(string(m.Data), "=\r\n", "")
		i := strings.Index(body, "/reset/")
		if i < 0 {
			continue
		}
		tok := body[i+len("/reset/"):]
		end := strings.IndexFunc(tok, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
		})
		out = append(out, tok[:end])
	}
	return out
}

func TestPasswordResetByMail(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc, clk := clockedService(t, service.Config{Transport: delivery.NewOutbox(mem), BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test"})
	ctx := context.Background()
	ann := servicetest.NewAccount(t, svc, "ann@example.com")
	s1, _ := svc.Sessions.Start(ctx, ann)

	if err := svc.Accounts.RequestPasswordReset(ctx, "not an address"); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("malformed: %v", err)
	}
	// The same answer for a free and a taken address; the account gets a
	// link, the free address a notice without one.
	for _, e := range []string{"nobody@example.com", "Ann@example.com"} {
		if err := svc.Accounts.RequestPasswordReset(ctx, e); err != nil {
			t.Fatalf("%s: %v", e, err)
		}
	}
	msgs := mem.Messages()
	if len(msgs) != 2 || msgs[0].To[0] != "nobody@example.com" || msgs[1].To[0] != "ann@example.com" {
		t.Fatalf("mails: %+v", msgs)
	}
	if body := string(msgs[0].Data); strings.Contains(body, "/reset/") || !strings.Contains(body, "no account uses this address") {
		t.Fatalf("notice:\n%s", body)
	}
	var rows int64
	svc.DB.R.Table("password_resets").Count(&rows)
	if rows != 1 {
		t.Fatalf("%d reset rows, want 1", rows)
	}
	tokens := resetTokens(t, mem)
	if len(tokens) != 1 || len(tokens[0]) != 43 {
		t.Fatalf("tokens %v", tokens)
	}
	tok := tokens[0]
	// Only the token's hash is stored.
	var stored [][]byte
	svc.DB.R.Table("password_resets").Pluck("token_hash", &stored)
	sum := sha256.Sum256([]byte(tok))
	if len(stored) != 1 || !bytes.Equal(stored[0], sum[:]) || bytes.Contains(stored[0], []byte(tok)) {
		t.Fatalf("stored %x", stored)
	}

	// Opening the link changes nothing: it works again, the password and
	// the session are as they were.
	for range 2 {
		if e, err := svc.Accounts.PasswordReset(ctx, tok); err != nil || e != "ann@example.com" {
			t.Fatalf("open: %q %v", e, err)
		}
	}
	if _, err := svc.Sessions.Check(ctx, s1); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Accounts.PasswordReset(ctx, "not-a-token"); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("unknown token: %v", err)
	}
	// The form: validation first, the link still works after it.
	_, err := svc.Accounts.FinishPasswordReset(ctx, tok, service.NewPassword{Password: "new-passphrase-5", Confirmation: "other"})
	if e, _ := err.(*service.Error); e == nil || len(e.Fields["password_confirmation"]) == 0 {
		t.Fatalf("mismatch: %v", err)
	}
	who, err := svc.Accounts.FinishPasswordReset(ctx, tok, service.NewPassword{Password: "new-passphrase-5", Confirmation: "new-passphrase-5"})
	if err != nil || who != service.Owner(ann) {
		t.Fatalf("finish: %v", err)
	}
	if _, err := svc.Sessions.Check(ctx, s1); !service.IsNotFound(err) {
		t.Fatalf("session after the reset: %v", err)
	}
	if _, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: "new-passphrase-5"}); err != nil {
		t.Fatal(err)
	}
	// Once.
	if _, err := svc.Accounts.FinishPasswordReset(ctx, tok, service.NewPassword{Password: "third-passphrase-6", Confirmation: "third-passphrase-6"}); err != service.ErrResetLink {
		t.Fatalf("twice: %v", err)
	}
	if _, err := svc.Accounts.PasswordReset(ctx, tok); err != service.ErrResetLink {
		t.Fatalf("open after use: %v", err)
	}

	// An hour.
	if err := svc.Accounts.RequestPasswordReset(ctx, "ann@example.com"); err != nil {
		t.Fatal(err)
	}
	tokens = resetTokens(t, mem)
	late := tokens[len(tokens)-1]
	clk.Advance(service.ResetLinkTTL - time.Second)
	if _, err := svc.Accounts.PasswordReset(ctx, late); err != nil {
		t.Fatalf("just before the hour: %v", err)
	}
	clk.Advance(time.Second)
	if _, err := svc.Accounts.FinishPasswordReset(ctx, late, service.NewPassword{Password: "third-passphrase-6", Confirmation: "third-passphrase-6"}); err != service.ErrResetLink {
		t.Fatalf("after the hour: %v", err)
	}

	// Throttled as sign-up mails: three to one address at once (two were
	// sent above), then nothing for 10 minutes, with the same answer.
	if err := svc.Accounts.RequestPasswordReset(ctx, "ann@example.com"); err != nil {
		t.Fatal(err)
	}
	before := len(mem.Messages())
	for range 3 {
		if err := svc.Accounts.RequestPasswordReset(ctx, "ann@example.com"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(mem.Messages()); n != before {
		t.Fatalf("%d mails beyond the throttle", n-before)
	}
	clk.Advance(10*time.Minute + time.Second)
	if err := svc.Accounts.RequestPasswordReset(ctx, "ann@example.com"); err != nil {
		t.Fatal(err)
	}
	if n := len(mem.Messages()); n != before+1 {
		t.Fatalf("after the wait: %d new mails, want 1", n-before)
	}
}

func TestTwoFactor(t *testing.T) {
	t.Parallel()
	svc, clk := clockedService(t, service.Config{SecretKey: testSecretKey})
	ctx := context.Background()
	ann := servicetest.NewAccount(t, svc, "ann@example.com")
	const pw = "test-passphrase-9"

	if !svc.Accounts.TwoFactorAvailable() {
		t.Fatal("not available with a key")
	}
	if _, err := svc.Accounts.PendingTOTP(ctx, service.Owner(ann)); !service.IsNotFound(err) {
		t.Fatalf("pending before set-up: %v", err)
	}
	setup, err := svc.Accounts.BeginTOTP(ctx, service.Owner(ann))
	if err != nil || len(setup.Key) < 16 || !strings.HasPrefix(setup.URL, "otpauth://totp/Herald:ann@example.com?") ||
		!bytes.HasPrefix(setup.PNG, []byte("\x89PNG")) {
		t.Fatalf("set-up: %+v %v", setup, err)
	}
	again, err := svc.Accounts.PendingTOTP(ctx, service.Owner(ann))
	if err != nil || again.Key != setup.Key {
		t.Fatalf("pending: %+v %v", again, err)
	}
	// Not on before a code checks.
	if u, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: pw}); err != nil || u.TwoFactor() {
		t.Fatalf("on before a code: %v", err)
	}
	code := func(at time.Time) string {
		c, err := totp.GenerateCode(setup.Key, at)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	wrong := func(c string) string { // another six digits
		b := []byte(c)
		b[0] = '0' + (b[0]-'0'+1)%10
		return string(b)
	}
	if _, err := svc.Accounts.EnableTOTP(ctx, service.Owner(ann), wrong(code(clk.Now())), ""); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("wrong code: %v", err)
	}
	before, _ := svc.Sessions.Start(ctx, ann)
	if _, err := svc.Accounts.EnableTOTP(ctx, service.Owner(ann), code(clk.Now()), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Sessions.Check(ctx, before); !service.IsNotFound(err) {
		t.Fatalf("a session opened with the password alone lived on: %v", err)
	}
	if _, err := svc.Accounts.BeginTOTP(ctx, service.Owner(ann)); err != service.ErrTOTPOn {
		t.Fatalf("set-up while on: %v", err)
	}

	// The secret is not in the database in plain text.
	var sealed []byte
	svc.DB.R.Table("users").Where("id = ?", ann).Pluck("totp_secret", &sealed)
	if len(sealed) == 0 || bytes.Contains(sealed, []byte(setup.Key)) {
		t.Fatalf("stored %q", sealed)
	}

	// Login: the password, then a code.
	u, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: pw})
	if err != nil || !u.TwoFactor() {
		t.Fatalf("login: %v", err)
	}
	loginCode := func(c string) error {
		return svc.Accounts.LoginCode(ctx, service.CodeInput{Who: service.Owner(ann), Code: c, IP: "203.0.113.9"})
	}
	// The code that turned it on was used: not again, and the same for the
	// code of the step before it.
	if err := loginCode(code(clk.Now())); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("the enabling code again: %v", err)
	}
	clk.Advance(30 * time.Second)
	if err := loginCode(code(clk.Now().Add(-60 * time.Second))); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("a code two steps old: %v", err)
	}
	// One step of drift: the previous step's code, once.
	if err := loginCode(code(clk.Now().Add(-30 * time.Second))); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("the enabling step's code: %v", err)
	}
	if err := loginCode(" " + code(clk.Now()) + " "); err != nil {
		t.Fatalf("current code: %v", err)
	}
	if err := loginCode(code(clk.Now())); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("the same code twice: %v", err)
	}
	if err := loginCode(code(clk.Now().Add(30 * time.Second))); err != nil {
		t.Fatalf("next step's code (drift): %v", err)
	}
	clk.Advance(90 * time.Second)
	if err := loginCode(code(clk.Now().Add(-30 * time.Second))); err != nil {
		t.Fatalf("previous step's code (drift): %v", err)
	}

	// Wrong codes slow the address down as failed logins do (5 free). A
	// right password meanwhile does not clear the delay.
	clk.Advance(5 * time.Minute)
	for i := range 5 {
		if err := loginCode(wrong(code(clk.Now()))); service.ErrorCode(err) != service.CodeValidation {
			t.Fatalf("wrong code %d: %v", i+1, err)
		}
		if _, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: pw, IP: "198.51.100.7"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := loginCode(wrong(code(clk.Now()))); service.ErrorCode(err) != service.CodeValidation {
		t.Fatal(err)
	}
	err = loginCode(code(clk.Now()))
	if service.ErrorCode(err) != service.CodeRateLimited || service.RetryAfter(err) != time.Second {
		t.Fatalf("after 6 wrong codes: %v", err)
	}
	clk.Advance(time.Second)
	if err := loginCode(code(clk.Now())); err != nil {
		t.Fatalf("after the delay: %v", err)
	}

	// A server with another key (or none) cannot check codes.
	other, err := service.New(svc.DB, service.Config{SecretKey: "another-secret-key-of-32-characters-or-more"})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	if err := other.Accounts.LoginCode(ctx, service.CodeInput{Who: service.Owner(ann), Code: code(clk.Now())}); err != service.ErrNoSecretKey {
		t.Fatalf("another key: %v", err)
	}
	none := dbtest.Service(t)
	if none.Accounts.TwoFactorAvailable() {
		t.Fatal("available without a key")
	}
	if _, err := none.Accounts.BeginTOTP(ctx, service.Owner(servicetest.NewAccount(t, none, "z@example.com"))); err != service.ErrNoSecretKey {
		t.Fatalf("set-up without a key: %v", err)
	}

	// Off with the password; a wrong one counts as a failure.
	err = svc.Accounts.DisableTOTP(ctx, service.Owner(ann), "wrong-password", "")
	if e, _ := err.(*service.Error); e == nil || len(e.Fields["current_password"]) == 0 {
		t.Fatalf("wrong password: %v", err)
	}
	if err := svc.Accounts.DisableTOTP(ctx, service.Owner(ann), pw, ""); err != nil {
		t.Fatal(err)
	}
	if u, _ := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: pw}); u == nil || u.TwoFactor() {
		t.Fatal("still on after turning it off")
	}
	// And from the command line, for a lost phone.
	if _, err := svc.Accounts.BeginTOTP(ctx, service.Owner(ann)); err != nil {
		t.Fatal(err)
	}
	p, _ := svc.Accounts.PendingTOTP(ctx, service.Owner(ann))
	c, _ := totp.GenerateCode(p.Key, clk.Now())
	if _, err := svc.Accounts.EnableTOTP(ctx, service.Owner(ann), c, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Accounts.ResetTOTP(ctx, "ann@example.com"); err != nil {
		t.Fatal(err)
	}
	if u, _ := svc.Accounts.Get(ctx, ann); u.TwoFactor() || len(u.TOTPPending) != 0 {
		t.Fatal("still on after reset-2fa")
	}
	if _, err := svc.Accounts.ResetTOTP(ctx, "nobody@example.com"); !service.IsNotFound(err) {
		t.Fatalf("unknown address: %v", err)
	}
}
