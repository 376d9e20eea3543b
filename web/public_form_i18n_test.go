package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"herald/models"
	"herald/service"
)

// TestHostedFormSpeaksTheVisitorsLanguage: the hosted page, its answers
// and its field problems speak the form's language, else the browser's
// Accept-Language, else English, with <html lang>; the JSON answer stays
// the API's English.
func TestHostedFormSpeaksTheVisitorsLanguage(t *testing.T) {
	t.Parallel()
	a, fr := formApp(t, "1")
	ctx := context.Background()
	save := func(lang string) *models.Form {
		t.Helper()
		fm, err := a.svc.Forms.Save(ctx, fr.UserID, service.FormInput{Name: "News " + lang, ContactTypeID: strconv.FormatInt(fr.ContactTypeID, 10), Language: lang})
		if err != nil {
			t.Fatal(err)
		}
		return fm
	}
	none, ja, de := save(""), save("ja"), save("de")
	for _, tc := range []struct {
		name   string
		form   *models.Form
		accept string
		lang   string // <html lang>
		email  string // the address field's label
		submit string
	}{
		{"form de", de, "", "de", "E-Mail-Adresse", "Abonnieren"},
		{"form ja over the browser's de", ja, "de-DE,de;q=0.9", "ja", "メールアドレス", "登録する"},
		{"form fr", fr, "ja", "fr", "Adresse e-mail", "S’abonner"},
		{"browser de", none, "de-AT,de;q=0.9,en;q=0.5", "de", "E-Mail-Adresse", "Abonnieren"},
		{"browser ja", none, "ja", "ja", "メールアドレス", "登録する"},
		{"browser nb: not spoken", none, "nb", "en", "Email address", "Subscribe"},
		{"no browser language", none, "", "en", "Email address", "Subscribe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.accept != "" {
				hdr = []string{"Accept-Language", tc.accept}
			}
			r := a.client().do("GET", "/f/"+tc.form.PublicID, nil, false, hdr...)
			if r.status != 200 {
				t.Fatalf("page: %d", r.status)
			}
			if got := attr(first(r.doc, "html"), "lang"); got != tc.lang {
				t.Errorf("<html lang> %q, want %q", got, tc.lang)
			}
			if got := r.header.Get("Content-Language"); got != tc.lang {
				t.Errorf("Content-Language %q, want %q", got, tc.lang)
			}
			if got := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text(first(r.doc, `label[for="f-email"]`))), "*")); got != tc.email {
				t.Errorf("email label %q, want %q", got, tc.email)
			}
			if got := strings.TrimSpace(text(first(r.doc, `button[type="submit"]`))); got != tc.submit {
				t.Errorf("button %q, want %q", got, tc.submit)
			}
		})
	}

	// The answers: thanks, field problems, the unknown form.
	post := func(fm string, v url.Values, hdr ...string) *response {
		t.Helper()
		return a.client().do("POST", "/f/"+fm, v, false, hdr...)
	}
	r := post(ja.PublicID, url.Values{"email": {"hana@example.com"}})
	if got := text(first(r.doc, `[role="status"]`)); r.status != 200 || got != "確認のため、受信トレイをご確認ください。" {
		t.Fatalf("ja thanks: %d %q", r.status, got)
	}
	if got := text(first(r.doc, "h1")); got != "ありがとうございます" {
		t.Fatalf("ja thanks title %q", got)
	}
	r = post(none.PublicID, url.Values{"email": {"nope"}}, "Accept-Language", "de")
	if r.status != 422 || attr(first(r.doc, "html"), "lang") != "de" ||
		!strings.Contains(text(first(r.doc, ".field-errors")), "Geben Sie eine gültige E-Mail-Adresse ein.") {
		t.Fatalf("de field problem: %d %s", r.status, r.body)
	}
	if strings.Contains(r.body, "must be a valid email address") {
		t.Fatal("the API's English message is on a German page")
	}
	r = post(none.PublicID, url.Values{"email": {""}}, "Accept-Language", "ja")
	if r.status != 422 || !strings.Contains(r.body, "この項目は必須です。") || !strings.Contains(r.body, "以下の項目をご確認ください。") {
		t.Fatalf("ja required: %d %s", r.status, r.body)
	}
	r = a.client().do("GET", "/f/no-such-form", nil, false, "Accept-Language", "de")
	if r.status != 404 || attr(first(r.doc, "html"), "lang") != "de" || text(first(r.doc, "h1")) != "Formular nicht gefunden" {
		t.Fatalf("unknown form in de: %d %s", r.status, r.body)
	}
	// The JSON envelope is the API's contract: English whatever the form's language.
	r = post(ja.PublicID, url.Values{"email": {"ken@example.com"}}, "Accept", "application/json", "Accept-Language", "ja")
	if strings.TrimSpace(r.body) != `{"message":"Check your inbox to confirm.","status":"success"}` {
		t.Fatalf("JSON answer: %s", r.body)
	}
	// The consent text kept is the one the snippet showed (the form's language).
	var c models.Contact
	if err := a.svc.DB.R.Where("user_id = ? AND email = ?", fr.UserID, "hana@example.com").First(&c).Error; err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Consent.Text, "登録すると、「News ja」") {
		t.Fatalf("consent text %q", c.Consent.Text)
	}
}

// TestConfirmationPagesSpeakTheSignupsLanguage: the link's pages speak
// the language picked at the sign-up (kept with the confirmation), and an
// unknown link's page the browser's.
func TestConfirmationPagesSpeakTheSignupsLanguage(t *testing.T) {
	t.Parallel()
	a, fr := formApp(t, "1")
	ctx := context.Background()
	fm, err := a.svc.Forms.Save(ctx, fr.UserID, service.FormInput{Name: "Nyheter", ContactTypeID: strconv.FormatInt(fr.ContactTypeID, 10)})
	if err != nil {
		t.Fatal(err)
	}
	// A sign-up from a Japanese browser: its mail (and so its link) is Japanese.
	r := a.client().do("POST", "/f/"+fm.PublicID, url.Values{"email": {"yuki@example.com"}}, false, "Accept-Language", "ja")
	if r.status != 200 {
		t.Fatalf("sign-up: %d %s", r.status, r.body)
	}
	var row models.FormConfirmation
	if err := a.svc.DB.R.Where("form_id = ? AND email = ?", fm.ID, "yuki@example.com").First(&row).Error; err != nil {
		t.Fatal(err)
	}
	if row.Language != "ja" {
		t.Fatalf("kept language %q", row.Language)
	}
	// The token is kept hashed: give the row one the test knows.
	sum := sha256.Sum256([]byte("test-token-ja"))
	if err := a.svc.DB.W.Model(&models.FormConfirmation{}).Where("id = ?", row.ID).Update("token_hash", hex.EncodeToString(sum[:])).Error; err != nil {
		t.Fatal(err)
	}
	// A scanner's GET from a German browser: the button page, in Japanese.
	r = a.client().do("GET", "/c/test-token-ja", nil, false, "Accept-Language", "de", "User-Agent", "Mozilla/5.0 (compatible; Barracuda Sentinel link protection)")
	if r.status != 200 || attr(first(r.doc, "html"), "lang") != "ja" || text(first(r.doc, "h1")) != "登録の確認" ||
		strings.TrimSpace(text(first(r.doc, "form button"))) != "登録を確認する" {
		t.Fatalf("ask page: %d %s", r.status, r.body)
	}
	r = a.client().do("POST", "/c/test-token-ja", nil, false, "Accept-Language", "de")
	if r.status != 200 || attr(first(r.doc, "html"), "lang") != "ja" || text(first(r.doc, "h1")) != "登録が完了しました" {
		t.Fatalf("done page: %d %s", r.status, r.body)
	}
	r = a.client().do("GET", "/c/unknown-token", nil, false, "Accept-Language", "de")
	if r.status != 404 || attr(first(r.doc, "html"), "lang") != "de" || text(first(r.doc, "h1")) != "Link nicht gefunden" {
		t.Fatalf("unknown link: %d %s", r.status, r.body)
	}
}
