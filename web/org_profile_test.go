package web_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/web"
)

// postProfile posts the account page's profile form as the browser
// does (multipart), with logo as its file when not nil.
func (c *client) postProfile(form url.Values, logo []byte) *response {
	c.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	form.Set("_csrf", c.csrf)
	for k, vs := range form {
		for _, v := range vs {
			_ = mw.WriteField(k, v)
		}
	}
	if logo != nil {
		fw, _ := mw.CreateFormFile("logo", "logo.png")
		_, _ = fw.Write(logo)
	}
	mw.Close()
	req := httptest.NewRequest("POST", "/account/organisation", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for k, v := range c.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := c.a.app.Test(req, -1)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	r := &response{status: resp.StatusCode, header: resp.Header, body: b.String()}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		if r.doc, err = parseHTML(r.body); err != nil {
			c.t.Fatal(err)
		}
	}
	return r
}

func pngLogo(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for x := 0; x < 40; x++ {
		img.Set(x, 10, color.RGBA{200, 30, 30, 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestOrgProfileForm: the owner saves the profile with a logo from the
// account page; a refused colour or an SVG logo shows the form again
// (422) with the message beside the field; the preference page is then
// headed by the escaped company name and the logo, painted by the brand
// colour's stylesheet, whose text colour contrasts with it; the logo and
// the stylesheet are served with their types and a year's cache.
func TestOrgProfileForm(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	tok := recipientTokens(t, s)
	c := s.c

	// Before a profile: no brand on the preference page.
	r := c.get("/u/" + tok["bob@example.org"])
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#org-head") != nil || first(r.doc, "body.org-branded") != nil {
		t.Fatal("a brand before any profile")
	}

	r = c.get("/account")
	if first(r.doc, "#org-profile-form") == nil {
		t.Fatal("no profile form for the owner")
	}
	form := url.Values{"company_name": {`Northwind <script>alert(1)</script>`}, "address_line1": {"1 Main St"},
		"city": {"Springfield"}, "postal_code": {"12345"}, "country_id": {"840"}, "brand_color": {"red"}}
	r = c.postProfile(form, nil)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if f := first(r.doc, "#org-color-error"); f == nil || !strings.Contains(text(f), "#rrggbb") {
		t.Fatalf("colour error not beside the field\n%.3000s", r.body)
	}
	if value(r.doc, "#org-city") != "Springfield" {
		t.Fatal("the form lost what was typed")
	}
	form.Set("brand_color", "#FFD60A")
	r = c.postProfile(form, []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`))
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if f := first(r.doc, "#org-logo-error"); f == nil || !strings.Contains(text(f), "PNG or JPEG") {
		t.Fatalf("svg logo not refused\n%.3000s", r.body)
	}
	r = c.postProfile(form, pngLogo(t))
	wantRedirect(t, r, "/account")

	r = c.get("/account")
	if value(r.doc, "#org-color") != "#ffd60a" || first(r.doc, "#org-logo-preview") == nil || first(r.doc, "#org-logo-remove") == nil {
		t.Fatalf("saved profile not shown\n%.3000s", r.body)
	}

	r = c.get("/u/" + tok["bob@example.org"])
	wantStatus(t, r, http.StatusOK)
	if strings.Contains(r.body, "<script>alert") {
		t.Fatal("the company name reached the page unescaped")
	}
	if n := first(r.doc, "#org-name"); n == nil || text(n) != `Northwind <script>alert(1)</script>` {
		t.Fatalf("company name on the preference page: %v\n%.3000s", n, r.body)
	}
	if first(r.doc, "body.org-branded") == nil {
		t.Fatal("the page is not branded")
	}
	if a := first(r.doc, "#org-address"); a == nil || !strings.Contains(text(a), "1 Main St, 12345 Springfield, United States") {
		t.Fatalf("address: %v", a)
	}
	logo := attr(first(r.doc, "#org-logo"), "src")
	if !strings.HasPrefix(logo, "/brand/logo/") || !strings.HasSuffix(logo, ".png") {
		t.Fatalf("logo src %q", logo)
	}
	var sheet string
	for _, l := range all(r.doc, `link[rel="stylesheet"]`) {
		if h := attr(l, "href"); strings.HasPrefix(h, "/brand/color/") {
			sheet = h
		}
	}
	if sheet != "/brand/color/ffd60a.css" {
		t.Fatalf("brand stylesheet %q", sheet)
	}

	r = c.get(sheet)
	wantStatus(t, r, http.StatusOK)
	// #ffd60a is light: black text on it.
	if !strings.Contains(r.body, "--org:#ffd60a") || !strings.Contains(r.body, "--org-ink:#000000") ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "text/css") || !strings.Contains(r.header.Get("Cache-Control"), "immutable") {
		t.Fatalf("stylesheet %s %v", r.body, r.header)
	}
	if service.Contrast("#ffd60a", "#000000") < 4.5 {
		t.Fatal("the ink does not contrast")
	}
	r = c.get("/brand/color/224488.css")
	if !strings.Contains(r.body, "--org-ink:#ffffff") {
		t.Fatalf("ink on a dark colour: %s", r.body)
	}
	for _, bad := range []string{"/brand/color/red.css", "/brand/color/FFD60A.css", "/brand/color/ffd60a;x.css", "/brand/logo/" + strings.TrimSuffix(strings.TrimPrefix(logo, "/brand/logo/"), ".png") + ".jpg"} {
		if r := c.get(bad); r.status != http.StatusNotFound {
			t.Errorf("%s: %d", bad, r.status)
		}
	}

	r = c.get(logo)
	wantStatus(t, r, http.StatusOK)
	if r.header.Get("Content-Type") != "image/png" || !strings.Contains(r.header.Get("Cache-Control"), "max-age=31536000") || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("logo headers %v", r.header)
	}
	if _, f, err := image.Decode(strings.NewReader(r.body)); err != nil || f != "png" {
		t.Fatalf("served logo: %s %v", f, err)
	}
}

// TestOrgProfileInvitationAndViewers: with a company name, the
// invitation mail and its page name the company, not the owner; a viewer
// sees the saved profile, not its form, and the server refuses its post.
func TestOrgProfileInvitationAndViewers(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc := dbtest.Service(t, service.Config{Transport: delivery.NewOutbox(mem)})
	a := newTestAppOn(t, svc, web.Options{})
	owner, acct := a.account("Maria Owner", "maria@example.com")
	if _, err := a.svc.Profiles.Save(context.Background(), acct, service.ProfileInput{CompanyName: "Northwind & Co"}); err != nil {
		t.Fatal(err)
	}
	v := joinTeam(t, a, mem, owner, "vera@example.com", "viewer")
	var subject string
	for _, m := range mem.Messages() {
		if m.To[0] == "vera@example.com" {
			subject = mailText(t, m.Data)
		}
	}
	if !strings.Contains(subject, "Maria Owner invited you to join Northwind & Co on Herald") || strings.Contains(subject, "Maria Owner's team") {
		t.Fatalf("invitation mail:\n%.1500s", subject)
	}
	r := v.get("/account")
	if first(r.doc, "#org-profile-form") != nil {
		t.Fatal("a viewer sees the profile form")
	}
	if d := first(r.doc, "#org-profile-details"); d == nil || !strings.Contains(text(d), "Northwind & Co") {
		t.Fatalf("a viewer does not see the profile\n%.2000s", r.body)
	}
	r = v.postProfile(url.Values{"company_name": {"Evil"}}, nil)
	wantStatus(t, r, http.StatusForbidden)
	if b, _ := a.svc.Profiles.Brand(context.Background(), acct); b.Name != "Northwind & Co" {
		t.Fatalf("a viewer changed the profile: %+v", b)
	}
}

// TestOrgProfileInvitationPage: the invitation's page names the company.
func TestOrgProfileInvitationPage(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc := dbtest.Service(t, service.Config{Transport: delivery.NewOutbox(mem)})
	a := newTestAppOn(t, svc, web.Options{})
	owner, acct := a.account("Maria Owner", "maria@example.com")
	if _, err := a.svc.Profiles.Save(context.Background(), acct, service.ProfileInput{CompanyName: "Northwind"}); err != nil {
		t.Fatal(err)
	}
	owner.get("/team")
	wantRedirect(t, owner.post("/team/invitations", url.Values{"email": {"ed@example.com"}, "role": {"editor"}}), "/team")
	var link string
	for _, m := range mem.Messages() {
		if mm := invitationLinkRE.FindStringSubmatch(mailText(t, m.Data)); mm != nil {
			link = mm[1]
		}
	}
	r := a.client().get(link)
	wantStatus(t, r, http.StatusOK)
	if l := first(r.doc, "#invited-lead"); l == nil || !strings.HasPrefix(text(l), "You are invited to Northwind on Herald") {
		t.Fatalf("invitation page: %v\n%.2000s", l, r.body)
	}
}

// TestOrgProfileInArchive: the archive's list and a send's page are
// headed by the escaped company name and the logo, painted by the brand
// colour's stylesheet, with the postal address at the foot.
func TestOrgProfileInArchive(t *testing.T) {
	t.Parallel()
	w := newArchiveWorld(t)
	c := w.app.client()
	base := "/archive/" + w.pub
	if r := c.get(base); first(r.doc, "#org-head") != nil {
		t.Fatal("a brand before any profile")
	}
	if _, err := w.f.Svc.Profiles.Save(w.f.Ctx, w.f.Acct, service.ProfileInput{CompanyName: "Tom & <Jerry>", AddressLine1: "1 Main St",
		BrandColor: "#1d3557", Logo: pngLogo(t)}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{base, base + "/" + w.utrs[0]} {
		r := c.get(path)
		wantStatus(t, r, http.StatusOK)
		if n := first(r.doc, "#org-name"); n == nil || text(n) != "Tom & <Jerry>" || strings.Contains(r.body, "<Jerry>") {
			t.Fatalf("%s: company name %v\n%.2000s", path, n, r.body)
		}
		if src := attr(first(r.doc, "#org-logo"), "src"); !strings.HasPrefix(src, "/brand/logo/") {
			t.Fatalf("%s: logo %q", path, src)
		}
		if first(r.doc, `link[href="/brand/color/1d3557.css"]`) == nil {
			t.Fatalf("%s: no brand stylesheet", path)
		}
		if a := first(r.doc, "#org-address"); a == nil || !strings.Contains(text(a), "1 Main St") {
			t.Fatalf("%s: address %v", path, a)
		}
	}
	// #1d3557 is dark: white text on it.
	if r := c.get("/brand/color/1d3557.css"); !strings.Contains(r.body, "--org-ink:#ffffff") || service.Contrast("#1d3557", "#ffffff") < 4.5 {
		t.Fatalf("ink: %s", r.body)
	}
}

// TestOrgProfileOnSignupPages: the hosted sign-up page, its answer and the
// confirmation link's page are headed by the form's account's company
// name (escaped) and end with its postal address; another account's
// profile shows on none of them.
func TestOrgProfileOnSignupPages(t *testing.T) {
	t.Parallel()
	a, fm := formApp(t, "1")
	ctx := context.Background()
	if _, err := a.svc.Profiles.Save(ctx, fm.UserID, service.ProfileInput{CompanyName: "Northwind & <Co>", AddressLine1: "1 rue de Rivoli", City: "Paris"}); err != nil {
		t.Fatal(err)
	}
	other, _, err := a.svc.Accounts.Create(ctx, service.AccountInput{Name: "O", Email: "other@example.com", Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.svc.Profiles.Save(ctx, other.ID, service.ProfileInput{CompanyName: "Elsewhere Ltd"}); err != nil {
		t.Fatal(err)
	}
	branded := func(what string, r *response) {
		t.Helper()
		if name := first(r.doc, "#org-name"); name == nil || text(name) != "Northwind & <Co>" {
			t.Fatalf("%s: company name %v\n%.1500s", what, name, r.body)
		}
		if addr := first(r.doc, "#org-address"); addr == nil || !strings.Contains(text(addr), "1 rue de Rivoli") {
			t.Fatalf("%s: postal address %v", what, addr)
		}
		if strings.Contains(r.body, "<Co>") || strings.Contains(r.body, "Elsewhere") {
			t.Fatalf("%s: unescaped name or another account's profile", what)
		}
	}
	branded("hosted page", a.client().get("/f/"+fm.PublicID))
	r := a.client().do("POST", "/f/"+fm.PublicID, url.Values{"email": {"ann@example.com"}}, false)
	wantStatus(t, r, http.StatusOK)
	branded("sign-up answer", r)

	var row models.FormConfirmation
	if err := a.svc.DB.R.Where("form_id = ? AND email = ?", fm.ID, "ann@example.com").First(&row).Error; err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("test-token-brand"))
	if err := a.svc.DB.W.Model(&models.FormConfirmation{}).Where("id = ?", row.ID).Update("token_hash", hex.EncodeToString(sum[:])).Error; err != nil {
		t.Fatal(err)
	}
	branded("confirmation page", a.client().do("GET", "/c/test-token-brand", nil, false))
	branded("confirmed page", a.client().do("POST", "/c/test-token-brand", nil, false))
}
