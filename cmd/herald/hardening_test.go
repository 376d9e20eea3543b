package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/eventually"
	"herald/service"
	"herald/smtptest"
)

// liveHerald is a running herald (the real listener) with one account, a
// verified sender, a group and a contact type of three contacts, mailing
// through a real SMTP relay on loopback: the decisions.md 8 findings are
// checked against it as an attacker would try them.
type liveHerald struct {
	*apiClient
	relay *smtptest.Server
	db    *service.DB
	env   map[string]string
}

func startLiveHerald(t *testing.T, extraEnv map[string]string) *liveHerald {
	t.Helper()
	relay := smtptest.Start(t)
	dsn := dbtest.DSN(t)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"herald", "account", "create", "--email", "owner@example.com", "--password", "test-passphrase-9", "--name", "O"},
		envFrom(map[string]string{"HERALD_DATABASE": dsn, "HERALD_LOG_LEVEL": "error"}), &out); err != nil {
		t.Fatal(err)
	}
	h := &liveHerald{apiClient: &apiClient{t: t}, relay: relay}
	_ = json.Unmarshal(out.Bytes(), &h.keys)
	addr := freeAddr(t)
	h.base = "http://" + addr
	h.env = map[string]string{"HERALD_DATABASE": dsn, "HERALD_SMTP_URL": relay.URL(), "HERALD_BASE_URL": h.base, "HERALD_ADDR": addr,
		"HERALD_API_RATE": "0"}
	for k, v := range extraEnv {
		h.env[k] = v
	}
	startServer(t, h.env)
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h.db = db

	h.call("POST", "/api/sender/save", url.Values{"from_name": {"Ann"}, "from_email": {"ann@shop.example.com"}, "reply_to_email": {"help@shop.example.com"},
		"country_id": {"840"}, "company_address": {"1 Main St"}, "nickname": {"shop"}})
	if !relay.WaitCount(1, 10*time.Second) {
		t.Fatal("no verification mail")
	}
	body := strings.NewReplacer("=\r\n", "", "=3D", "=").Replace(string(relay.Messages()[0].Data))
	link := regexp.MustCompile(`http://[^"\s]+/senders/verify/[0-9a-f]+`).FindString(body)
	if resp, err := http.Get(link); err != nil || resp.StatusCode != 200 {
		t.Fatalf("verify %q: %v", link, err)
	}
	h.call("POST", "/api/contacts-type/add", url.Values{"name": {"Customers"}})
	h.call("POST", "/api/unsubscribes-groups/save", url.Values{"group_name": {"News"}, "description": {"Monthly news"}, "is_display": {"1"}})
	for _, e := range []string{"ann@example.com", "bob@example.com", "cy@example.com"} {
		h.call("POST", "/api/contacts/add", url.Values{"contact_type_id": {"1"}, "email": {e}, "first_name": {"F"}, "last_name": {"L"}, "country": {"840"}})
	}
	return h
}

// send makes a single send of html to the contact type and waits until it
// is completed; it returns its utr.
func (h *liveHerald) send(name, html string) string {
	h.t.Helper()
	form := url.Values{"template_id": {"1"}, "template_html": {html},
		"sender_id": {"1"}, "unsubscribe_group_id": {"1"}, "single_send_name": {name}, "subject": {"Hello"}, "preheader": {"News"},
		"recipient_id[]": {"contacts_1"}, "schedule_type": {"0"}}
	utr := h.call("POST", "/api/single/send/create", form)["message"].(map[string]any)["utr"].(string)
	eventually.NoError(h.t, 30*time.Second, func() error {
		if d := h.details(utr); d["status"].(float64) != 3 {
			return fmt.Errorf("send %s not completed: %v", name, d)
		}
		return nil
	})
	return utr
}

func (h *liveHerald) details(utr string) map[string]any {
	h.t.Helper()
	return h.call("GET", "/api/single-send/details?utr="+utr, nil)["message"].(map[string]any)["singleSend"].([]any)[0].(map[string]any)
}

// message returns the last mail the relay got for to, its header and its
// decoded HTML part.
func (h *liveHerald) message(to string) (smtptest.Message, string) {
	h.t.Helper()
	var m smtptest.Message
	for _, x := range h.relay.Messages() {
		if x.To == to {
			m = x
		}
	}
	if m.To == "" {
		h.t.Fatalf("no message to %s", to)
	}
	body := strings.NewReplacer("=\r\n", "", "=3D", "=", "=0D", "\r", "=0A", "\n").Replace(string(m.Data))
	return m, body
}

// token is the recipient token of a message (from its List-Unsubscribe).
func (h *liveHerald) token(m smtptest.Message) string {
	return strings.TrimPrefix(unsubscribeLink(m), h.base+"/u/")
}

// unsubscribeLink is the https link of a message's List-Unsubscribe (the
// first entry; the mailto: address follows).
func unsubscribeLink(m smtptest.Message) string {
	link, _, _ := strings.Cut(m.Header().Get("List-Unsubscribe"), ",")
	return strings.Trim(link, "<> ")
}

// get fetches a path without following redirects.
func (h *liveHerald) get(path string, header ...string) (*http.Response, string) {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.base+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestClickRedirectCannotSetHeaders: a link whose
// href decodes to a CR LF followed by a header was copied raw into the
// click redirect's Location, and the answer carried the attacker's
// Set-Cookie on herald's own domain.
func TestClickRedirectCannotSetHeaders(t *testing.T) {
	t.Parallel()
	h := startLiveHerald(t, nil)
	evil := `https://b.example/&#13;&#10;Set-Cookie: herald_session=stolen; Path=/`
	utr := h.send("Evil", `<p>Hi</p><a href="`+evil+`">Win</a> <a href="https://shop.example.com/ok">Shop</a>`)
	m, body := h.message("bob@example.com")
	// The link with control characters is left as written; the other one
	// goes through the redirect as link 0.
	if strings.Count(body, h.base+"/t/c/") != 1 || !strings.Contains(body, "Set-Cookie: herald_session=stolen") {
		t.Fatalf("links of the message: %s", body)
	}
	tok := h.token(m)
	if r, _ := h.get("/t/c/" + tok + "/0"); r.StatusCode != 302 || r.Header.Get("Location") != "https://shop.example.com/ok" {
		t.Fatalf("the clean link: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	// A send stored before this check (its links list holds the decoded
	// link) must not answer with the header either.
	var id int64
	if err := h.db.R.Raw("SELECT id FROM single_sends WHERE utr = ?", utr).Scan(&id).Error; err != nil {
		t.Fatal(err)
	}
	if err := h.db.W.Exec("UPDATE single_sends SET links = ? WHERE id = ?",
		`["https://b.example/\r\nSet-Cookie: herald_session=stolen; Path=/","https://shop.example.com/ok"]`, id).Error; err != nil {
		t.Fatal(err)
	}
	r, _ := h.get("/t/c/" + tok + "/0")
	if r.StatusCode != 404 || r.Header.Get("Location") != "" || len(r.Cookies()) != 0 {
		t.Fatalf("a stored link with CR LF: %d Location %q cookies %v", r.StatusCode, r.Header.Get("Location"), r.Header.Values("Set-Cookie"))
	}
}

// callStatus calls the API with a key pair and returns the status.
func callStatus(t *testing.T, base string, keys keysOut, path string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("PublicKey", keys.PublicKey)
	req.Header.Set("SecretKey", keys.SecretKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A key rotation by the CLI (another process on the same database) takes
// effect at once in a running server: before, the
// server trusted a key it had seen for up to 30 seconds.
func TestKeyRotationTakesEffectAtOnce(t *testing.T) {
	t.Parallel()
	h := startLiveHerald(t, nil)
	old := h.keys
	for _, path := range []string{"/api/global-unsubscribes", "/api/contacts-type", "/api/senders"} {
		if s := callStatus(t, h.base, old, path); s != 200 {
			t.Fatalf("%s with the keys: %d", path, s)
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"herald", "account", "rotate-keys", "--email", "owner@example.com"},
		envFrom(map[string]string{"HERALD_DATABASE": h.env["HERALD_DATABASE"], "HERALD_LOG_LEVEL": "error"}), &out); err != nil {
		t.Fatal(err)
	}
	var fresh keysOut
	if err := json.Unmarshal(out.Bytes(), &fresh); err != nil || fresh.SecretKey == old.SecretKey {
		t.Fatalf("rotate-keys printed %q", out.String())
	}
	for _, path := range []string{"/api/global-unsubscribes", "/api/contacts-type", "/api/senders"} {
		if s := callStatus(t, h.base, old, path); s != 401 {
			t.Fatalf("%s with the old keys right after the rotation: %d", path, s)
		}
		if s := callStatus(t, h.base, fresh, path); s != 200 {
			t.Fatalf("%s with the new keys: %d", path, s)
		}
	}
	// The old public key with the new secret is no pair either.
	if s := callStatus(t, h.base, keysOut{PublicKey: old.PublicKey, SecretKey: fresh.SecretKey}, "/api/senders"); s != 401 {
		t.Fatalf("mixed pair: %d", s)
	}
}

// rawRequest writes req on a fresh connection and returns the status line,
// the header and the body of the answer.
func rawRequest(t *testing.T, addr, req string) (status int, header http.Header, body string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// Every /api/ answer is the JSON envelope, 414 and 431 included, and an
// 8 KB URL is served: before, a 5,000-character
// query got fasthttp's 431 in plain text.
func TestOversizedRequestsAnswerTheEnvelope(t *testing.T) {
	t.Parallel()
	h := startLiveHerald(t, nil)
	addr := strings.TrimPrefix(h.base, "http://")
	keys := "PublicKey: " + h.keys.PublicKey + "\r\nSecretKey: " + h.keys.SecretKey + "\r\n"
	get := func(path, extra string) (int, http.Header, string) {
		return rawRequest(t, addr, "GET "+path+" HTTP/1.1\r\nHost: "+addr+"\r\n"+keys+extra+"Connection: close\r\n\r\n")
	}
	envelope := func(what string, status int, header http.Header, body string, want int) {
		t.Helper()
		var env struct {
			Status string `json:"status"`
			Errors any    `json:"errors"`
		}
		if status != want || !strings.HasPrefix(header.Get("Content-Type"), "application/json") || json.Unmarshal([]byte(body), &env) != nil ||
			env.Status != "failed" || env.Errors == nil {
			t.Fatalf("%s: %d %q %q", what, status, header.Get("Content-Type"), body)
		}
	}
	for _, n := range []int{5000, 8 << 10} {
		if s, _, body := get("/api/global-unsubscribes?search="+strings.Repeat("a", n), ""); s != 200 || !strings.HasPrefix(body, `{"status":"success"`) {
			t.Fatalf("a %d-character query: %d %q", n, s, body)
		}
	}
	s, hd, body := get("/api/global-unsubscribes?search="+strings.Repeat("a", 20<<10), "")
	envelope("a 20 KB URL", s, hd, body, 414)
	s, hd, body = get("/api/global-unsubscribes", "X-Big: "+strings.Repeat("b", 40<<10)+"\r\n")
	envelope("a 40 KB header", s, hd, body, 431)
	s, hd, body = get("/api/global-unsubscribes?search="+strings.Repeat("a", 60<<10), "")
	envelope("a 60 KB URL", s, hd, body, 431)
	// The console answers a long URL with its page.
	if s, hd, _ := get("/contacts?search="+strings.Repeat("a", 20<<10), ""); s != 414 || !strings.HasPrefix(hd.Get("Content-Type"), "text/html") {
		t.Fatalf("console, a 20 KB URL: %d %q", s, hd.Get("Content-Type"))
	}
}

// /metrics takes HERALD_METRICS_TOKEN as a bearer token, and no public
// recipient page may be framed by another site.
func TestMetricsTokenAndFraming(t *testing.T) {
	t.Parallel()
	h := startLiveHerald(t, map[string]string{"HERALD_METRICS_TOKEN": "m3trics-t0ken"})
	for _, auth := range []string{"", "Bearer wrong", "Basic m3trics-t0ken", "m3trics-t0ken"} {
		var hdr []string
		if auth != "" {
			hdr = []string{"Authorization", auth}
		}
		if r, body := h.get("/metrics", hdr...); r.StatusCode != 401 || strings.Contains(body, "herald_http") {
			t.Fatalf("/metrics with %q: %d", auth, r.StatusCode)
		}
	}
	if r, body := h.get("/metrics", "Authorization", "Bearer m3trics-t0ken"); r.StatusCode != 200 || !strings.Contains(body, "herald_http_requests_total") {
		t.Fatalf("/metrics with the token: %d", r.StatusCode)
	}

	h.send("Framed", `<p>Hi</p><a href="https://shop.example.com/">Shop</a>`)
	m, _ := h.message("ann@example.com")
	tok := h.token(m)
	for _, path := range []string{"/u/" + tok, "/m/" + tok, "/u/unknown-token", "/t/c/" + tok + "/0", "/t/o/" + tok + ".gif"} {
		r, _ := h.get(path)
		if !strings.Contains(r.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") || r.Header.Get("X-Frame-Options") != "DENY" {
			t.Fatalf("%s: %d CSP %q XFO %q", path, r.StatusCode, r.Header.Get("Content-Security-Policy"), r.Header.Get("X-Frame-Options"))
		}
	}
}

// The unsubscribe and preference links of a mail keep working after its
// send is deleted through the API: before, 404.
func TestUnsubscribeLinksOutliveTheSend(t *testing.T) {
	t.Parallel()
	h := startLiveHerald(t, nil)
	utr := h.send("Gone", `<p>Hi</p><a href="https://shop.example.com/">Shop</a>`)
	m, _ := h.message("cy@example.com")
	unsub := unsubscribeLink(m)
	h.call("DELETE", "/api/single/send/delete?utr="+utr, nil)
	if r, page := h.get(strings.TrimPrefix(unsub, h.base)); r.StatusCode != 200 || !strings.Contains(page, "Monthly news") {
		t.Fatalf("preference page after the delete: %d", r.StatusCode)
	}
	resp, err := http.Post(unsub, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("one-click after the delete: %v %v", err, resp)
	}
	resp.Body.Close()
	// The send itself is gone for its account.
	req, _ := http.NewRequest("GET", h.base+"/api/single-send/details?utr="+utr, nil)
	req.Header.Set("PublicKey", h.keys.PublicKey)
	req.Header.Set("SecretKey", h.keys.SecretKey)
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("details of the deleted send: %v %v", err, resp)
	}
	resp.Body.Close()
	// And cy is in the group now: a new send skips the address.
	utr2 := h.send("Next", `<p>Again</p>`)
	if d := h.details(utr2); d["triggered"].(float64) != 2 {
		t.Fatalf("the next send: %v", d)
	}
}
