package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"herald/models"
	"herald/service"
	"herald/web"
)

// TestFormPages: the console lists, adds, edits (with its live preview
// and snippet) and deletes sign-up forms, scoped to the account.
func TestFormPages(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ann", "ann@example.com")
	ctx := context.Background()
	ct, err := a.svc.ContactTypes.Create(ctx, acct, "Readers")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: "company", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	g, err := a.svc.Groups.Create(ctx, acct, service.GroupInput{GroupName: "News", Description: "d", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	r := c.get("/forms")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `#form-settings select[name="contact_type_id"]`) == nil {
		t.Fatalf("no add form: %s", r.body)
	}
	r = c.post("/forms", url.Values{"name": {""}, "contact_type_id": {strconv.FormatInt(ct.ID, 10)}, "redirect_url": {"javascript:alert(1)"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(r.body, "The redirect url must be a valid URL.") {
		t.Fatalf("no field error: %s", r.body)
	}
	r = c.post("/forms", url.Values{"name": {"Weekly <news>"}, "contact_type_id": {strconv.FormatInt(ct.ID, 10)}, "double_opt_in": {"1"},
		"fields": {"company"}, "group_ids": {strconv.FormatInt(g.ID, 10)}})
	wantStatus(t, r, http.StatusSeeOther)
	detail := r.location()
	var fm models.Form
	if err := a.svc.DB.R.Where("user_id = ?", acct).First(&fm).Error; err != nil {
		t.Fatal(err)
	}
	if fm.DoubleOptIn != 1 || len(fm.Fields) != 1 || len(fm.GroupIDs) != 1 {
		t.Fatalf("saved %+v", fm)
	}
	r = c.get(detail)
	wantStatus(t, r, http.StatusOK)
	snippet := text(first(r.doc, "#form-snippet"))
	for _, want := range []string{`action="http://localhost:8080/f/` + fm.PublicID + `"`, `name="email"`, `name="company"`, `name="groups[]"`, `name="website"`, "Weekly &lt;news&gt;"} {
		if !strings.Contains(snippet, want) {
			t.Errorf("snippet lacks %s:\n%s", want, snippet)
		}
	}
	if strings.Contains(snippet, `name="ts"`) {
		t.Error("the snippet carries a time field")
	}
	if first(r.doc, `#form-preview input[name="company"]`) == nil {
		t.Fatalf("preview lacks the custom field: %s", r.body)
	}
	// The live preview follows the settings as typed, saving nothing.
	r = c.hxPost(detail+"/preview", url.Values{"name": {"Renamed"}, "contact_type_id": {strconv.FormatInt(ct.ID, 10)}})
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `input[name="company"]`) != nil || !strings.Contains(r.body, "Renamed") {
		t.Fatalf("preview: %s", r.body)
	}
	r = c.post(detail, url.Values{"name": {"Renamed"}, "contact_type_id": {strconv.FormatInt(ct.ID, 10)}, "language": {"de"}})
	wantStatus(t, r, http.StatusSeeOther)
	if got, _ := a.svc.Forms.Get(ctx, acct, fm.ID); got.Name != "Renamed" || got.DoubleOptIn != 0 || got.Language != "de" {
		t.Fatalf("updated %+v", got)
	}
	// The form speaks German now: its preview, its snippet and its
	// confirmation mail's preview.
	r = c.get(detail)
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#form-mail-subject")); got != "Bitte bestätigen Sie Ihr Abonnement" {
		t.Errorf("mail preview subject %q", got)
	}
	if srcdoc := attr(first(r.doc, "#form-mail-frame"), "srcdoc"); !strings.Contains(srcdoc, `lang="de"`) || !strings.Contains(srcdoc, "Ja, ich möchte mich anmelden") {
		t.Errorf("mail preview %s", srcdoc)
	}
	if !strings.Contains(text(first(r.doc, "#form-snippet")), "E-Mail-Adresse") || !strings.Contains(text(first(r.doc, "#form-preview")), "Abonnieren") {
		t.Errorf("the snippet or preview is not German: %s", r.body)
	}
	// The own confirmation mail: the placeholder is required; the preview
	// (live, out of band) shows the text escaped.
	own := url.Values{"name": {"Renamed"}, "contact_type_id": {strconv.FormatInt(ct.ID, 10)}, "language": {"de"},
		"confirm_subject": {"Hallo <du>"}, "confirm_body": {"Klick <hier>"}}
	r = c.post(detail, own)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(text(first(r.doc, "#form-settings")), "The confirm body must contain ((confirm_url))") {
		t.Fatalf("no placeholder error: %s", r.body)
	}
	own.Set("confirm_body", "Klick <hier>: ((confirm_url))")
	r = c.hxPost(detail+"/preview", own)
	wantStatus(t, r, http.StatusOK)
	box := first(r.doc, `#form-mail-preview[hx-swap-oob="true"]`)
	if box == nil || text(first(box, "#form-mail-subject")) != "Hallo <du>" ||
		!strings.Contains(attr(first(box, "iframe"), "srcdoc"), "Klick &lt;hier&gt;: <a href=") {
		t.Fatalf("live mail preview: %s", r.body)
	}
	wantStatus(t, c.post(detail, own), http.StatusSeeOther)
	if got, _ := a.svc.Forms.Get(ctx, acct, fm.ID); got.ConfirmSubject != "Hallo <du>" || got.ConfirmBody != "Klick <hier>: ((confirm_url))" {
		t.Fatalf("own mail not saved %+v", got)
	}
	// Another account sees none of it.
	other, _ := a.account("Bob", "bob@example.com")
	if r := other.get(detail); r.status != http.StatusNotFound {
		t.Fatalf("another account's form: %d", r.status)
	}
	if r := other.post(detail+"/delete", nil); r.status != http.StatusNotFound {
		t.Fatalf("another account deletes: %d", r.status)
	}
	// Without the CSRF token, nothing changes.
	if r := c.do("POST", detail+"/delete", url.Values{}, false); r.status < 400 {
		t.Fatalf("delete without a token: %d", r.status)
	}
	wantStatus(t, c.post(detail+"/delete", nil), http.StatusSeeOther)
	if _, err := a.svc.Forms.Get(ctx, acct, fm.ID); !service.IsNotFound(err) {
		t.Fatalf("not deleted: %v", err)
	}
}
