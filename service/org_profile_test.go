package service_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"mime"
	"mime/quotedprintable"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/service"
	"herald/service/servicetest"
)

// testImage is a w×h image encoded as format ("png" or "jpeg").
func testImage(t *testing.T, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		for y := 0; y < h; y++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 200, 255})
		}
	}
	var b bytes.Buffer
	var err error
	if format == "png" {
		err = png.Encode(&b, img)
	} else {
		err = jpeg.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withExif is a JPEG with an APP1 Exif segment (as cameras write, with
// the place a photo was taken) after its start marker.
func withExif(jpg []byte) []byte {
	payload := append([]byte("Exif\x00\x00"), []byte("GPS-SECRET-PLACE")...)
	n := len(payload) + 2
	seg := append([]byte{0xff, 0xe1, byte(n >> 8), byte(n)}, payload...)
	return append(append(append([]byte{}, jpg[:2]...), seg...), jpg[2:]...)
}

func fieldErr(err error, field string) string {
	if e, ok := err.(*service.Error); ok && len(e.Fields[field]) > 0 {
		return e.Fields[field][0]
	}
	return ""
}

// TestOrgProfile: a profile is saved trimmed, its colour in lower case,
// its address on one line with the country's name; a logo is kept
// re-encoded (a JPEG's Exif dropped) under a public name that serves its
// bytes and type; another account sees an empty profile; saving without a
// logo keeps it, "remove" drops it; the change is in the audit log.
func TestOrgProfile(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	ann := servicetest.NewAccount(t, svc, "ann@example.com")
	bob := servicetest.NewAccount(t, svc, "bob@example.com")

	b, err := svc.Profiles.Brand(ctx, ann)
	if err != nil || !b.Empty() {
		t.Fatalf("new account's brand %+v, %v", b, err)
	}
	jpg := withExif(testImage(t, "jpeg", 64, 32))
	p, err := svc.Profiles.Save(ctx, ann, service.ProfileInput{
		CompanyName: "  Northwind <Studio> ", AddressLine1: "1 Rue de la Paix", City: "Paris", PostalCode: "75002",
		CountryID: "250", BrandColor: "#0F766E", Logo: jpg,
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.CompanyName != "Northwind <Studio>" || p.BrandColor != "#0f766e" || p.CountryID != 250 || p.LogoType != "image/jpeg" || len(p.LogoHash) != 32 {
		t.Fatalf("saved %+v", p)
	}
	b, err = svc.Profiles.Brand(ctx, ann)
	if err != nil {
		t.Fatal(err)
	}
	if b.Address != "1 Rue de la Paix, 75002 Paris, France" || b.LogoPath != "/brand/logo/"+p.LogoHash+".jpg" || b.Ink() != "#ffffff" || b.StylePath() != "/brand/color/0f766e.css" {
		t.Fatalf("brand %+v ink %s", b, b.Ink())
	}
	data, ct, err := svc.Profiles.Logo(ctx, p.LogoHash)
	if err != nil || ct != "image/jpeg" {
		t.Fatalf("logo %s, %v", ct, err)
	}
	if bytes.Contains(data, []byte("GPS-SECRET-PLACE")) || bytes.Equal(data, jpg) {
		t.Fatal("the logo was kept as uploaded, Exif and all")
	}
	if cfg, format, err := image.DecodeConfig(bytes.NewReader(data)); err != nil || format != "jpeg" || cfg.Width != 64 || cfg.Height != 32 {
		t.Fatalf("served logo %s %+v, %v", format, cfg, err)
	}
	for _, bad := range []string{"", "0f766e", strings.ToUpper(p.LogoHash), p.LogoHash[:31] + "g"} {
		if _, _, err := svc.Profiles.Logo(ctx, bad); !service.IsNotFound(err) {
			t.Errorf("logo %q: %v", bad, err)
		}
	}
	if b, err := svc.Profiles.Brand(ctx, bob); err != nil || !b.Empty() {
		t.Fatalf("another account's brand %+v, %v", b, err)
	}

	// No logo in the form: the logo stays; remove: it goes.
	if p, err = svc.Profiles.Save(ctx, ann, service.ProfileInput{CompanyName: "Northwind"}); err != nil || p.LogoHash == "" || p.BrandColor != "" || p.CountryID != 0 {
		t.Fatalf("save without logo: %+v, %v", p, err)
	}
	old := p.LogoHash
	if p, err = svc.Profiles.Save(ctx, ann, service.ProfileInput{CompanyName: "Northwind", RemoveLogo: true}); err != nil || p.LogoHash != "" {
		t.Fatalf("remove logo: %+v, %v", p, err)
	}
	if _, _, err := svc.Profiles.Logo(ctx, old); !service.IsNotFound(err) {
		t.Fatalf("removed logo still served: %v", err)
	}
	png1 := testImage(t, "png", 10, 10)
	if p, err = svc.Profiles.Save(ctx, ann, service.ProfileInput{Logo: png1}); err != nil || p.LogoType != "image/png" {
		t.Fatalf("png logo: %+v, %v", p, err)
	}
	rows, _, err := svc.Audit.List(ctx, ann, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 4 || rows[0].Action != "settings.organisation_profile" {
		t.Fatalf("audit rows %+v", rows)
	}
}

// TestOrgProfileValidation: each field's refusal, and nothing is stored
// by a refused save.
func TestOrgProfileValidation(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	ann := servicetest.NewAccount(t, svc, "ann@example.com")
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
	big := make([]byte, service.MaxLogoBytes+1)
	copy(big, testImage(t, "png", 4, 4))
	gif := []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
	truncated := testImage(t, "png", 50, 50)
	truncated = truncated[:len(truncated)/2]
	for _, tc := range []struct {
		name  string
		in    service.ProfileInput
		field string
	}{
		{"line break in name", service.ProfileInput{CompanyName: "A\nB"}, "company_name"},
		{"long name", service.ProfileInput{CompanyName: strings.Repeat("x", 256)}, "company_name"},
		{"NUL in city", service.ProfileInput{City: "Pa\x00ris"}, "city"},
		{"long postal code", service.ProfileInput{PostalCode: strings.Repeat("9", 21)}, "postal_code"},
		{"unknown country", service.ProfileInput{CountryID: "999"}, "country_id"},
		{"country not a number", service.ProfileInput{CountryID: "France"}, "country_id"},
		{"colour without #", service.ProfileInput{BrandColor: "0f766e"}, "brand_color"},
		{"short colour", service.ProfileInput{BrandColor: "#fff"}, "brand_color"},
		{"colour name", service.ProfileInput{BrandColor: "red"}, "brand_color"},
		{"colour with CSS", service.ProfileInput{BrandColor: "#000;}body{x"}, "brand_color"},
		{"svg logo", service.ProfileInput{Logo: svg}, "logo"},
		{"gif logo", service.ProfileInput{Logo: gif}, "logo"},
		{"text logo", service.ProfileInput{Logo: []byte("hello")}, "logo"},
		{"empty logo", service.ProfileInput{Logo: []byte{}}, "logo"},
		{"too large logo", service.ProfileInput{Logo: big}, "logo"},
		{"too wide logo", service.ProfileInput{Logo: testImage(t, "png", service.MaxLogoBytes/100, 1)}, "logo"},
		{"damaged logo", service.ProfileInput{Logo: truncated}, "logo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Profiles.Save(ctx, ann, tc.in)
			if msg := fieldErr(err, tc.field); msg == "" {
				t.Fatalf("no %s problem: %v", tc.field, err)
			}
		})
	}
	if b, err := svc.Profiles.Brand(ctx, ann); err != nil || !b.Empty() {
		t.Fatalf("a refused save stored %+v, %v", b, err)
	}
}

// TestBrandInkContrast: the text colour chosen for any brand colour
// reaches WCAG AA's 4.5:1 (checked over a grid of the RGB cube), and is
// black on light colours, white on dark ones.
func TestBrandInkContrast(t *testing.T) {
	t.Parallel()
	worst := 21.0
	for r := 0; r < 256; r += 15 {
		for g := 0; g < 256; g += 15 {
			for b := 0; b < 256; b += 15 {
				c := fmt.Sprintf("#%02x%02x%02x", r, g, b)
				if ratio := service.Contrast(c, service.InkOn(c)); ratio < worst {
					worst = ratio
				}
			}
		}
	}
	if worst < 4.5 {
		t.Fatalf("worst contrast %.2f", worst)
	}
	for c, want := range map[string]string{"#ffff00": "#000000", "#ffffff": "#000000", "#000080": "#ffffff", "#0f766e": "#ffffff", "#777777": "#000000"} {
		if got := service.InkOn(c); got != want {
			t.Errorf("ink on %s: %s, want %s", c, got, want)
		}
	}
}

// TestOrgPlaceholders: ((org_name)), ((org_address)) and ((org_logo_url))
// are filled from the profile in a real message (HTML-escaped in the
// body, the logo's address absolute) and in previews, and listed among
// the placeholders; a custom field of the same name keeps its meaning.
func TestOrgPlaceholders(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	p, err := f.Svc.Profiles.Save(f.Ctx, f.Acct, service.ProfileInput{CompanyName: "Northwind & <Co>", AddressLine1: "1 Main St",
		City: "Springfield", CountryID: "840", Logo: testImage(t, "png", 8, 8)})
	if err != nil {
		t.Fatal(err)
	}
	in := f.Input("", nil, nil)
	in.Subject = "News from ((org_name))"
	in.TemplateHTML = `<html><body><img src="((org_logo_url))" alt=""><p>((org_name)) · ((org_address))</p>` +
		`<a href="((unsubscribe_preferences))">Preferences</a></body></html>`
	before := f.SMTP.Count()
	if err := f.Svc.SingleSends.SendTest(f.Ctx, f.Acct, in, "me@example.com", f.Svc.Mail); err != nil {
		t.Fatal(err)
	}
	if !f.SMTP.WaitCount(before+1, 5*time.Second) {
		t.Fatal("no test message")
	}
	m := f.SMTP.Messages()[before]
	subject, _ := new(mime.WordDecoder).DecodeHeader(m.Header().Get("Subject"))
	if subject != "[Test] News from Northwind & <Co>" {
		t.Fatalf("subject %q", subject)
	}
	body := decodedBody(t, m.Data)
	logo := f.Svc.Mail.BaseURL + "/brand/logo/" + p.LogoHash + ".png"
	if !strings.Contains(body, "Northwind &amp; &lt;Co&gt; · 1 Main St, Springfield, United States") || !strings.Contains(body, logo) {
		t.Fatalf("body lacks the profile's values (logo %s):\n%s", logo, body)
	}

	names, err := f.Svc.Fields.Placeholders(f.Ctx, f.Acct)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, ","); !strings.HasSuffix(got, "unsubscribe_preferences,org_name,org_address,org_logo_url") {
		t.Fatalf("placeholders %s", got)
	}
	html, err := f.Svc.Designs.Preview(f.Ctx, f.Acct, "<p>((org_name))</p>", 0)
	if err != nil || !strings.Contains(html, "Northwind &amp; &lt;Co&gt;") {
		t.Fatalf("preview %q, %v", html, err)
	}

	// A custom field named org_name: designs keep reading the contact's.
	if _, err := f.Svc.Fields.Create(f.Ctx, f.Acct, service.FieldInput{FieldName: "org_name", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	if names, _ = f.Svc.Fields.Placeholders(f.Ctx, f.Acct); strings.Count(","+strings.Join(names, ",")+",", ",org_name,") != 1 {
		t.Fatalf("placeholders %v", names)
	}
	if html, _ := f.Svc.Designs.Preview(f.Ctx, f.Acct, "<p>[((org_name))]</p>", 0); strings.Contains(html, "Northwind") {
		t.Fatalf("a custom field's placeholder filled from the profile: %q", html)
	}
}

// decodedBody is a message's text with quoted-printable parts decoded
// (enough for checking what the parts say).
func decodedBody(t *testing.T, raw []byte) string {
	t.Helper()
	b, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// TestOrgProfileView: the API's view of a profile has the one-line
// address and the logo's absolute address from the configured base URL
// (none before a logo), and a logo given as text is refused.
func TestOrgProfileView(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t, service.Config{BaseURL: "https://mail.example.com/"})
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "view@example.com")
	v, err := svc.Profiles.View(ctx, acct)
	if err != nil || v.LogoURL != "" || v.Address != "" || v.Profile.CompanyName != "" {
		t.Fatalf("view before a save: %+v %v", v, err)
	}
	_, err = svc.Profiles.Save(ctx, acct, service.ProfileInput{CompanyName: "Shop", LogoNotFile: true})
	if msg := fieldErr(err, "logo"); msg != "The logo must be a file." {
		t.Fatalf("a logo as text: %v", err)
	}
	p, err := svc.Profiles.Save(ctx, acct, service.ProfileInput{CompanyName: "Shop", AddressLine1: "9 Elm Street", City: "Leeds", Logo: testImage(t, "png", 8, 8)})
	if err != nil {
		t.Fatal(err)
	}
	v, err = svc.Profiles.View(ctx, acct)
	if err != nil || v.LogoURL != "https://mail.example.com/brand/logo/"+p.LogoHash+".png" || v.Address != "9 Elm Street, Leeds" || v.Profile.CompanyName != "Shop" {
		t.Fatalf("view after a save: %+v %v", v, err)
	}
}
