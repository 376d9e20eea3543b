package service_test

import (
	"errors"
	"mime"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/smtptest"
)

// mailTo is the last message the sink took for rcpt, with its decoded
// subject and HTML part.
func (f *formsFix) mailTo(t *testing.T, rcpt string, n int) (subject, htmlPart string) {
	t.Helper()
	if !f.smtp.WaitCount(n, 5*time.Second) {
		t.Fatalf("%d mails, want %d", f.smtp.Count(), n)
	}
	var last *smtptest.Message
	for _, m := range f.smtp.Messages() {
		if m.To == rcpt {
			last = &m
		}
	}
	if last == nil {
		t.Fatalf("no mail to %s", rcpt)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(last.Header().Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	htmlPart, _ = parts(t, last.Data)
	return subject, strings.ReplaceAll(htmlPart, "\r\n", "\n")
}

// TestFormConfirmationMailSpeaksThePersonsLanguage: the confirmation mail
// speaks the contact's language, else the form's, else the sign-up's
// Accept-Language, else English; the confirmation keeps it for the link's
// page.
func TestFormConfirmationMailSpeaksThePersonsLanguage(t *testing.T) {
	t.Parallel()
	f := newFormsFix(t, service.FormLimits{})
	save := func(lang string) *models.Form {
		t.Helper()
		fm, err := f.svc.Forms.Save(f.ctx, f.acct, service.FormInput{Name: "Weekly news", ContactTypeID: idStr(f.typeID), Language: lang})
		if err != nil {
			t.Fatal(err)
		}
		return fm
	}
	none, de := save(""), save("de")
	signup := func(fm *models.Form, email, accept string) {
		t.Helper()
		in := person("198.51.100.7")
		in.Email, in.AcceptLanguage = email, accept
		if _, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, in); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, tc := range []struct {
		name, email, accept string
		form                *models.Form
		lang                string
		subject, button     string
	}{
		{"browser ja", "hana@example.com", "ja,en;q=0.5", none, "ja", "登録の確認をお願いします", "はい、登録します"},
		{"form de over browser fr", "jonas@example.com", "fr-FR,fr;q=0.9", de, "de", "Bitte bestätigen Sie Ihr Abonnement", "Ja, ich möchte mich anmelden"},
		{"nothing", "ann@example.com", "", none, "en", "Please confirm your subscription", "Yes, subscribe me"},
	} {
		signup(tc.form, tc.email, tc.accept)
		n++
		subject, body := f.mailTo(t, tc.email, n)
		if subject != tc.subject || !strings.Contains(body, `<html lang="`+tc.lang+`">`) || !strings.Contains(body, tc.button) {
			t.Errorf("%s: subject %q, body %s", tc.name, subject, body)
		}
		if !strings.Contains(body, tc.email) || !strings.Contains(body, "Weekly news") {
			t.Errorf("%s: the address or the form's name is missing: %s", tc.name, body)
		}
		var row models.FormConfirmation
		if err := f.svc.DB.R.Where("user_id = ? AND email = ?", f.acct, tc.email).First(&row).Error; err != nil || row.Language != tc.lang {
			t.Errorf("%s: kept language %q (%v)", tc.name, row.Language, err)
		}
		toks := f.tokensTo(tc.email)
		if r, err := f.svc.Forms.Confirm(f.ctx, toks[len(toks)-1], false, hit("HEAD", personUA)); err != nil || r.Language != tc.lang {
			t.Errorf("%s: the link's language %+v %v", tc.name, r, err)
		}
	}
	// The contact's own language comes first: the same address signs up
	// again (after the resend limit) from a Japanese browser.
	if err := f.svc.DB.W.Model(&models.Contact{}).Where("user_id = ? AND email = ?", f.acct, "hana@example.com").Update("language", "pl").Error; err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(service.ResendAfter + time.Minute)
	signup(none, "hana@example.com", "ja")
	n++
	if subject, body := f.mailTo(t, "hana@example.com", n); subject != "Potwierdź swoją subskrypcję" || !strings.Contains(body, `lang="pl"`) {
		t.Errorf("the contact's Polish: subject %q, body %s", subject, body)
	}
}

// TestFormOwnConfirmationMail: a form's own subject and body are sent as
// written (escaped, untranslated, the link where the placeholder was); the
// body must hold the placeholder; both round-trip through save and update.
func TestFormOwnConfirmationMail(t *testing.T) {
	t.Parallel()
	f := newFormsFix(t, service.FormLimits{})
	base := service.FormInput{Name: "Weekly news", ContactTypeID: idStr(f.typeID), Language: "de"}
	for _, tc := range []struct {
		name    string
		subject string
		body    string
		field   string
	}{
		{"no placeholder", "", "Please confirm: click the link.", "confirm_body"},
		{"placeholder misspelt", "", "Confirm: ((confirm_link))", "confirm_body"},
		{"subject with a line break", "Hi\r\nBcc: x@example.com", "", "confirm_subject"},
		{"subject too long", strings.Repeat("s", 256), "", "confirm_subject"},
		{"body too long", "", strings.Repeat("x", service.MaxConfirmBody) + "((confirm_url))", "confirm_body"},
		{"NUL", "", "a\x00 ((confirm_url))", "confirm_body"},
	} {
		in := base
		in.ConfirmSubject, in.ConfirmBody = tc.subject, tc.body
		_, err := f.svc.Forms.Save(f.ctx, f.acct, in)
		var se *service.Error
		if !errors.As(err, &se) || se.Code != service.CodeValidation || len(se.Fields[tc.field]) == 0 {
			t.Errorf("%s: %v, want a problem of %s", tc.name, err, tc.field)
		}
	}
	in := base
	in.ConfirmSubject = `Bitte bestätigen <b>jetzt</b> & "gleich"`
	in.ConfirmBody = "Hallo <script>alert(1)</script> & willkommen!\r\n\r\nBitte hier klicken:\n((confirm_url))\nDanke"
	fm, err := f.svc.Forms.Save(f.ctx, f.acct, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.Forms.Get(f.ctx, f.acct, fm.ID)
	if err != nil || got.ConfirmSubject != in.ConfirmSubject || got.ConfirmBody != strings.ReplaceAll(in.ConfirmBody, "\r\n", "\n") {
		t.Fatalf("stored %q %q (%v)", got.ConfirmSubject, got.ConfirmBody, err)
	}
	sign := person("198.51.100.8")
	sign.Email, sign.AcceptLanguage = "ben@example.com", "ja"
	if _, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, sign); err != nil {
		t.Fatal(err)
	}
	subject, body := f.mailTo(t, "ben@example.com", 1)
	toks := f.tokensTo("ben@example.com")
	if len(toks) != 1 {
		t.Fatalf("tokens %v in %s", toks, body)
	}
	link := "http://herald.test/c/" + toks[0]
	if subject != in.ConfirmSubject {
		t.Errorf("subject %q, want it as written", subject)
	}
	for _, want := range []string{
		"Hallo &lt;script&gt;alert(1)&lt;/script&gt; &amp; willkommen!",
		`<a href="` + link + `"`,
		">" + link + "</a><br>\nDanke",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q: %s", want, body)
		}
	}
	for _, never := range []string{"<script>", "Bestätigen Sie Ihr Abonnement", "登録", "((confirm_url))", `lang="`} {
		if strings.Contains(body, never) {
			t.Errorf("body holds %q: %s", never, body)
		}
	}
	// The preview shows the same, with a sample link.
	ps, ph, err := f.svc.Forms.ConfirmationPreview(f.ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	if ps != in.ConfirmSubject || !strings.Contains(ph, "&lt;script&gt;") || !strings.Contains(ph, "http://herald.test/c/sample-token") {
		t.Errorf("preview %q %s", ps, ph)
	}
	// Update: empty is herald's own mail again.
	up := base
	up.ID = idStr(fm.ID)
	if _, err := f.svc.Forms.Update(f.ctx, f.acct, up); err != nil {
		t.Fatal(err)
	}
	got, err = f.svc.Forms.Get(f.ctx, f.acct, fm.ID)
	if err != nil || got.ConfirmSubject != "" || got.ConfirmBody != "" {
		t.Fatalf("after update %+v (%v)", got, err)
	}
	if ps, ph, _ := f.svc.Forms.ConfirmationPreview(f.ctx, got); ps != "Bitte bestätigen Sie Ihr Abonnement" || !strings.Contains(ph, `lang="de"`) {
		t.Errorf("default preview %q %s", ps, ph)
	}
}
