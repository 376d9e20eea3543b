package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"herald/api"
	"herald/dbtest"
	"herald/service"
)

// client is one account talking to the real API app.
type client struct {
	t    *testing.T
	app  *fiber.App
	keys service.Keys
	id   int64
}

type env struct {
	app  *fiber.App
	svc  *service.Service
	a, b *client // two accounts, for isolation tests
}

func newEnv(t *testing.T, cfg ...service.Config) *env {
	t.Helper()
	svc := dbtest.Service(t, cfg...)
	app := fiber.New(fiber.Config{ErrorHandler: api.ErrorHandler, BodyLimit: 10 << 20, StreamRequestBody: true, DisablePreParseMultipartForm: true, DisableStartupMessage: true})
	api.New(svc, api.Options{}).Mount(app.Group("/api"))
	e := &env{app: app, svc: svc}
	e.a = e.account(t, "a@example.com")
	e.b = e.account(t, "b@example.com")
	return e
}

func (e *env) account(t *testing.T, email string) *client {
	u, keys, err := e.svc.Accounts.Create(context.Background(), service.AccountInput{Name: "Test", Email: email, Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	return &client{t: t, app: e.app, keys: keys, id: u.ID}
}

// reply is a decoded answer.
type reply struct {
	Code    int
	Status  string          `json:"status"`
	Message json.RawMessage `json:"message"`
	Errors  json.RawMessage `json:"errors"`
	raw     string
}

// text returns the message or errors as a plain string ("" if not one).
func (r reply) text(field json.RawMessage) string {
	var s string
	_ = json.Unmarshal(field, &s)
	return s
}

func (r reply) fieldErrors() map[string][]string {
	var m map[string][]string
	_ = json.Unmarshal(r.Errors, &m)
	return m
}

// send makes a request with the client's keys; body is url.Values
// (URL-encoded), a string (JSON) or nil.
func (c *client) send(method, path string, body any) reply {
	c.t.Helper()
	return do(c.t, c.app, method, path, body, map[string]string{"PublicKey": c.keys.PublicKey, "SecretKey": c.keys.SecretKey})
}

func do(t *testing.T, app *fiber.App, method, path string, body any, headers map[string]string) reply {
	t.Helper()
	var r io.Reader
	ct := ""
	switch b := body.(type) {
	case url.Values:
		r, ct = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	case string:
		r, ct = strings.NewReader(b), "application/json"
	case rawBody:
		r, ct = strings.NewReader(b.body), b.contentType
	}
	req := httptest.NewRequest(method, path, r)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	checkAnswer(t, method, path, resp.StatusCode, resp.Header, data)
	out := reply{Code: resp.StatusCode, raw: string(data)}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: answer is not JSON (%d): %q", method, path, resp.StatusCode, data)
	}
	if out.Status != "success" && out.Status != "failed" {
		t.Fatalf("%s %s: envelope without status: %s", method, path, data)
	}
	if resp.StatusCode >= 500 {
		t.Fatalf("%s %s: server error %d: %s", method, path, resp.StatusCode, data)
	}
	return out
}

type rawBody struct{ contentType, body string }

func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// expectOK checks a success answer with text as message.
func expectOK(t *testing.T, r reply, text string) {
	t.Helper()
	if r.Code != http.StatusOK || r.Status != "success" || r.text(r.Message) != text {
		t.Fatalf("want 200 success %q, got %d %s", text, r.Code, r.raw)
	}
}

// expectNF checks a not-found answer with text as errors.
func expectNF(t *testing.T, r reply, text string) {
	t.Helper()
	if r.Code != http.StatusNotFound || r.Status != "failed" || r.text(r.Errors) != text {
		t.Fatalf("want 404 %q, got %d %s", text, r.Code, r.raw)
	}
}

// expectVAL checks a 422 answer whose errors hold exactly want.
func expectVAL(t *testing.T, r reply, want map[string][]string) {
	t.Helper()
	if r.Code != http.StatusUnprocessableEntity || r.Status != "failed" {
		t.Fatalf("want 422, got %d %s", r.Code, r.raw)
	}
	got := r.fieldErrors()
	if len(got) != len(want) {
		t.Fatalf("want errors %v, got %s", want, r.Errors)
	}
	for k, msgs := range want {
		if strings.Join(got[k], "|") != strings.Join(msgs, "|") {
			t.Fatalf("errors[%s]: want %q, got %q (%s)", k, msgs, got[k], r.Errors)
		}
	}
}

// list decodes message.<key> into out and returns it.
func list[T any](t *testing.T, r reply, key string) []T {
	t.Helper()
	if r.Code != 200 || r.Status != "success" {
		t.Fatalf("list: %d %s", r.Code, r.raw)
	}
	var m map[string][]T
	if err := json.Unmarshal(r.Message, &m); err != nil {
		t.Fatalf("list: %v: %s", err, r.raw)
	}
	items, ok := m[key]
	if !ok {
		t.Fatalf("list: no key %q in %s", key, r.Message)
	}
	return items
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

type rawReply struct {
	code              int
	contentType, body string
}

// doRaw makes a request with the client's keys and returns the answer as is.
func doRaw(t *testing.T, c *client, method, path string) rawReply {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("PublicKey", c.keys.PublicKey)
	req.Header.Set("SecretKey", c.keys.SecretKey)
	resp, err := c.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	checkAnswer(t, method, path, resp.StatusCode, resp.Header, b)
	return rawReply{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
}

var regexpDateTime = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`)
