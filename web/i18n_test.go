package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"herald/i18n"
	"herald/models"
)

// recipientTokens sends a single send to ann@example.com (whose contact
// speaks German) and bob@example.org (no language) by writing their
// ledger rows, and returns the tracking token of each.
func recipientTokens(t *testing.T, s *sendSetup) map[string]string {
	t.Helper()
	ss := s.create("Languages")
	sent := models.NewTimestamp(time.Now().Add(-time.Hour))
	s.exec("UPDATE single_sends SET status = 3, resolved = 1, triggered = 2, delivered = 2, unsubscribe_group_id = ?, sent_at = ? WHERE id = ?", s.group, sent, ss.ID)
	s.exec("UPDATE contacts SET language = 'de' WHERE user_id = ? AND email = 'ann@example.com'", s.acct)
	tok := map[string]string{}
	for _, email := range []string{"ann@example.com", "bob@example.org"} {
		s.exec("INSERT INTO send_messages (send_id, user_id, contact_id, email, state, sent_at) SELECT ?, ?, id, email, 2, ? FROM contacts WHERE user_id = ? AND email = ?",
			ss.ID, s.acct, sent, s.acct, email)
		var m models.SendMessage
		if err := s.a.svc.DB.R.Where("send_id = ? AND email = ?", ss.ID, email).First(&m).Error; err != nil {
			t.Fatal(err)
		}
		if m.ContactID == nil {
			t.Fatalf("%s: no contact behind the message", email)
		}
		k, err := s.a.svc.Tracking.Token(context.Background(), m.ID)
		if err != nil {
			t.Fatal(err)
		}
		tok[email] = k
	}
	return tok
}

// page checks a public page's language: <html lang>, dir, Content-Language
// and the heading, in the words of the catalogue.
func wantLanguage(t *testing.T, r *response, lang, heading string) {
	t.Helper()
	h := first(r.doc, "html")
	if h == nil || attr(h, "lang") != lang || attr(h, "dir") != "ltr" {
		t.Fatalf("<html> of the page in %s: %v\n%.1500s", lang, h, r.body)
	}
	if got := r.header.Get("Content-Language"); got != lang {
		t.Errorf("Content-Language %q, want %s", got, lang)
	}
	if !strings.Contains(r.header.Get("Vary"), "Accept-Language") {
		t.Errorf("Vary %q lacks Accept-Language", r.header.Get("Vary"))
	}
	if h1 := first(r.doc, "h1"); h1 == nil || strings.TrimSpace(text(h1)) != heading {
		t.Errorf("<h1> in %s: %q, want %q", lang, text(h1), heading)
	}
}

// TestPreferencesSpeakTheRecipientsLanguage: the contact's language wins
// over the browser's; without one the browser's Accept-Language is
// spoken; without that, English.
func TestPreferencesSpeakTheRecipientsLanguage(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	tok := recipientTokens(t, s)
	c := s.c
	de, _ := i18n.Match("de")
	fr, _ := i18n.Match("fr")

	r := c.do("GET", "/u/"+tok["ann@example.com"], nil, false, "Accept-Language", "fr")
	wantStatus(t, r, http.StatusOK)
	wantLanguage(t, r, "de", "E-Mail-Einstellungen")
	for _, want := range []string{"Wählen Sie, was ", "ann@example.com", "Einstellungen speichern", "Von allem abmelden", "Sie erhalten noch E-Mails von 1 Liste."} {
		if !strings.Contains(r.body, want) {
			t.Errorf("German page lacks %q", want)
		}
	}
	if got := text(first(r.doc, "p.lead strong")); got != "ann@example.com" {
		t.Errorf("the address is not emphasised: %q", got)
	}
	// The page names whose mail it is: the send's sender.
	if got := text(first(r.doc, "#prefs-from")); got != de.T("prefs.from", "Name", "Shop") || got != "E-Mails von Shop" {
		t.Errorf("the sender is not named: %q", got)
	}

	r = c.do("GET", "/u/"+tok["bob@example.org"], nil, false, "Accept-Language", "fr-CH, fr;q=0.9, en;q=0.5")
	wantLanguage(t, r, "fr", fr.T("prefs.title"))
	if !strings.Contains(r.body, "Enregistrer mes préférences") {
		t.Errorf("French page lacks its button:\n%.2000s", r.body)
	}

	// A group whose description only repeats its name shows the name once.
	s.exec("UPDATE unsubscribe_groups SET description = group_name WHERE id = ?", s.group)
	r = c.get("/u/" + tok["bob@example.org"])
	wantLanguage(t, r, "en", "Email preferences")
	for _, l := range all(r.doc, "#preferences label") {
		if sm := first(l, "small"); sm != nil && strings.EqualFold(text(sm), text(first(l, "strong"))) {
			t.Errorf("the group reads %q twice", text(sm))
		}
	}

	// Saving keeps the language: the page after the redirect says so in German.
	r = c.do("POST", "/u/"+tok["ann@example.com"], url.Values{"save": {"1"}, "leave[]": {itoa(s.group)}}, false)
	if r.status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", r.status, r.body)
	}
	r = c.do("GET", r.location(), nil, false, "Accept-Language", "en")
	wantLanguage(t, r, "de", "E-Mail-Einstellungen")
	for _, want := range []string{de.T("prefs.saved"), "Sie erhalten noch E-Mails von 0 Listen."} {
		if !strings.Contains(r.body, want) {
			t.Errorf("saved German page lacks %q", want)
		}
	}
}

// TestPublicPagesInEveryLanguage requests the preference page and the
// error pages of the recipients' routes in each supported language.
func TestPublicPagesInEveryLanguage(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	tok := recipientTokens(t, s)
	c := s.c
	for _, lang := range i18n.Supported() {
		l, _ := i18n.Match(lang)
		r := c.do("GET", "/u/"+tok["bob@example.org"], nil, false, "Accept-Language", lang)
		wantStatus(t, r, http.StatusOK)
		wantLanguage(t, r, lang, l.T("prefs.title"))
		if !strings.Contains(r.body, l.T("prefs.save")) || !strings.Contains(r.body, l.N("prefs.receiving", 1)) {
			t.Errorf("%s: the page lacks its words", lang)
		}
		for _, path := range []string{"/u/nope", "/t/c/nope/0", "/m/nope", "/t/c/" + tok["bob@example.org"] + "/9"} {
			r := c.do("GET", path, nil, false, "Accept-Language", lang)
			if r.status != http.StatusNotFound {
				t.Fatalf("%s %s: %d", lang, path, r.status)
			}
			if path == "/u/nope" { // the preference page itself says the link is unknown
				wantLanguage(t, r, lang, l.T("prefs.title"))
				continue
			}
			wantLanguage(t, r, lang, l.T("error.404.title"))
			if first(r.doc, "#public-error") == nil || first(r.doc, "nav") != nil || !strings.Contains(r.body, l.T("error.code", "Status", "404")) {
				t.Errorf("%s %s: not the public error page:\n%.1500s", lang, path, r.body)
			}
		}
	}
	// An unknown token on the form's POST: the public page too, not the console's.
	r := c.do("POST", "/u/nope", url.Values{"save": {"1"}}, false, "Accept-Language", "ja")
	if r.status != http.StatusNotFound {
		t.Fatalf("POST unknown: %d", r.status)
	}
	wantLanguage(t, r, "ja", "ページが見つかりません")
}
