package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"herald/dbtest"
	"herald/delivery"
	"herald/service"
	"herald/static"
	"herald/web"
)

// testApp is the console mounted on a Fiber app as cmd/herald mounts it,
// over a fresh database.
type testApp struct {
	t   *testing.T
	app *fiber.App
	svc *service.Service
	web *web.Web
}

func newTestApp(t *testing.T, opt web.Options) *testApp {
	t.Helper()
	return newTestAppOn(t, dbtest.Service(t), opt)
}

func newTestAppOn(t *testing.T, svc *service.Service, opt web.Options) *testApp {
	t.Helper()
	if opt.BaseURL == "" {
		opt.BaseURL = "http://localhost:8080"
	}
	w, err := web.New(context.Background(), svc, opt)
	if err != nil {
		t.Fatal(err)
	}
	// As cmd/herald configures it: bodies may arrive as streams, and
	// multipart bodies are parsed only when a handler asks.
	app := fiber.New(fiber.Config{
		ErrorHandler:                 web.ErrorHandler,
		DisableStartupMessage:        true,
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
	})
	app.Use("/static", filesystem.New(filesystem.Config{Root: http.FS(static.FS)}))
	w.Mount(app)
	return &testApp{t: t, app: app, svc: svc, web: w}
}

// client is a browser: it keeps cookies and the CSRF token of the last
// page it saw.
type client struct {
	t       *testing.T
	a       *testApp
	cookies map[string]string
	csrf    string
}

func (a *testApp) client() *client {
	return &client{t: a.t, a: a, cookies: map[string]string{}}
}

// response is an answer with its HTML parsed.
type response struct {
	status int
	header http.Header
	body   string
	doc    *html.Node
}

func (r *response) location() string { return r.header.Get("Location") }

// do sends a request; hx makes it an htmx request (HX-Request, and the
// token in the X-CSRF-Token header instead of the form).
func (c *client) do(method, path string, form url.Values, hx bool, headers ...string) *response {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if hx {
		req.Header.Set("HX-Request", "true")
		if c.csrf != "" {
			req.Header.Set("X-CSRF-Token", c.csrf)
		}
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	for k, v := range c.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := c.a.app.Test(req, -1)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.MaxAge < 0 {
			delete(c.cookies, ck.Name)
		} else {
			c.cookies[ck.Name] = ck.Value
		}
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	r := &response{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		r.doc, err = parseHTML(r.body)
		if err != nil {
			c.t.Fatalf("%s %s: HTML: %v", method, path, err)
		}
		c.learnToken(r.doc)
	}
	return r
}

// parseHTML parses a page, or a fragment as htmx would place it: table
// rows are parsed inside a <tbody>, as in the table they replace.
func parseHTML(body string) (*html.Node, error) {
	if !strings.HasPrefix(strings.TrimSpace(body), "<tr") {
		return html.Parse(strings.NewReader(body))
	}
	nodes, err := html.ParseFragment(strings.NewReader(body), &html.Node{Type: html.ElementNode, Data: "tbody", DataAtom: atom.Tbody})
	if err != nil {
		return nil, err
	}
	root := &html.Node{Type: html.DocumentNode}
	for _, n := range nodes {
		root.AppendChild(n)
	}
	return root, nil
}

// learnToken keeps the page's CSRF token, from <body hx-headers> or a
// hidden input.
func (c *client) learnToken(doc *html.Node) {
	if body := first(doc, "body"); body != nil {
		var h map[string]string
		if json.Unmarshal([]byte(attr(body, "hx-headers")), &h) == nil && h["X-CSRF-Token"] != "" {
			c.csrf = h["X-CSRF-Token"]
			return
		}
	}
	if in := first(doc, `input[name="_csrf"]`); in != nil {
		c.csrf = attr(in, "value")
	}
}

func (c *client) get(path string) *response { c.t.Helper(); return c.do("GET", path, nil, false) }

func (c *client) hxGet(path string) *response { c.t.Helper(); return c.do("GET", path, nil, true) }

// post sends a plain form with the token in its _csrf field.
func (c *client) post(path string, form url.Values) *response {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("_csrf") == "" && c.csrf != "" {
		form.Set("_csrf", c.csrf)
	}
	return c.do("POST", path, form, false)
}

// postMultipart sends a form as multipart/form-data (what a form with
// enctype="multipart/form-data" sends), the token in its _csrf field.
func (c *client) postMultipart(path string, form url.Values) *response {
	c.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	form.Set("_csrf", c.csrf)
	for k, vs := range form {
		for _, v := range vs {
			_ = mw.WriteField(k, v)
		}
	}
	mw.Close()
	req := httptest.NewRequest("POST", path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for k, v := range c.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := c.a.app.Test(req, -1)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	return &response{status: resp.StatusCode, header: resp.Header}
}

// hxPost sends a form as htmx does, with the token in the header.
func (c *client) hxPost(path string, form url.Values) *response {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	return c.do("POST", path, form, true)
}

// signup opens an account through the sign-up page and returns its
// keys, as the first screen (the dashboard) shows them; the client is
// then logged in.
func (c *client) signup(name, email, password string) (public, secret string) {
	c.t.Helper()
	c.get("/signup")
	r := c.post("/signup", url.Values{"name": {name}, "email": {email}, "password": {password}})
	if r.status != http.StatusSeeOther || r.location() != "/dashboard" {
		c.t.Fatalf("sign-up: %d %q\n%s", r.status, r.location(), r.body)
	}
	r = c.get("/dashboard")
	if r.status != http.StatusOK || first(r.doc, "#welcome-keys") == nil {
		c.t.Fatalf("first screen: %d\n%s", r.status, r.body)
	}
	return value(r.doc, "#public-key"), value(r.doc, "#secret-key")
}

// login logs an existing account in through the login page.
func (c *client) login(email, password string) {
	c.t.Helper()
	c.get("/login")
	r := c.post("/login", url.Values{"email": {email}, "password": {password}})
	if r.status != http.StatusSeeOther {
		c.t.Fatalf("login %s: %d\n%s", email, r.status, r.body)
	}
}

// account makes an account through the service and a client logged in to it.
func (a *testApp) account(name, email string) (*client, int64) {
	a.t.Helper()
	u, _, err := a.svc.Accounts.Create(context.Background(), service.AccountInput{Name: name, Email: email, Password: "test-passphrase-9"})
	if err != nil {
		a.t.Fatal(err)
	}
	c := a.client()
	c.login(email, "test-passphrase-9")
	return c, u.ID
}

// wantStatus fails the test unless r has the status.
func wantStatus(t *testing.T, r *response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d\nLocation: %s\n%.3000s", r.status, status, r.location(), r.body)
	}
}

// wantRedirect fails the test unless r is a 303 to a location starting with prefix.
func wantRedirect(t *testing.T, r *response, prefix string) {
	t.Helper()
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), prefix) {
		t.Fatalf("got %d to %q, want 303 to %s…\n%.2000s", r.status, r.location(), prefix, r.body)
	}
}

// switchable is a transport a test changes while the app runs (the relay
// going down).
type switchable struct {
	mu  sync.Mutex
	cur delivery.Transport
}

func (s *switchable) use(t delivery.Transport) {
	s.mu.Lock()
	s.cur = t
	s.mu.Unlock()
}

func (s *switchable) Send(ctx context.Context, from string, to []string, msg []byte) error {
	s.mu.Lock()
	t := s.cur
	s.mu.Unlock()
	return t.Send(ctx, from, to, msg)
}

func (s *switchable) Close() error { return nil }
