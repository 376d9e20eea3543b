package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/dbtest"
	"herald/eventually"
	"herald/service"
)

func envFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestAccountCommands(t *testing.T) {
	t.Parallel()
	env := envFrom(map[string]string{"HERALD_DATABASE": dbtest.DSN(t), "HERALD_LOG_LEVEL": "error"})
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"herald", "account", "create", "--email", "Ann@Example.com", "--password", "test-passphrase-9", "--name", "Ann"}, env, &out); err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(out.String())
	var created keysOut
	if err := json.Unmarshal([]byte(line), &created); err != nil {
		t.Fatalf("not one JSON object: %q", line)
	}
	if !strings.HasPrefix(line, `{"user_id":`) || created.UserID == 0 || created.PublicKey == "" || created.SecretKey == "" {
		t.Fatalf("create printed %q", line)
	}
	if err := run(ctx, []string{"herald", "account", "create", "--email", "ann@example.com", "--password", "test-passphrase-9", "--name", "Ann"}, env, io.Discard); err == nil {
		t.Fatal("a second account with the same email was created")
	}

	out.Reset()
	if err := run(ctx, []string{"herald", "account", "rotate-keys", "--email", "ann@example.com"}, env, &out); err != nil {
		t.Fatal(err)
	}
	var rotated keysOut
	if err := json.Unmarshal(out.Bytes(), &rotated); err != nil {
		t.Fatal(err)
	}
	if rotated.UserID != created.UserID || rotated.SecretKey == created.SecretKey || rotated.PublicKey == created.PublicKey {
		t.Fatalf("rotate-keys: %+v after %+v", rotated, created)
	}
	if err := run(ctx, []string{"herald", "account", "rotate-keys", "--email", "nobody@example.com"}, env, io.Discard); err == nil {
		t.Fatal("rotate-keys of an unknown account succeeded")
	}
	if err := run(ctx, []string{"herald", "migrate"}, env, io.Discard); err != nil {
		t.Fatalf("migrate on a migrated database: %v", err)
	}
	if err := run(ctx, []string{"herald", "bogus"}, env, io.Discard); err == nil {
		t.Fatal("unknown command accepted")
	}

	// The secret is stored only as a hash.
	db, err := service.OpenDB(env("HERALD_DATABASE"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	db.R.Raw("SELECT COUNT(*) FROM users WHERE CAST(secret_hash AS TEXT) LIKE ?", "%"+rotated.SecretKey+"%").Scan(&n)
	if n != 0 {
		t.Fatal("secret key stored in clear")
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startServer runs `herald serve` in the test process and waits for health.
func startServer(t *testing.T, env map[string]string) (base string, stop func() error) {
	t.Helper()
	if env["HERALD_ADDR"] == "" {
		env["HERALD_ADDR"] = freeAddr(t)
	}
	addr := env["HERALD_ADDR"]
	env["HERALD_LOG_LEVEL"] = "error"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"herald", "serve"}, envFrom(env), io.Discard) }()
	base = "http://" + addr
	eventually.NoError(t, 20*time.Second, func() error {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v", err)
		default:
		}
		return errors.New("server did not become healthy")
	})
	var stopped bool
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			return fmt.Errorf("serve did not stop")
		}
	}
	t.Cleanup(func() { _ = stop() })
	return base, stop
}

func TestServe(t *testing.T) {
	t.Parallel()
	dsn := dbtest.DSN(t)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"herald", "account", "create", "--email", "ops@example.com", "--password", "test-passphrase-9", "--name", "Ops"}, envFrom(map[string]string{"HERALD_DATABASE": dsn, "HERALD_LOG_LEVEL": "error"}), &out); err != nil {
		t.Fatal(err)
	}
	var keys keysOut
	_ = json.Unmarshal(out.Bytes(), &keys)
	base, stop := startServer(t, map[string]string{"HERALD_DATABASE": dsn, "HERALD_API_RATE": "0"})

	get := func(path string, body io.Reader, method string) (int, string) {
		req, _ := http.NewRequest(method, base+path, body)
		req.Header.Set("PublicKey", keys.PublicKey)
		req.Header.Set("SecretKey", keys.SecretKey)
		if body != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	if code, body := get("/healthz", nil, "GET"); code != 200 || body != `{"status":"ok"}` {
		t.Fatalf("healthz: %d %s", code, body)
	}
	if code, body := get("/favicon.ico", nil, "GET"); code != 200 || !strings.Contains(body, "<svg") {
		t.Fatalf("favicon.ico: %d %.80s", code, body)
	}
	if code, body := get("/api/global-unsubscribes/save", strings.NewReader("email_address=a@example.com"), "POST"); code != 200 {
		t.Fatalf("save: %d %s", code, body)
	}
	if code, body := get("/api/global-unsubscribes", nil, "GET"); code != 200 || !strings.Contains(body, `"email_address":"a@example.com"`) {
		t.Fatalf("list: %d %s", code, body)
	}
	if code, body := get("/api/nowhere", nil, "GET"); code != 404 || body != `{"status":"failed","errors":"Not Found"}` {
		t.Fatalf("unknown route: %d %s", code, body)
	}
	// Over the 10 MB limit: 413 in the envelope.
	// Over the limit: 413, in the envelope, however the body is sent.
	for _, chunked := range []bool{false, true} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			w := bufio.NewWriter(conn)
			fmt.Fprintf(w, "POST /api/global-unsubscribes/save HTTP/1.1\r\nHost: x\r\nPublicKey: %s\r\nSecretKey: %s\r\n"+
				"Content-Type: application/x-www-form-urlencoded\r\n", keys.PublicKey, keys.SecretKey)
			chunk := strings.Repeat("a", 1<<20)
			if chunked {
				fmt.Fprintf(w, "Transfer-Encoding: chunked\r\n\r\n")
				for i := 0; i < 11; i++ {
					fmt.Fprintf(w, "%x\r\n%s\r\n", len(chunk), chunk)
				}
				fmt.Fprintf(w, "0\r\n\r\n")
			} else {
				fmt.Fprintf(w, "Content-Length: %d\r\n\r\n", 11<<20)
				for i := 0; i < 11; i++ {
					w.WriteString(chunk)
				}
			}
			w.Flush() // the server may close first: errors are expected
		}()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode != 413 || string(b) != `{"status":"failed","errors":"The request body is too large."}` {
			t.Fatalf("body limit (chunked %v): %d %.200s", chunked, resp.StatusCode, b)
		}
	}
	code, metrics := get("/metrics", nil, "GET")
	if code != 200 || !strings.Contains(metrics, `herald_http_requests_total{method="GET",route="/api/global-unsubscribes",status="200"} 1`) ||
		!strings.Contains(metrics, `herald_http_request_duration_seconds_bucket{method="POST",route="/api/global-unsubscribes/save",status="200"`) {
		t.Fatalf("metrics lack the request series:\n%s", metrics)
	}
	if strings.Contains(metrics, keys.SecretKey) {
		t.Fatal("metrics leak the secret key")
	}
	if err := stop(); err != nil {
		t.Fatalf("graceful stop: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("still serving after stop")
	}
}

func TestPanicAnswersEnvelope(t *testing.T) {
	t.Parallel()
	cfg, _ := loadConfig(envFrom(map[string]string{}))
	svc := dbtest.Service(t)
	app, err := newApp(context.Background(), svc, cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	app.Get("/api/test-panic", func(c *fiber.Ctx) error { panic("secret internals") })
	u, keys, err := svc.Accounts.Create(context.Background(), service.AccountInput{Name: "P", Email: "p@example.com", Password: "test-passphrase-9"})
	if err != nil || u == nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/api/test-panic", nil)
	req.Header.Set("PublicKey", keys.PublicKey)
	req.Header.Set("SecretKey", keys.SecretKey)
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || string(b) != `{"status":"failed","errors":"Internal Server Error"}` {
		t.Fatalf("panic: %d %s", resp.StatusCode, b)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(envFrom(map[string]string{}))
	if err != nil || cfg.Addr != ":8080" || cfg.Database != "data/herald.db" || cfg.BaseURL != "http://localhost:8080" || cfg.SMTPURL != "" {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	for _, bad := range []map[string]string{
		{"HERALD_BASE_URL": "example.com"},
		{"HERALD_API_RATE": "fast"},
		{"HERALD_LOG_LEVEL": "loud"},
		{"HERALD_EVENT_WEBHOOK_PRIVATE": "yes please"},
	} {
		if _, err := loadConfig(envFrom(bad)); err == nil {
			t.Fatalf("accepted %v", bad)
		}
	}
	if cfg.EventWebhookPrivate {
		t.Fatal("event webhooks may reach private addresses by default")
	}
	if cfg, _ := loadConfig(envFrom(map[string]string{"HERALD_EVENT_WEBHOOK_PRIVATE": "1"})); !cfg.EventWebhookPrivate {
		t.Fatal("HERALD_EVENT_WEBHOOK_PRIVATE=1 not read")
	}
}

// newService builds a service over db as serve would, with cfg.
func newService(t testing.TB, db *service.DB, cfg service.Config) *service.Service {
	t.Helper()
	svc, err := service.New(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// A base URL naming this machine on another port than herald listens on
// gets a warning at start-up: its links would lead nowhere.
func TestBaseURLMismatch(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		addr, base string
		warn       bool
	}{
		{":8080", "http://localhost:8080", false},
		{":8080", "http://localhost:9090", true},
		{"127.0.0.1:3000", "http://127.0.0.1:8080", true},
		{":80", "http://localhost", false},
		{":8080", "http://[::1]:8081", true},
		{":8080", "https://mail.example.com", false}, // a proxy in front
		{":8080", "http://herald.localhost:8080", false},
	} {
		if got := baseURLMismatch(tt.addr, tt.base); (got != "") != tt.warn {
			t.Errorf("addr %s, base %s: warning %q, want one: %v", tt.addr, tt.base, got, tt.warn)
		}
	}
}
