package service_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/delivery"
	"herald/service"
	"herald/service/servicetest"
)

// clockedService is a service over a fresh database (configured by cfg)
// that reads its time from a clock the test moves (Config.Now).
func clockedService(t *testing.T, cfg service.Config) (*service.Service, *dbtest.Clock) {
	t.Helper()
	c := dbtest.NewClock(time.Now())
	cfg.Now = c.Now
	return dbtest.Service(t, cfg), c
}

func passwordProblem(err error) string {
	if e, ok := err.(*service.Error); ok && len(e.Fields["password"]) > 0 {
		return e.Fields["password"][0]
	}
	return ""
}

func TestPasswordRules(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	const common = "The password is too common. Choose one that is harder to guess."
	for _, tc := range []struct {
		password, want string
	}{
		{"12345678", "The password must be at least 10 characters."},
		{"abcdefgh9", "The password must be at least 10 characters."},
		{"         x", "The password must be at least 10 characters."},
		{"1234567890", common},
		{"password123", common},
		{"PassWord123", common},
		{"QWERTYUIOP", common},
		{strings.Repeat("a", 73), "The password may not be greater than 72 characters."},
		{strings.Repeat("é", 37), "The password may not be greater than 72 bytes (letters outside plain ASCII take 2 to 4)."},
		{strings.Repeat("é", 36), ""},
		{strings.Repeat("a", 72), ""},
		{"test-passphrase-9", ""},
		{"correct horse battery", ""},
	} {
		_, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "N", Email: "n@example.com", Password: tc.password})
		if got := passwordProblem(err); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.password, got, tc.want)
		}
		if err == nil {
			if err := svc.DB.W.Exec("DELETE FROM users").Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	if !service.IsCommonPassword("Letmein123") || service.IsCommonPassword("test-passphrase-9") {
		t.Fatal("IsCommonPassword")
	}
}

func TestCreateRefusesLineBreakInName(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	_, _, err := svc.Accounts.Create(context.Background(), service.AccountInput{Name: "Ann\r\nBcc: x@example.com", Email: "ann@example.com", Password: "test-passphrase-9"})
	if e, _ := err.(*service.Error); e == nil || len(e.Fields["name"]) == 0 || e.Fields["name"][0] != "The name must not contain line breaks." {
		t.Fatalf("got %v", err)
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	svc, clk := clockedService(t, service.Config{})
	ctx := context.Background()
	ann, bob := servicetest.NewAccount(t, svc, "ann@example.com"), servicetest.NewAccount(t, svc, "bob@example.com")
	s := svc.Sessions
	t1, err := s.Start(ctx, ann)
	if err != nil {
		t.Fatal(err)
	}
	t2, _ := s.Start(ctx, ann)
	tb, _ := s.Start(ctx, bob)
	if t1 == t2 || len(t1) < 40 {
		t.Fatalf("tokens %q %q", t1, t2)
	}
	// Only the hash is stored.
	var n int64
	svc.DB.R.Table("sessions").Where("token_hash = ?", []byte(t1)).Count(&n)
	if n != 0 {
		t.Fatal("the token is stored as it is")
	}
	if row, err := s.Check(ctx, t1); err != nil || row.UserID != ann {
		t.Fatalf("check: %+v %v", row, err)
	}
	for _, bad := range []string{"", "nope", t1 + "x"} {
		if _, err := s.Check(ctx, bad); !service.IsNotFound(err) {
			t.Fatalf("check %q: %v", bad, err)
		}
	}
	if list, _ := s.List(ctx, ann); len(list) != 2 {
		t.Fatalf("ann's sessions: %d", len(list))
	}

	// Last use is written at most once a minute.
	clk.Advance(30 * time.Second)
	row, _ := s.Check(ctx, t1)
	if row.LastUsedAt != row.StartedAt {
		t.Fatal("last use written within the minute")
	}
	clk.Advance(31 * time.Second)
	if row, _ = s.Check(ctx, t1); row.LastUsedAt == row.StartedAt {
		t.Fatal("last use not written after a minute")
	}

	if err := s.End(ctx, t1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Check(ctx, t1); !service.IsNotFound(err) {
		t.Fatalf("ended session: %v", err)
	}
	if _, err := s.Check(ctx, tb); err != nil {
		t.Fatalf("another account's session ended: %v", err)
	}

	// Idle: 24 hours without use.
	t3, _ := s.Start(ctx, ann)
	clk.Advance(service.SessionIdle - time.Minute)
	if _, err := s.Check(ctx, t3); err != nil {
		t.Fatalf("used within a day: %v", err)
	}
	clk.Advance(service.SessionIdle)
	if _, err := s.Check(ctx, t3); !service.IsNotFound(err) {
		t.Fatalf("idle a day: %v", err)
	}
	// Absolute: 7 days after login, however used.
	t4, _ := s.Start(ctx, ann)
	for range 7 {
		clk.Advance(service.SessionLifetime/7 - time.Minute)
		if _, err := s.Check(ctx, t4); err != nil {
			t.Fatalf("within the week: %v", err)
		}
	}
	clk.Advance(7 * time.Minute)
	if _, err := s.Check(ctx, t4); !service.IsNotFound(err) {
		t.Fatalf("after a week: %v", err)
	}
	// Expired rows are swept at the next login.
	s.Start(ctx, ann)
	svc.DB.R.Table("sessions").Count(&n)
	if n != 1 {
		t.Fatalf("%d rows after the sweep, want 1", n)
	}
}

func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	svc, clk := clockedService(t, service.Config{})
	ctx := context.Background()
	servicetest.NewAccount(t, svc, "ann@example.com")
	login := func(ip, password string, known bool) error {
		_, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: password, IP: ip, Known: known})
		return err
	}
	// The address: 5 failures free, then 1 s doubling to the 1 minute cap,
	// from ever-changing IPs.
	var waits []time.Duration
	for i := 0; i < 14; {
		err := login("203.0.113."+strconv.Itoa(i+1), "wrong-password", false)
		switch service.ErrorCode(err) {
		case service.CodeValidation:
			i++
		case service.CodeRateLimited:
			d := service.RetryAfter(err)
			waits = append(waits, d)
			clk.Advance(d)
		default:
			t.Fatal(err)
		}
	}
	if got, want := fmt.Sprint(waits), "[1s 2s 4s 8s 16s 32s 1m0s 1m0s]"; got != want {
		t.Fatalf("waits %s, want %s", got, want)
	}
	// While the delay runs even the right password is refused, and such
	// refusals do not count as failures…
	for range 5 {
		if err := login("198.51.100.1", "test-passphrase-9", false); service.ErrorCode(err) != service.CodeRateLimited {
			t.Fatalf("during the delay: %v", err)
		}
	}
	// …but a browser that logged in to the address before gets through.
	if err := login("198.51.100.1", "test-passphrase-9", true); err != nil {
		t.Fatalf("known browser: %v", err)
	}
	// The success cleared the address: the next failure costs nothing.
	if err := login("198.51.100.1", "wrong-password", false); service.ErrorCode(err) != service.CodeValidation {
		t.Fatal(err)
	}
	if err := login("198.51.100.1", "test-passphrase-9", false); err != nil {
		t.Fatalf("after the clear: %v", err)
	}

	// Forgotten after 15 quiet minutes.
	for i := range 6 {
		login("192.0.2."+strconv.Itoa(i+1), "wrong-password", false)
	}
	if err := login("198.51.100.1", "test-passphrase-9", false); service.ErrorCode(err) != service.CodeRateLimited {
		t.Fatalf("after 6 failures: %v", err)
	}
	clk.Advance(15*time.Minute + time.Second)
	if err := login("198.51.100.1", "wrong-password", false); service.ErrorCode(err) != service.CodeValidation {
		t.Fatal(err)
	}
	if err := login("198.51.100.1", "test-passphrase-9", false); err != nil {
		t.Fatalf("after a quiet quarter hour: %v", err)
	}

	// The IP: 10 failures free (over any addresses), then growing, capped
	// at 15 minutes; a success does not clear it. IPv6 clients count by /64.
	for i := range 10 {
		svc.Accounts.Login(ctx, service.LoginInput{Email: "x" + strconv.Itoa(i) + "@example.com", Password: "p", IP: "2001:db8:1:2::" + strconv.Itoa(i+1)})
	}
	svc.Accounts.Login(ctx, service.LoginInput{Email: "y@example.com", Password: "p", IP: "2001:db8:1:2:ffff::1"})
	err := login("2001:db8:1:2::abcd", "test-passphrase-9", true)
	if service.ErrorCode(err) != service.CodeRateLimited || service.RetryAfter(err) != time.Second {
		t.Fatalf("11th failure of the /64: %v %v", err, service.RetryAfter(err))
	}
	if err := login("2001:db8:1:3::1", "test-passphrase-9", true); err != nil {
		t.Fatalf("another /64: %v", err)
	}
}

func TestChangePassword(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	ann := servicetest.NewAccount(t, svc, "ann@example.com")
	bob := servicetest.NewAccount(t, svc, "bob@example.com")
	t1, _ := svc.Sessions.Start(ctx, ann)
	tb, _ := svc.Sessions.Start(ctx, bob)
	err := svc.Accounts.ChangePassword(ctx, service.Owner(ann), service.PasswordChange{Current: "wrong-password", Password: "1234567890", Confirmation: "x"})
	e, _ := err.(*service.Error)
	if e == nil || e.Fields["current_password"][0] != "The current password is incorrect." ||
		e.Fields["password"][0] != "The password is too common. Choose one that is harder to guess." {
		t.Fatalf("got %v", err)
	}
	if _, err := svc.Sessions.Check(ctx, t1); err != nil {
		t.Fatalf("a refused change ended the session: %v", err)
	}
	if err := svc.Accounts.ChangePassword(ctx, service.Owner(ann), service.PasswordChange{Current: "test-passphrase-9", Password: "another-passphrase-3", Confirmation: "another-passphrase-3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Sessions.Check(ctx, t1); !service.IsNotFound(err) {
		t.Fatalf("session after the change: %v", err)
	}
	if _, err := svc.Sessions.Check(ctx, tb); err != nil {
		t.Fatalf("another account's session: %v", err)
	}
	if _, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: "another-passphrase-3"}); err != nil {
		t.Fatal(err)
	}
}

func TestSignUp(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc, clk := clockedService(t, service.Config{Transport: delivery.NewOutbox(mem), BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test"})
	ctx := context.Background()

	// Validation is the form's, as Create's.
	if _, err := svc.Accounts.SignUp(ctx, service.AccountInput{Name: "A", Email: "a@example.com", Password: "12345678"}); passwordProblem(err) == "" {
		t.Fatalf("short password: %v", err)
	}
	// The first account of the database: at once, no mail.
	res, err := svc.Accounts.SignUp(ctx, service.AccountInput{Name: "Ann", Email: "Ann@example.com", Password: "test-passphrase-9"})
	if err != nil || res.User == nil || res.Keys.SecretKey == "" || len(mem.Messages()) != 0 {
		t.Fatalf("first: %+v %v", res, err)
	}
	// Later ones: a mail, no account yet; for a taken address the same
	// answer and a notice.
	for _, email := range []string{"bob@example.com", "ANN@example.com"} {
		res, err := svc.Accounts.SignUp(ctx, service.AccountInput{Name: "Bob", Email: email, Password: "test-passphrase-9"})
		if err != nil || res.User != nil || res.Email != strings.ToLower(email) {
			t.Fatalf("%s: %+v %v", email, res, err)
		}
	}
	if n := len(mem.Messages()); n != 2 {
		t.Fatalf("%d mails", n)
	}
	var count int64
	svc.DB.R.Table("pending_signups").Count(&count)
	if count != 1 {
		t.Fatalf("%d pending sign-ups, want 1 (none for the taken address)", count)
	}
	if _, err := svc.Accounts.ByEmail(ctx, "bob@example.com"); !service.IsNotFound(err) {
		t.Fatalf("bob before the link: %v", err)
	}
	if _, _, err := svc.Accounts.FinishSignUp(ctx, "not-a-token"); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("unknown token: %v", err)
	}
	// Expired links open nothing (a second sign-up mails a new one).
	clk.Advance(service.SignupLinkTTL - time.Second)
	if _, err := svc.Accounts.SignUp(ctx, service.AccountInput{Name: "Bob", Email: "bob@example.com", Password: "bobs-passphrase-1"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	svc.DB.R.Table("pending_signups").Count(&count)
	if count != 2 {
		t.Fatalf("%d pending sign-ups, want 2", count)
	}
	// The first link's row is expired: only the second works.
	tokens := linkTokens(t, mem)
	if len(tokens) != 2 {
		t.Fatalf("links: %v", tokens)
	}
	if _, _, err := svc.Accounts.FinishSignUp(ctx, tokens[0]); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("expired link: %v", err)
	}
	u, keys, err := svc.Accounts.FinishSignUp(ctx, tokens[1])
	if err != nil || u.Email != "bob@example.com" || keys.SecretKey == "" {
		t.Fatalf("finish: %+v %v", u, err)
	}
	if _, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "bob@example.com", Password: "bobs-passphrase-1"}); err != nil {
		t.Fatalf("login with the signed-up password: %v", err)
	}
	if _, _, err := svc.Accounts.FinishSignUp(ctx, tokens[1]); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("the link twice: %v", err)
	}
	svc.DB.R.Table("pending_signups").Count(&count)
	if count != 0 {
		t.Fatalf("%d pending sign-ups left", count)
	}
}

// linkTokens are the tokens of the sign-up links mailed, in order.
func linkTokens(t *testing.T, mem *delivery.MemoryOutbox) []string {
	t.Helper()
	var out []string
	for _, m := range mem.Messages() {
		body := strings.ReplaceAll(string(m.Data), "=\r\n", "")
		i := strings.Index(body, "/signup/confirm/")
		if i < 0 {
			continue
		}
		tok := body[i+len("/signup/confirm/"):]
		end := strings.IndexFunc(tok, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
		})
		out = append(out, tok[:end])
	}
	return out
}
