package service_test

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
	"time"

	"herald/service"
)

// htmlOf is the HTML part of a raw message, decoded.
func htmlOf(t *testing.T, raw []byte) string {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(mt, "multipart/") {
		b, _ := io.ReadAll(quotedprintable.NewReader(m.Body))
		return string(b)
	}
	r := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := r.NextPart()
		if err != nil {
			t.Fatalf("no HTML part: %v", err)
		}
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			b, _ := io.ReadAll(p) // multipart.Reader decodes quoted-printable
			return string(b)
		}
	}
}

// TestBrandedConfirmationMail: a form's confirmation mail, which a person
// gets from the account's organisation, carries that account's logo (or
// name), colour and postal address, escaped; a form of an account without
// a profile sends herald's plain mail; the console's preview is the same
// mail.
func TestBrandedConfirmationMail(t *testing.T) {
	t.Parallel()
	f := newFormsFix(t, service.FormLimits{})
	if _, err := f.svc.Profiles.Save(f.ctx, f.acct, service.ProfileInput{
		CompanyName: "Northwind <Studio>", AddressLine1: "1 Rue de la Paix", City: "Paris", PostalCode: "75002",
		CountryID: "250", BrandColor: "#FACC15", Logo: testImage(t, "png", 64, 32),
	}); err != nil {
		t.Fatal(err)
	}
	brand, err := f.svc.Profiles.Brand(f.ctx, f.acct)
	if err != nil {
		t.Fatal(err)
	}
	fm := f.form(t, "1")
	in := person("198.51.100.7")
	in.Email = "ann@example.com"
	if _, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, in); err != nil {
		t.Fatal(err)
	}
	if !f.smtp.WaitCount(1, 5*time.Second) {
		t.Fatal("no confirmation mail")
	}
	body := htmlOf(t, f.smtp.Messages()[0].Data)
	for _, want := range []string{
		`<img src="http://herald.test` + brand.LogoPath + `" alt="Northwind &lt;Studio&gt;"`,
		"Northwind &lt;Studio&gt; · 1 Rue de la Paix, 75002 Paris, France",
		"background:#facc15", "color:#000000", // a light brand colour gets black ink
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the confirmation mail lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "Northwind <Studio>") {
		t.Error("the company name reached the mail unescaped")
	}
	_, preview, err := f.svc.Forms.ConfirmationPreview(f.ctx, fm)
	if err != nil || !strings.Contains(preview, brand.LogoPath) || !strings.Contains(preview, "75002 Paris") {
		t.Errorf("preview without the brand (%v):\n%s", err, preview)
	}

	// An invitation to the account's team carries the same brand.
	ownerCtx := service.WithActor(f.ctx, service.Actor{AccountID: f.acct, Role: service.RoleOwner, Name: "Ada <owner@herald.test>"})
	if _, err := f.svc.Team.Invite(ownerCtx, f.acct, "bob@example.com", service.RoleEditor); err != nil {
		t.Fatal(err)
	}
	if !f.smtp.WaitCount(2, 5*time.Second) {
		t.Fatal("no invitation")
	}
	for _, m := range f.smtp.Messages() {
		if m.To == "bob@example.com" {
			inv := htmlOf(t, m.Data)
			if !strings.Contains(inv, brand.LogoPath) || !strings.Contains(inv, "background:#facc15") || !strings.Contains(inv, "75002 Paris") {
				t.Errorf("the invitation lacks the brand:\n%s", inv)
			}
		}
	}

	// An account without a profile: herald's plain mail.
	g := newFormsFix(t, service.FormLimits{})
	in.Email = "cy@example.com"
	if _, err := g.svc.Forms.Submit(g.ctx, g.form(t, "1").PublicID, in); err != nil {
		t.Fatal(err)
	}
	if !g.smtp.WaitCount(1, 5*time.Second) {
		t.Fatal("no confirmation mail")
	}
	plain := htmlOf(t, g.smtp.Messages()[0].Data)
	if strings.Contains(plain, "<img") || strings.Contains(plain, "Northwind") || !strings.Contains(plain, "background:#3b5bdb") || strings.Contains(plain, " · ") {
		t.Errorf("an account without a profile got a branded mail:\n%s", plain)
	}
}
