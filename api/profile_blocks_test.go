package api_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"

	"herald/service"
	"herald/world"
)

// profileMultipart is a multipart body of fields and, when logo is not
// nil, a file part "logo".
func profileMultipart(t *testing.T, fields url.Values, logo []byte) rawBody {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, vs := range fields {
		for _, v := range vs {
			if err := w.WriteField(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if logo != nil {
		part, err := w.CreateFormFile("logo", "logo.png")
		if err != nil {
			t.Fatal(err)
		}
		part.Write(logo)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return rawBody{contentType: w.FormDataContentType(), body: buf.String()}
}

// smallPNG is a 4×3 PNG.
func smallPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 15, G: 118, B: 110, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type profileMsg struct {
	CompanyName  string  `json:"company_name"`
	AddressLine1 string  `json:"address_line1"`
	AddressLine2 string  `json:"address_line2"`
	City         string  `json:"city"`
	PostalCode   string  `json:"postal_code"`
	CountryID    *int64  `json:"country_id"`
	BrandColor   *string `json:"brand_color"`
	LogoURL      *string `json:"logo_url"`
	Address      string  `json:"address"`
	UpdatedAt    *string `json:"updated_at"`
}

func getProfile(t *testing.T, c *client) profileMsg {
	t.Helper()
	r := c.send("GET", "/api/org-profile", nil)
	if r.Code != 200 || r.Status != "success" {
		t.Fatalf("GET org-profile: %d %s", r.Code, r.raw)
	}
	var p profileMsg
	if err := json.Unmarshal(r.Message, &p); err != nil {
		t.Fatalf("GET org-profile: %v: %s", err, r.raw)
	}
	return p
}

// TestOrgProfileAPI reads and saves the organisation profile: empty before
// a save, the fields and the logo after, the logo kept when none comes and
// removed on request, the service's validation as 422, one account's
// profile never another's.
func TestOrgProfileAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := getProfile(t, e.a)
	if p.CompanyName != "" || p.CountryID != nil || p.BrandColor != nil || p.LogoURL != nil || p.Address != "" || p.UpdatedAt != nil {
		t.Fatalf("profile before any save: %+v", p)
	}
	france, ok := world.LookupCountry("FR")
	if !ok {
		t.Fatal("no France in the world data")
	}
	fields := form("company_name", " Shop Ltd ", "address_line1", "1 rue de Rivoli", "city", "Paris", "postal_code", "75001",
		"country_id", itoa(france.ID), "brand_color", "#0F766E")
	expectOK(t, e.a.send("POST", "/api/org-profile", profileMultipart(t, fields, smallPNG(t))), "Updated Successfully")
	p = getProfile(t, e.a)
	if p.CompanyName != "Shop Ltd" || p.AddressLine1 != "1 rue de Rivoli" || p.City != "Paris" || p.PostalCode != "75001" ||
		p.CountryID == nil || *p.CountryID != france.ID || p.BrandColor == nil || *p.BrandColor != "#0f766e" || p.UpdatedAt == nil {
		t.Fatalf("saved profile: %+v", p)
	}
	if !strings.Contains(p.Address, "1 rue de Rivoli") || !strings.Contains(p.Address, "Paris") || !strings.Contains(p.Address, france.Name) {
		t.Fatalf("one-line address: %q", p.Address)
	}
	if p.LogoURL == nil || !strings.HasPrefix(*p.LogoURL, "http://localhost:8080"+"/brand/logo/") || !strings.HasSuffix(*p.LogoURL, ".png") {
		t.Fatalf("logo_url: %v", p.LogoURL)
	}
	logo := *p.LogoURL

	// Without a logo part the logo stays; the text fields are replaced
	// (one not given becomes empty), by URL-encoded form as by JSON.
	expectOK(t, e.a.send("POST", "/api/org-profile", form("company_name", "Shop", "city", "Lyon")), "Updated Successfully")
	p = getProfile(t, e.a)
	if p.CompanyName != "Shop" || p.City != "Lyon" || p.AddressLine1 != "" || p.CountryID != nil || p.BrandColor != nil || p.LogoURL == nil || *p.LogoURL != logo {
		t.Fatalf("profile after a save without a logo: %+v", p)
	}
	expectOK(t, e.a.send("POST", "/api/org-profile", `{"company_name":"Shop","remove_logo":true}`), "Updated Successfully")
	if p = getProfile(t, e.a); p.LogoURL != nil || p.CompanyName != "Shop" || p.City != "" {
		t.Fatalf("profile after remove_logo: %+v", p)
	}

	// The service's validation, every problem at once; nothing is saved.
	r := e.a.send("POST", "/api/org-profile", form("company_name", "Other", "city", "Ly\non", "country_id", "99999", "brand_color", "teal",
		"postal_code", strings.Repeat("9", 21), "logo", "aGVsbG8="))
	if r.Code != 422 {
		t.Fatalf("invalid profile: %d %s", r.Code, r.raw)
	}
	errs := r.fieldErrors()
	for _, k := range []string{"city", "country_id", "brand_color", "postal_code", "logo"} {
		if len(errs[k]) == 0 {
			t.Fatalf("no error on %s: %s", k, r.raw)
		}
	}
	if len(errs) != 5 || errs["logo"][0] != "The logo must be a file." || errs["brand_color"][0] != "The brand colour must be a colour written #rrggbb, such as #0f766e." {
		t.Fatalf("invalid profile's errors: %s", r.raw)
	}
	expectVAL(t, e.a.send("POST", "/api/org-profile", profileMultipart(t, form("company_name", "Shop"), []byte("GIF89a not a png"))),
		map[string][]string{"logo": {"The logo must be a PNG or JPEG image."}})
	expectVAL(t, e.a.send("POST", "/api/org-profile", profileMultipart(t, form("company_name", "Shop"), bytes.Repeat([]byte{0}, service.MaxLogoBytes+10))),
		map[string][]string{"logo": {"The logo may be at most 512 KB."}})
	if p = getProfile(t, e.a); p.CompanyName != "Shop" || p.City != "" || p.BrandColor != nil {
		t.Fatalf("a refused save changed the profile: %+v", p)
	}

	// Another account's profile is its own.
	if p = getProfile(t, e.b); p.CompanyName != "" || p.UpdatedAt != nil {
		t.Fatalf("account b sees a profile: %+v", p)
	}
}

// TestOrgProfileAPIKeys: a read-only key reads the profile and may not
// change it; a key limited to other areas may do neither; a key given the
// profile area may save it.
func TestOrgProfileAPIKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	expectOK(t, e.a.send("POST", "/api/org-profile", form("company_name", "Shop")), "Updated Successfully")
	ro, _ := e.namedKey(t, e.a, "Reports", service.APIKeyInput{Scope: service.ScopeRead})
	if p := getProfile(t, ro); p.CompanyName != "Shop" {
		t.Fatalf("read-only key's profile: %+v", p)
	}
	expectRefused(t, ro.send("POST", "/api/org-profile", form("company_name", "Changed")), "read-only key saving the profile")
	other, _ := e.namedKey(t, e.a, "Contacts", service.APIKeyInput{Scope: service.ScopeAreas, Areas: []string{"contacts"}})
	expectRefused(t, other.send("GET", "/api/org-profile", nil), "a key of other areas reading the profile")
	expectRefused(t, other.send("POST", "/api/org-profile", form("company_name", "Changed")), "a key of other areas saving the profile")
	reader, _ := e.namedKey(t, e.a, "Profile reader", service.APIKeyInput{Scope: service.ScopeAreas, ReadAreas: []string{"profile"}})
	expectRefused(t, reader.send("POST", "/api/org-profile", form("company_name", "Changed")), "a key reading the profile area saving it")
	if p := getProfile(t, e.a); p.CompanyName != "Shop" {
		t.Fatalf("a refused key changed the profile: %+v", p)
	}
	k, _ := e.namedKey(t, e.a, "Branding", service.APIKeyInput{Scope: service.ScopeAreas, Areas: []string{"profile"}})
	expectOK(t, k.send("POST", "/api/org-profile", form("company_name", "Branded")), "Updated Successfully")
	if p := getProfile(t, e.a); p.CompanyName != "Branded" {
		t.Fatalf("the profile key's save: %+v", p)
	}
}

type blockMsg struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	HTML      string `json:"html"`
	CSS       string `json:"css"`
	CreatedAt string `json:"created_at"`
}

// TestSavedBlocksAPI creates, lists and deletes saved blocks: names unique
// per account whatever their case, the service's limits as 422, another
// account's block not found, a read-only key reading only.
func TestSavedBlocksAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if bs := list[blockMsg](t, e.a.send("GET", "/api/blocks", nil), "blocks"); len(bs) != 0 {
		t.Fatalf("blocks before any: %v", bs)
	}
	r := e.a.send("POST", "/api/blocks", `{"name":" Footer ","html":"<table id=\"f1\"><tr><td>((org_name))</td></tr></table>","css":"#f1{color:#333;}"}`)
	var footer blockMsg
	if r.Code != 200 || json.Unmarshal(r.Message, &footer) != nil || footer.ID == 0 || footer.Name != "Footer" ||
		footer.HTML != `<table id="f1"><tr><td>((org_name))</td></tr></table>` || footer.CSS != "#f1{color:#333;}" || footer.CreatedAt == "" {
		t.Fatalf("create: %d %s", r.Code, r.raw)
	}
	if r := e.a.send("POST", "/api/blocks", form("name", "Banner", "html", "<p>banner</p>")); r.Code != 200 {
		t.Fatalf("create by form: %d %s", r.Code, r.raw)
	}
	expectVAL(t, e.a.send("POST", "/api/blocks", form("name", "FOOTER", "html", "<p>y</p>")),
		map[string][]string{"name": {"The name has already been taken."}})
	expectVAL(t, e.a.send("POST", "/api/blocks", form("name", "", "html", " ")),
		map[string][]string{"name": {"The name field is required."}, "html": {"The html field is required."}})
	expectVAL(t, e.a.send("POST", "/api/blocks", form("name", "Huge", "html", "<p>"+strings.Repeat("x", 1<<20)+"</p>")),
		map[string][]string{"html": {"The block may not be greater than 1 MB."}})
	r = e.a.send("POST", "/api/blocks", form("name", strings.Repeat("n", 101), "html", "<p>x</p>"))
	if errs := r.fieldErrors(); r.Code != 422 || len(errs["name"]) == 0 {
		t.Fatalf("a 101-character name: %d %s", r.Code, r.raw)
	}

	// Another account: its own block of the same name, no sight of a's.
	r = e.b.send("POST", "/api/blocks", form("name", "Footer", "html", "<p>b's footer</p>"))
	var theirs blockMsg
	if r.Code != 200 || json.Unmarshal(r.Message, &theirs) != nil {
		t.Fatalf("b's create: %d %s", r.Code, r.raw)
	}
	bs := list[blockMsg](t, e.a.send("GET", "/api/blocks", nil), "blocks")
	if len(bs) != 2 || bs[0].Name != "Banner" || bs[1].Name != "Footer" || bs[1].ID != footer.ID || bs[1].CSS != footer.CSS {
		t.Fatalf("a's blocks: %+v", bs)
	}
	expectNF(t, e.b.send("DELETE", "/api/blocks/delete?id="+itoa(footer.ID), nil), "Record Not Found")
	expectNF(t, e.a.send("DELETE", "/api/blocks/delete?id=abc", nil), "Record Not Found")

	// A read-only key lists and may not change.
	ro, _ := e.namedKey(t, e.a, "Reports", service.APIKeyInput{Scope: service.ScopeRead})
	if bs := list[blockMsg](t, ro.send("GET", "/api/blocks", nil), "blocks"); len(bs) != 2 {
		t.Fatalf("read-only key's blocks: %+v", bs)
	}
	expectRefused(t, ro.send("POST", "/api/blocks", form("name", "Other", "html", "<p>x</p>")), "read-only key creating a block")
	expectRefused(t, ro.send("DELETE", "/api/blocks/delete?id="+itoa(footer.ID), nil), "read-only key deleting a block")

	expectOK(t, e.a.send("DELETE", "/api/blocks/delete?id="+itoa(footer.ID), nil), "Deleted Successfully")
	expectNF(t, e.a.send("DELETE", "/api/blocks/delete?id="+itoa(footer.ID), nil), "Record Not Found")
	if bs := list[blockMsg](t, e.a.send("GET", "/api/blocks", nil), "blocks"); len(bs) != 1 || bs[0].Name != "Banner" {
		t.Fatalf("a's blocks after the delete: %+v", bs)
	}
	if bs := list[blockMsg](t, e.b.send("GET", "/api/blocks", nil), "blocks"); len(bs) != 1 || bs[0].ID != theirs.ID {
		t.Fatalf("b's blocks: %+v", bs)
	}
}
