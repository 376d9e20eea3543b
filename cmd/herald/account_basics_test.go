package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"herald/dbtest"
	"herald/service"
)

func TestConfigAccountBasics(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(envFrom(map[string]string{}))
	if err != nil || !cfg.Signup || cfg.SecretKey != "" {
		t.Fatalf("defaults: signup %v, key %q, %v", cfg.Signup, cfg.SecretKey, err)
	}
	for _, v := range []string{"off", "OFF", "0", "false"} {
		if cfg, err := loadConfig(envFrom(map[string]string{"HERALD_SIGNUP": v})); err != nil || cfg.Signup {
			t.Fatalf("HERALD_SIGNUP=%s: %v %v", v, cfg.Signup, err)
		}
	}
	for _, bad := range []map[string]string{{"HERALD_SIGNUP": "closed"}, {"HERALD_SECRET_KEY": "too-short"}} {
		if _, err := loadConfig(envFrom(bad)); err == nil {
			t.Fatalf("accepted %v", bad)
		}
	}
	key := strings.Repeat("k", 32)
	if cfg, err := loadConfig(envFrom(map[string]string{"HERALD_SECRET_KEY": key})); err != nil || cfg.SecretKey != key {
		t.Fatalf("key: %v", err)
	}
}

func TestAccountResetCommands(t *testing.T) {
	t.Parallel()
	dsn := dbtest.DSN(t)
	env := envFrom(map[string]string{"HERALD_DATABASE": dsn, "HERALD_LOG_LEVEL": "error"})
	ctx := context.Background()
	if err := run(ctx, []string{"herald", "account", "create", "--email", "ann@example.com", "--password", "test-passphrase-9", "--name", "Ann"}, env, io.Discard); err != nil {
		t.Fatal(err)
	}
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := newService(t, db, service.Config{SecretKey: strings.Repeat("k", 32)})
	u, _ := svc.Accounts.ByEmail(ctx, "ann@example.com")
	session, _ := svc.Sessions.Start(ctx, u.ID)

	// A chosen password.
	var out bytes.Buffer
	if err := run(ctx, []string{"herald", "account", "reset-password", "--email", "ann@example.com", "--password", "chosen-passphrase-4"}, env, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "chosen-passphrase-4") {
		t.Fatalf("printed the given password: %q", out.String())
	}
	if _, err := svc.Sessions.Check(ctx, session); !service.IsNotFound(err) {
		t.Fatalf("session after reset-password: %v", err)
	}
	if _, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: "chosen-passphrase-4"}); err != nil {
		t.Fatal(err)
	}
	// A random one, printed once.
	out.Reset()
	if err := run(ctx, []string{"herald", "account", "reset-password", "--email", "ann@example.com"}, env, &out); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\(shown once\): (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("printed %q", out.String())
	}
	if _, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: m[1]}); err != nil {
		t.Fatalf("the printed password: %v", err)
	}
	for _, args := range [][]string{
		{"reset-password", "--email", "nobody@example.com"},
		{"reset-password", "--email", "ann@example.com", "--password", "1234567890"},
		{"reset-2fa", "--email", "nobody@example.com"},
	} {
		if err := run(ctx, append([]string{"herald", "account"}, args...), env, io.Discard); err == nil {
			t.Fatalf("%v succeeded", args)
		}
	}

	// reset-2fa turns two-factor login off.
	st, err := svc.Accounts.BeginTOTP(ctx, service.Owner(u.ID))
	if err != nil {
		t.Fatal(err)
	}
	code, _ := totp.GenerateCode(st.Key, time.Now())
	if _, err := svc.Accounts.EnableTOTP(ctx, service.Owner(u.ID), code, ""); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"herald", "account", "reset-2fa", "--email", "ann@example.com"}, env, io.Discard); err != nil {
		t.Fatal(err)
	}
	if u, _ := svc.Accounts.Get(ctx, u.ID); u.TwoFactor() {
		t.Fatal("still on after reset-2fa")
	}
}

// HERALD_SIGNUP=off reaches the served console: sign-up answers 403 and
// the login page offers none.
func TestServeSignupOff(t *testing.T) {
	t.Parallel()
	base := startConsoleServerWith(t, dbtest.DSN(t), map[string]string{"HERALD_SIGNUP": "off"})
	for _, path := range []string{"/signup", "/signup/confirm/x"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "Sign-up is closed on this server.") {
			t.Fatalf("%s: %d\n%.500s", path, resp.StatusCode, body)
		}
	}
	resp, err := http.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `href="/signup"`) || !strings.Contains(string(body), `href="/login/forgot"`) {
		t.Fatalf("login page: %d\n%.2000s", resp.StatusCode, body)
	}
}

// `herald account reset-password` and `reset-2fa` take a team member's
// address too: they set that member's password (ending its sessions,
// not the owner's) and turn its two-factor login off.
func TestAccountResetCommandsMember(t *testing.T) {
	t.Parallel()
	dsn := dbtest.DSN(t)
	env := envFrom(map[string]string{"HERALD_DATABASE": dsn, "HERALD_LOG_LEVEL": "error"})
	ctx := context.Background()
	if err := run(ctx, []string{"herald", "account", "create", "--email", "ann@example.com", "--password", "test-passphrase-9", "--name", "Ann"}, env, io.Discard); err != nil {
		t.Fatal(err)
	}
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := newService(t, db, service.Config{SecretKey: strings.Repeat("k", 32), BaseURL: "http://herald.test"})
	u, _ := svc.Accounts.ByEmail(ctx, "ann@example.com")
	if _, err := svc.Team.Invite(ctx, u.ID, "bob@example.com", service.RoleEditor); err != nil {
		t.Fatal(err)
	}
	link := outboxLink(t, db, "http://herald.test", "bob@example.com", "Ann invited you to join their team on Herald", "/invitations/")
	bob, err := svc.Team.Accept(ctx, link[strings.LastIndex(link, "/")+1:], service.AcceptInput{Name: "Bob", Password: "bobs-passphrase-1"})
	if err != nil {
		t.Fatal(err)
	}
	owner, _ := svc.Sessions.Start(ctx, u.ID)
	member, _ := svc.Sessions.StartMember(ctx, u.ID, bob.ID)

	var out bytes.Buffer
	if err := run(ctx, []string{"herald", "account", "reset-password", "--email", "bob@example.com"}, env, &out); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\(shown once\): (\S+)`).FindStringSubmatch(out.String())
	if m == nil || !strings.Contains(out.String(), "Every session of this team member has ended") {
		t.Fatalf("printed %q", out.String())
	}
	if _, mm, err := svc.Accounts.SignIn(ctx, service.LoginInput{Email: "bob@example.com", Password: m[1]}); err != nil || mm == nil || mm.ID != bob.ID {
		t.Fatalf("the printed password: %v", err)
	}
	if _, err := svc.Sessions.Check(ctx, member); !service.IsNotFound(err) {
		t.Fatalf("the member's session after reset-password: %v", err)
	}
	if _, err := svc.Sessions.Check(ctx, owner); err != nil {
		t.Fatalf("the owner's session ended: %v", err)
	}
	if _, err := svc.Accounts.Login(ctx, service.LoginInput{Email: "ann@example.com", Password: "test-passphrase-9"}); err != nil {
		t.Fatalf("the owner's password changed: %v", err)
	}

	// reset-2fa turns the member's two-factor login off, not the owner's.
	who := service.Who{AccountID: u.ID, MemberID: bob.ID}
	for _, w := range []service.Who{who, service.Owner(u.ID)} {
		st, err := svc.Accounts.BeginTOTP(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		code, _ := totp.GenerateCode(st.Key, time.Now())
		if _, err := svc.Accounts.EnableTOTP(ctx, w, code, ""); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	if err := run(ctx, []string{"herald", "account", "reset-2fa", "--email", "Bob@example.com"}, env, &out); err != nil {
		t.Fatal(err)
	}
	u2, mm, err := svc.Accounts.SignIn(ctx, service.LoginInput{Email: "bob@example.com", Password: m[1]})
	if err != nil || mm == nil || mm.TwoFactor() {
		t.Fatalf("the member's two-factor login still on: %v", err)
	}
	if !u2.TwoFactor() {
		t.Fatal("reset-2fa of a member turned the owner's off")
	}
}
