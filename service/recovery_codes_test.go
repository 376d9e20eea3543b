package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"herald/delivery"
	"herald/service"
	"herald/service/servicetest"
)

// enableWithCodes turns two-factor login of w on at now and returns its
// key and the recovery codes shown.
func enableWithCodes(t *testing.T, svc *service.Service, w service.Who, now time.Time) (string, []string) {
	t.Helper()
	ctx := context.Background()
	st, err := svc.Accounts.BeginTOTP(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := totp.GenerateCode(st.Key, now)
	codes, err := svc.Accounts.EnableTOTP(ctx, w, code, "")
	if err != nil {
		t.Fatal(err)
	}
	return st.Key, codes
}

// TestRecoveryCodes: turning two-factor login on makes ten distinct
// codes; each logs in once in place of an authenticator's code (typed in
// upper case or without its dash too); a used, an unknown or another
// login's code gets the same answer as a wrong code; the table holds no
// code in clear; new codes (given the password or a current code) void
// the old ones; turning two-factor login off deletes them; the audit log
// has their making and each use.
func TestRecoveryCodes(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc, clk := clockedService(t, service.Config{Transport: delivery.NewOutbox(mem), BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test", SecretKey: testSecretKey})
	ctx := context.Background()
	ann := servicetest.NewAccount(t, svc, "ann@example.com")
	owner := service.Owner(ann)
	bob := joinMember(t, svc, mem, ann, "bob@example.com", service.RoleEditor)
	const pw = "test-passphrase-9"

	key, codes := enableWithCodes(t, svc, owner, clk.Now())
	if len(codes) != service.RecoveryCodeCount {
		t.Fatalf("%d codes, want %d", len(codes), service.RecoveryCodeCount)
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if len(c) != 11 || c[5] != '-' || seen[c] {
			t.Fatalf("code %q of %v", c, codes)
		}
		seen[c] = true
	}
	left := func(w service.Who) int {
		t.Helper()
		n, err := svc.Accounts.RecoveryCodesLeft(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := left(owner); n != 10 {
		t.Fatalf("left %d", n)
	}

	// Hashed at rest: no row holds a code, with or without its dash.
	var stored [][]byte
	if err := svc.DB.R.Table("recovery_codes").Where("user_id = ?", ann).Pluck("code_hash", &stored).Error; err != nil {
		t.Fatal(err)
	}
	if len(stored) != 10 {
		t.Fatalf("%d rows", len(stored))
	}
	dump := make([]string, len(stored))
	for i, h := range stored {
		dump[i] = string(h)
	}
	for _, c := range codes {
		for _, form := range []string{c, strings.ReplaceAll(c, "-", ""), strings.ToUpper(c)} {
			for _, h := range dump {
				if strings.Contains(h, form) {
					t.Fatalf("code %q stored in clear", c)
				}
			}
		}
	}

	login := func(w service.Who, c string) error {
		return svc.Accounts.LoginCode(ctx, service.CodeInput{Who: w, Code: c, IP: "203.0.113.9"})
	}
	wrongMsg := func(err error) string {
		t.Helper()
		if service.ErrorCode(err) != service.CodeValidation {
			t.Fatalf("want a validation error, got %v", err)
		}
		return err.Error()
	}
	// The reference answer: a wrong authenticator code.
	good, _ := totp.GenerateCode(key, clk.Now())
	b := []byte(good)
	b[0] = '0' + (b[0]-'0'+1)%10
	want := wrongMsg(login(owner, string(b)))

	// One code, once; typed in upper case without its dash.
	if err := login(owner, strings.ToUpper(strings.ReplaceAll(codes[0], "-", ""))); err != nil {
		t.Fatalf("a recovery code: %v", err)
	}
	if n := left(owner); n != 9 {
		t.Fatalf("left after one use: %d", n)
	}
	if got := wrongMsg(login(owner, codes[0])); got != want {
		t.Fatalf("a used code: %q, want the wrong code's %q", got, want)
	}
	if got := wrongMsg(login(owner, "abcde-fghjk")); got != want {
		t.Fatalf("an unknown code: %q, want %q", got, want)
	}
	// Another login's codes do not open this one.
	_, bobCodes := enableWithCodes(t, svc, bob, clk.Now())
	if got := wrongMsg(login(owner, bobCodes[0])); got != want {
		t.Fatalf("the member's code on the owner: %q", got)
	}
	if err := login(bob, bobCodes[0]); err != nil {
		t.Fatalf("the member's own code: %v", err)
	}
	// Two uses of one code at once: one wins.
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- login(owner, codes[1]) }()
	}
	won := 0
	for range 2 {
		if err := <-errs; err == nil {
			won++
		} else if service.ErrorCode(err) != service.CodeValidation {
			t.Fatalf("race: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d logins with one code", won)
	}

	// New codes: a wrong password is refused and changes nothing; the
	// password (or a current code) replaces every code.
	if _, err := svc.Accounts.NewRecoveryCodes(ctx, owner, "wrong-password", ""); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("wrong password: %v", err)
	}
	if n := left(owner); n != 8 {
		t.Fatalf("left after a refused renewal: %d", n)
	}
	fresh, err := svc.Accounts.NewRecoveryCodes(ctx, owner, pw, "")
	if err != nil || len(fresh) != 10 {
		t.Fatalf("new codes: %v %v", fresh, err)
	}
	if n := left(owner); n != 10 {
		t.Fatalf("left after renewal: %d", n)
	}
	if got := wrongMsg(login(owner, codes[2])); got != want {
		t.Fatalf("an old unused code after renewal: %q", got)
	}
	clk.Advance(time.Minute)
	now, _ := totp.GenerateCode(key, clk.Now())
	again, err := svc.Accounts.NewRecoveryCodes(ctx, owner, now, "")
	if err != nil || len(again) != 10 {
		t.Fatalf("new codes with a current code: %v", err)
	}
	if _, err := svc.Accounts.NewRecoveryCodes(ctx, owner, now, ""); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("the same authenticator code twice: %v", err)
	}
	if err := login(owner, fresh[0]); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("a code of the voided set: %v", err)
	}
	if err := login(owner, again[0]); err != nil {
		t.Fatalf("a code of the last set: %v", err)
	}
	// The member's codes were left alone by the owner's renewals.
	if n := left(bob); n != 9 {
		t.Fatalf("member's codes left: %d", n)
	}

	// Wrong recovery codes are throttled as wrong codes: after the free
	// tries, even a right one waits (the IP's earlier failures forgotten
	// first: an hour without one).
	clk.Advance(2 * time.Hour)
	for i := range 6 {
		if err := login(owner, "zzzzz-zzzz"+string(rune('0'+i))); service.ErrorCode(err) != service.CodeValidation {
			t.Fatalf("wrong recovery code %d: %v", i+1, err)
		}
	}
	if err := login(owner, again[1]); service.ErrorCode(err) != service.CodeRateLimited {
		t.Fatalf("after 6 wrong recovery codes: %v", err)
	}
	if n := left(owner); n != 9 {
		t.Fatalf("a refused try used a code: %d left", n)
	}

	// The audit log: made (on, renewal twice) and each use.
	entries, _, err := svc.Audit.List(ctx, ann, 1)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range entries {
		count[e.Action]++
	}
	if count["login.recovery_codes_made"] != 4 || count["login.recovery_code_used"] != 4 {
		t.Fatalf("audit: %v", count)
	}

	// Off: the codes go, with the key.
	clk.Advance(time.Second) // the address's delay
	if err := svc.Accounts.DisableTOTP(ctx, owner, pw, ""); err != nil {
		t.Fatal(err)
	}
	var n int64
	svc.DB.R.Table("recovery_codes").Where("user_id = ? AND member_id = 0", ann).Count(&n)
	if n != 0 {
		t.Fatalf("%d codes after turning off", n)
	}
	if _, err := svc.Accounts.NewRecoveryCodes(ctx, owner, pw, ""); err != service.ErrTOTPOff {
		t.Fatalf("new codes while off: %v", err)
	}
	// Removing the member deletes its codes.
	if err := svc.Team.Remove(ctx, ann, bob.MemberID); err != nil {
		t.Fatal(err)
	}
	svc.DB.R.Table("recovery_codes").Where("user_id = ?", ann).Count(&n)
	if n != 0 {
		t.Fatalf("%d codes after removing the member", n)
	}
}
