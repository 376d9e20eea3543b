package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/gofiber/fiber/v2"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/web"
)

// formApp is the console over a service whose forms take any number of
// posts (the limits are tested in service/), with one account, a
// custom field and a form.
func formApp(t testing.TB, double string) (*testApp, *models.Form) {
	t.Helper()
	svc := dbtest.Service(t, service.Config{FormLimits: service.FormLimits{PerIP: 1 << 30, PerForm: 1 << 30, Window: time.Minute}})
	ctx := context.Background()
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "T", Email: "owner@example.com", Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	ct, err := svc.ContactTypes.Create(ctx, u.ID, "Readers")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Fields.Create(ctx, u.ID, service.FieldInput{FieldName: "company", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	fm, err := svc.Forms.Save(ctx, u.ID, service.FormInput{Name: "Weekly news", ContactTypeID: strconv.FormatInt(ct.ID, 10), DoubleOptIn: double,
		Fields: []string{"company"}, Language: "fr"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := web.New(ctx, svc, web.Options{BaseURL: "http://localhost:8080"})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{ErrorHandler: web.ErrorHandler, DisableStartupMessage: true, StreamRequestBody: true, DisablePreParseMultipartForm: true})
	w.Mount(app)
	tt, _ := t.(*testing.T) // nil for a fuzz test, which calls the app itself
	return &testApp{t: tt, app: app, svc: svc}, fm
}

func TestHostedFormPage(t *testing.T) {
	t.Parallel()
	a, fm := formApp(t, "1")
	c := a.client()
	r := c.get("/f/" + fm.PublicID)
	if r.status != 200 {
		t.Fatalf("page: %d", r.status)
	}
	if lang := attr(first(r.doc, "html"), "lang"); lang != "fr" {
		t.Fatalf("lang %q", lang)
	}
	if first(r.doc, `input[name="email"]`) == nil || first(r.doc, `input[name="company"]`) == nil ||
		first(r.doc, `input[name="website"]`) == nil || value(r.doc, `input[name="ts"]`) == "" {
		t.Fatalf("form fields missing: %s", r.body)
	}
	if r.header.Get("X-Frame-Options") != "DENY" {
		t.Fatal("the hosted page may be framed")
	}
	// The snippet's post: another site, no cookies, no CSRF token, no time
	// field.
	snippet := url.Values{"email": {"ann@example.com"}, "first_name": {"Ann"}, "company": {"Acme"}, "website": {""}}
	r = a.client().do("POST", "/f/"+fm.PublicID, snippet, false, "Origin", "https://shop.example.com")
	if r.status != 200 || !strings.Contains(r.body, "Consultez votre boîte de réception pour confirmer.") {
		t.Fatalf("snippet post (answered in the form's French): %d %s", r.status, r.body)
	}
	// JSON, and the same answer for the known address.
	r = a.client().do("POST", "/f/"+fm.PublicID, snippet, false, "Accept", "application/json")
	if r.status != 200 || strings.TrimSpace(r.body) != `{"message":"Check your inbox to confirm.","status":"success"}` {
		t.Fatalf("JSON post: %d %s", r.status, r.body)
	}
	// The hosted page's time field, sent back at once: refused.
	fast := url.Values{"email": {"bot@example.com"}, "ts": {value(c.get("/f/"+fm.PublicID).doc, `input[name="ts"]`)}}
	r = a.client().do("POST", "/f/"+fm.PublicID, fast, false)
	if r.status != http.StatusUnprocessableEntity || first(r.doc, ".alert-error") == nil {
		t.Fatalf("fast post: %d %s", r.status, r.body)
	}
	r = a.client().do("POST", "/f/"+fm.PublicID, url.Values{"email": {"nope"}}, false, "Accept", "application/json")
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "The email must be a valid email address.") {
		t.Fatalf("bad address: %d %s", r.status, r.body)
	}
	if r := a.client().do("POST", "/f/nope", snippet, false, "Accept", "application/json"); r.status != 404 {
		t.Fatalf("unknown form: %d", r.status)
	}
	for _, m := range []string{"GET", "HEAD", "POST"} {
		if r := a.client().do(m, "/c/unknown-token", nil, false); r.status != 404 {
			t.Fatalf("%s unknown link: %d", m, r.status)
		}
	}
	// The console keeps its CSRF check: a post without the token is refused.
	if r := a.client().do("POST", "/contacts/types", url.Values{"name": {"x"}}, false); r.status < 400 {
		t.Fatalf("console post without a token: %d", r.status)
	}
}

// FuzzPublicFormPost posts arbitrary bodies to a hosted form: never a
// 5xx, and nothing stored with a control character.
func FuzzPublicFormPost(f *testing.F) {
	a, fm := formApp(f, "0")
	for _, seed := range []struct{ ct, body string }{
		{"application/x-www-form-urlencoded", "email=a%40example.com&first_name=A&company=Acme"},
		{"application/x-www-form-urlencoded", "email=b%40example.com&first_name=%0D%0ABcc%3A+x&company=%00"},
		{"application/x-www-form-urlencoded", "email=c%40example.com&company=%FF%FE&last_name=%E2%80%A8"},
		{"application/x-www-form-urlencoded", "email=d%40example.com&groups%5B%5D=1&groups%5B%5D=x&ts=123.abc"},
		{"multipart/form-data; boundary=xx", "--xx\r\nContent-Disposition: form-data; name=\"email\"\r\n\r\ne@example.com\r\n--xx--\r\n"},
		{"application/json", `{"email":"f@example.com"}`},
		{"text/plain", strings.Repeat("a", 70000)},
		{"application/x-www-form-urlencoded", "email=" + strings.Repeat("x", 300) + "%40example.com"},
		{"application/x-www-form-urlencoded", "email=g%40example.com&company=" + strings.Repeat("%C3%A9", 40000)},
	} {
		f.Add(seed.ct, seed.body, false)
		f.Add(seed.ct, seed.body, true)
	}
	f.Fuzz(func(t *testing.T, ct, body string, js bool) {
		// A header a client could not send is no test of the handler.
		ct = strings.Map(func(r rune) rune {
			if r < 0x20 || r >= 0x7f {
				return -1
			}
			return r
		}, ct)
		req := httptest.NewRequest("POST", "/f/"+fm.PublicID, strings.NewReader(body))
		req.Header.Set("Content-Type", ct)
		if js {
			req.Header.Set("Accept", "application/json")
		}
		resp, err := a.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%d for %q %q", resp.StatusCode, ct, body)
		}
		var cs []models.Contact
		if err := a.svc.DB.R.Where("user_id = ?", fm.UserID).Find(&cs).Error; err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			for _, v := range []string{c.Email, c.FirstName, c.LastName, string(c.CustomFields), c.Consent.UserAgent} {
				if strings.ContainsFunc(v, func(r rune) bool {
					return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == unicode.ReplacementChar
				}) {
					t.Fatalf("stored %q (from %q %q)", v, ct, body)
				}
			}
		}
	})
}
