package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"herald/delivery"
	"herald/service"
	"herald/smtptest"
)

// answer is a reply with its headers, whatever its status (5xx included).
type answer struct {
	code   int
	header http.Header
	env    struct {
		Status string          `json:"status"`
		Errors json.RawMessage `json:"errors"`
	}
	raw string
}

func (a answer) errorText() string {
	var s string
	_ = json.Unmarshal(a.env.Errors, &s)
	return s
}

func call(t *testing.T, c *client, method, path string, body url.Values) answer {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = strings.NewReader(body.Encode())
	}
	req := httptest.NewRequest(method, path, r)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("PublicKey", c.keys.PublicKey)
	req.Header.Set("SecretKey", c.keys.SecretKey)
	resp, err := c.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	checkAnswer(t, method, path, resp.StatusCode, resp.Header, b)
	a := answer{code: resp.StatusCode, header: resp.Header, raw: string(b)}
	if err := json.Unmarshal(b, &a.env); err != nil || (a.env.Status != "success" && a.env.Status != "failed") {
		t.Fatalf("%s %s: not the envelope (%d): %s", method, path, resp.StatusCode, b)
	}
	return a
}

// wantThrottled checks 429, the envelope's text and a Retry-After of at
// most max seconds.
func wantThrottled(t *testing.T, a answer, max int) {
	t.Helper()
	secs, err := strconv.Atoi(a.header.Get("Retry-After"))
	if a.code != http.StatusTooManyRequests || a.env.Status != "failed" || err != nil || secs < 1 || secs > max ||
		!strings.HasPrefix(a.errorText(), "Too many verification mails. Try again in ") {
		t.Fatalf("want 429 with Retry-After <= %d, got %d Retry-After %q: %s", max, a.code, a.header.Get("Retry-After"), a.raw)
	}
	mins := (secs + 59) / 60
	unit := "minutes"
	if mins == 1 {
		unit = "minute"
	}
	if want := fmt.Sprintf("Too many verification mails. Try again in %d %s.", mins, unit); a.errorText() != want {
		t.Fatalf("text %q, want %q (Retry-After %d)", a.errorText(), want, secs)
	}
}

// finding 3: sender/save and sender/resend-mail mailed any address
// without limit (20 mails in 0.08 s). Now: 3 per sender per 10 minutes,
// 20 per account per hour, 429 with Retry-After, nothing stored beyond.
func TestSenderVerificationThrottle(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	tr, err := delivery.OpenTransport(srv.URL(), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	e := newEnv(t, service.Config{Transport: tr, BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test"})

	expectOK(t, e.a.send("POST", "/api/sender/save", form(toForm(senderForm())...)), "Added Successfully")
	id := itoa(list[sender](t, e.a.send("GET", "/api/senders", nil), "senders")[0].ID)
	for i := 0; i < 2; i++ {
		expectOK(t, e.a.send("GET", "/api/sender/resend-mail?sender_id="+id, nil), "Verification Mail Send")
	}
	wantThrottled(t, call(t, e.a, "GET", "/api/sender/resend-mail?sender_id="+id, nil), 600)
	// A new sender of the same address counts with it.
	wantThrottled(t, call(t, e.a, "POST", "/api/sender/save", form(toForm(senderForm())...)), 600)
	if n := srv.Count(); n != 3 {
		t.Fatalf("%d mails reached the relay, want 3", n)
	}

	// The account: 20 mails an hour; 17 more senders fit.
	for i := 0; i < 17; i++ {
		expectOK(t, e.a.send("POST", "/api/sender/save", form(toForm(senderForm("from_email", fmt.Sprintf("s%d@acme.example.com", i)))...)), "Added Successfully")
	}
	wantThrottled(t, call(t, e.a, "POST", "/api/sender/save", form(toForm(senderForm("from_email", "last@acme.example.com"))...)), 3600)
	if n := len(list[sender](t, e.a.send("GET", "/api/senders", nil), "senders")); n != 18 {
		t.Fatalf("%d senders stored, want 18", n)
	}
	if n := srv.Count(); n != 20 {
		t.Fatalf("%d mails reached the relay, want 20", n)
	}
	// Another account is not limited by this one.
	expectOK(t, e.b.send("POST", "/api/sender/save", form(toForm(senderForm("from_email", "last@acme.example.com"))...)), "Added Successfully")
}

// finding 2: a from_name with CR/LF answered 500 yet stored the sender.
// Now 422, nothing stored; the nickname likewise.
func TestSenderNamesRefuseLineBreaks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	expectVAL(t, e.a.send("POST", "/api/sender/save", form(toForm(senderForm("from_name", "Acme\r\nBcc: victim@example.org", "nickname", "a\nb"))...)),
		map[string][]string{"from_name": {"The from name must not contain line breaks."}, "nickname": {"The nickname must not contain line breaks."}})
	if n := len(list[sender](t, e.a.send("GET", "/api/senders", nil), "senders")); n != 0 {
		t.Fatalf("%d senders stored", n)
	}
	expectOK(t, e.a.send("POST", "/api/sender/save", form(toForm(senderForm())...)), "Added Successfully")
	id := itoa(list[sender](t, e.a.send("GET", "/api/senders", nil), "senders")[0].ID)
	expectVAL(t, e.a.send("POST", "/api/sender/update", form(toForm(senderForm("sender_id", id, "from_name", "x\ry"))...)),
		map[string][]string{"from_name": {"The from name must not contain line breaks."}})
}

// The relay down: sender/save stores nothing and answers 503 with the
// envelope (it answered 500 after storing the sender).
func TestSenderSaveRelayDown(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "smtp://" + ln.Addr().String() + "?tls=none"
	ln.Close()
	tr, err := delivery.OpenTransport(dead, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	e := newEnv(t, service.Config{Transport: tr, BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test"})

	a := call(t, e.a, "POST", "/api/sender/save", form(toForm(senderForm())...))
	if a.code != http.StatusServiceUnavailable || a.env.Status != "failed" || a.errorText() != "The verification mail could not be sent. Try again later." {
		t.Fatalf("save with the relay down: %d %s", a.code, a.raw)
	}
	if n := len(list[sender](t, e.a.send("GET", "/api/senders", nil), "senders")); n != 0 {
		t.Fatalf("%d senders stored with the relay down", n)
	}
}
