package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/web"
)

// TestContactConsentConsole: a contact added in the console records the
// console as its source, with the request's address and browser; the
// contact page shows how each contact came (a form's text and
// confirmation, "Not recorded" for older contacts) and its status.
func TestContactConsentConsole(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	typeID := au.contactType("Customers")
	ctx := context.Background()

	// Added in the console: source console, when, IP and browser.
	c.get("/contacts/new")
	form := url.Values{"contact_type_id": {itoa(typeID)}, "email": {"carl@example.com"}, "country": {"840"}, "_csrf": {c.csrf}}
	r := c.do("POST", "/contacts", form, false, "User-Agent", "ConsentTest/1.0 (console)")
	wantRedirect(t, r, "/contacts")
	var carl models.Contact
	if err := a.svc.DB.R.Where("user_id = ? AND email = ?", acct, "carl@example.com").First(&carl).Error; err != nil {
		t.Fatal(err)
	}
	cs := carl.Consent
	if cs.Source != models.ConsentConsole || cs.At == nil || cs.IP == "" || cs.UserAgent != "ConsentTest/1.0 (console)" || carl.Status != models.ContactConfirmed {
		t.Fatalf("console consent: %+v status %q", cs, carl.Status)
	}
	r = c.get("/contacts/" + itoa(carl.ID) + "/edit")
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#consent-source")); got != "Added in the console" {
		t.Fatalf("source %q\n%.3000s", got, r.body)
	}
	if got := text(first(r.doc, "#consent-user-agent")); got != "ConsentTest/1.0 (console)" {
		t.Fatalf("browser %q", got)
	}
	if text(first(r.doc, "#consent-ip")) != cs.IP || attr(first(r.doc, "#consent-at time"), "datetime") != cs.At.UTC().Format("2006-01-02T15:04:05Z") {
		t.Fatalf("ip or when:\n%s", text(first(r.doc, "#contact-consent")))
	}
	if got := text(first(r.doc, "#contact-status")); got != "Confirmed" {
		t.Fatalf("status %q", got)
	}

	// A contact of a form, not confirmed yet: its text and an unconfirmed status.
	at := models.NewTimestamp(time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC))
	v, err := a.svc.Contacts.Create(ctx, acct, service.ContactInput{ContactTypeID: itoa(typeID), Email: "fay@example.com", Country: "US",
		Consent: models.Consent{Source: models.ConsentForm, FormID: 7, At: &at, IP: "203.0.113.9", UserAgent: "Phone <b>Browser</b>",
			Text: "Yes, send me the <em>monthly</em> letter."}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.svc.DB.W.Exec("UPDATE contacts SET status = ? WHERE id = ?", models.ContactUnconfirmed, v.ID).Error; err != nil {
		t.Fatal(err)
	}
	r = c.get("/contacts/" + itoa(v.ID) + "/edit")
	for sel, want := range map[string]string{
		"#consent-source": "Sign-up form #7", "#consent-ip": "203.0.113.9", "#consent-user-agent": "Phone <b>Browser</b>",
		"#consent-text": "Yes, send me the <em>monthly</em> letter.",
	} {
		if got := text(first(r.doc, sel)); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if first(r.doc, "#consent-text em") != nil || first(r.doc, "#consent-user-agent b") != nil {
		t.Error("consent text reached the page unescaped")
	}
	if st := first(r.doc, "#contact-status .badge"); text(st) != "Unconfirmed" || !hasClass(st, "badge-warning") {
		t.Fatalf("unconfirmed status:\n%s", text(first(r.doc, "#contact-consent")))
	}
	if first(r.doc, "#consent-confirmed-at") != nil {
		t.Error("an unconfirmed contact shows a confirmation time")
	}

	// A contact from before consent was kept.
	old := au.contact(typeID, "old@example.com", "Old", "O", "US", nil)
	if err := a.svc.DB.W.Exec("UPDATE contacts SET consent = ? WHERE id = ?", "{}", old).Error; err != nil {
		t.Fatal(err)
	}
	r = c.get("/contacts/" + itoa(old) + "/edit")
	if got := text(first(r.doc, "#consent-none")); !strings.HasPrefix(got, "Not recorded") || first(r.doc, "#consent-source") != nil {
		t.Fatalf("older contact: %q", got)
	}
}

// TestContactPrivacyConsole: the contact page downloads the privacy
// export of the contact's address (the API's document) and erases it
// behind a confirmation that says what happens; both are in the audit
// log, with the member who asked, and never for another account.
func TestContactPrivacyConsole(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	typeID := au.contactType("Customers")
	readers := au.contactType("Readers")
	ann := au.contact(typeID, "ann@example.com", "Ann", "A", "US", nil)
	annToo := au.contact(readers, "ANN@example.com", "Ann", "B", "US", nil)
	bob := au.contact(typeID, "bob@example.com", "Bob", "B", "US", nil)

	r := c.get("/contacts/" + itoa(ann) + "/edit")
	card := first(r.doc, "#contact-privacy")
	if card == nil {
		t.Fatalf("no privacy card:\n%.3000s", r.body)
	}
	dl := first(card, "a#privacy-export")
	if attr(dl, "href") != "/contacts/"+itoa(ann)+"/privacy-export" || text(dl) != "Download everything herald holds on this address" {
		t.Fatalf("download link %q %q", attr(dl, "href"), text(dl))
	}
	erase := first(card, "form#privacy-erase-form")
	q := attr(erase, "hx-confirm")
	if attr(erase, "action") != "/contacts/"+itoa(ann)+"/erase" || attr(erase, "method") != "post" || q == "" || attr(erase, "data-confirm") != q ||
		!strings.Contains(q, "ann@example.com") || !strings.Contains(q, "cannot be undone") || first(erase, "button#privacy-erase[type=submit]") == nil {
		t.Fatalf("erase form: %q", q)
	}

	// The download: the API's JSON, as a file named by the contact's id.
	r = c.get("/contacts/" + itoa(ann) + "/privacy-export")
	wantStatus(t, r, http.StatusOK)
	if cd := r.header.Get("Content-Disposition"); cd != `attachment; filename="privacy-export-contact-`+itoa(ann)+`.json"` ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("download headers: %q %q", cd, r.header.Get("Content-Type"))
	}
	var doc struct {
		Email    string `json:"email"`
		Erased   bool   `json:"erased"`
		Contacts []struct {
			ID      int64          `json:"id"`
			Consent models.Consent `json:"consent"`
		} `json:"contacts"`
	}
	if err := json.Unmarshal([]byte(r.body), &doc); err != nil {
		t.Fatalf("export: %v\n%.2000s", err, r.body)
	}
	if doc.Email != "ann@example.com" || doc.Erased || len(doc.Contacts) != 2 || doc.Contacts[0].Consent.Source == "" {
		t.Fatalf("export document: %+v", doc)
	}

	// Another account sees neither.
	eve, _ := a.account("Eve", "eve@example.com")
	eve.get("/contacts")
	wantStatus(t, eve.get("/contacts/"+itoa(ann)+"/privacy-export"), http.StatusNotFound)
	wantStatus(t, eve.hxPost("/contacts/"+itoa(ann)+"/erase", nil), http.StatusNotFound)
	// The erasure needs the form's token.
	wantStatus(t, c.do("POST", "/contacts/"+itoa(ann)+"/erase", url.Values{}, false), http.StatusForbidden)
	au.get(ann)

	// Erase (htmx): every contact of the address goes, back to the list.
	c.get("/contacts/" + itoa(ann) + "/edit")
	r = c.hxPost("/contacts/"+itoa(ann)+"/erase", nil)
	if r.status != http.StatusNoContent || r.header.Get("HX-Redirect") != "/contacts?type="+itoa(typeID) {
		t.Fatalf("erase: %d %q\n%s", r.status, r.header.Get("HX-Redirect"), r.body)
	}
	for _, id := range []int64{ann, annToo} {
		if _, err := a.svc.Contacts.Get(context.Background(), acct, id); err == nil {
			t.Fatalf("contact %d survived the erasure", id)
		}
	}
	r = c.get("/contacts?type=" + itoa(typeID))
	if got := text(first(r.doc, "#flash .flash")); !strings.Contains(got, "erased") || strings.Contains(got, "ann@") {
		t.Fatalf("flash %q", got)
	}
	if erased, err := a.svc.Privacy.Erased(context.Background(), acct, "ann@example.com"); err != nil || !erased {
		t.Fatalf("erased: %v %v", erased, err)
	}
	// Added again from the console: refused with the erasure's text.
	form := url.Values{"contact_type_id": {itoa(typeID)}, "email": {"ann@example.com"}, "country": {"840"}}
	r = c.hxPost("/contacts", form)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(text(first(r.doc, "#contact-form")), "The email was erased at the person's request.") {
		t.Fatalf("re-add:\n%.2000s", r.body)
	}

	// Without htmx: a redirect to the list.
	c.get("/contacts/" + itoa(bob) + "/edit")
	wantRedirect(t, c.post("/contacts/"+itoa(bob)+"/erase", nil), "/contacts?type="+itoa(typeID))

	// The audit log: the export and both erasures, by Ada, never the address.
	rows, _, err := a.svc.Audit.List(context.Background(), acct, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range rows {
		if strings.Contains(e.Target+e.Detail, "@example.com") {
			t.Errorf("audit line names the address: %+v", e)
		}
		if e.Action == "contact.privacy_exported" || e.Action == "contact.erased" {
			seen[e.Action]++
			if !strings.HasPrefix(e.Actor, "Ada") {
				t.Errorf("audit actor %q", e.Actor)
			}
		}
	}
	if seen["contact.privacy_exported"] != 1 || seen["contact.erased"] != 2 {
		t.Fatalf("audit: %v", seen)
	}
}

// TestImportBasisConsole: the import form asks where the contacts come
// from (a required choice, "Other" with words); the import's new
// contacts keep it as the basis of their consent, with the import.
func TestImportBasisConsole(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	typeID := au.contactType("Customers")

	r := c.get("/contacts/import")
	set := first(r.doc, "#import-form fieldset#import-basis")
	if set == nil || len(all(set, `input[type=radio][name=basis]`)) != 3 || first(set, `input[name=basis][required]`) == nil || first(set, "input#import-basis-other-text[name=basis_other]") == nil {
		t.Fatalf("basis choice:\n%.3000s", r.body)
	}
	// The basis comes before the file, so the browser sends it first.
	if !strings.Contains(r.body[:strings.Index(r.body, `id="import-file"`)], `name="basis"`) {
		t.Fatal("the basis is not before the file")
	}

	for _, tt := range []struct {
		name    string
		basis   []string
		field   string
		message string
	}{
		{"none", []string{""}, "#import-basis-error", "Choose where these contacts come from."},
		{"other without words", []string{"other", "  "}, "#import-basis-other-text-error", "Say where these contacts come from."},
		{"unknown", []string{"bought"}, "#import-basis-error", "The selected basis is invalid."},
	} {
		r := c.upload(itoa(typeID), "email\nx@example.com\n", uploadOpts{hx: true, fileName: "x.csv", basis: tt.basis})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if got := text(first(r.doc, tt.field)); got != tt.message {
			t.Errorf("%s: %q\n%.2000s", tt.name, got, r.body)
		}
	}
	// A refused type and a missing basis are both said.
	r = c.upload("", "email\nx@example.com\n", uploadOpts{hx: true, fileName: "x.csv", basis: []string{""}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if text(first(r.doc, "#import-basis-error")) == "" || first(r.doc, "#import-type[aria-invalid]") == nil && !strings.Contains(r.body, "contact type") {
		t.Fatalf("both errors:\n%.2000s", r.body)
	}
	// What was chosen stays chosen.
	r = c.upload(itoa(typeID), "email\nx@example.com\n", uploadOpts{hx: true, fileName: "x.csv", basis: []string{"other", ""}})
	if first(r.doc, "#import-basis-other[checked]") == nil {
		t.Fatalf("choice lost:\n%.2000s", r.body)
	}

	for _, tt := range []struct {
		basis []string
		email string
		want  string
	}{
		{[]string{"signed_up"}, "s@example.com", models.ConsentBasisSignedUp},
		{[]string{"customers"}, "k@example.com", models.ConsentBasisCustomers},
		{[]string{"other", " Met at the Lisbon fair "}, "o@example.com", "Met at the Lisbon fair"},
	} {
		r := c.upload(itoa(typeID), "email\n"+tt.email+"\n", uploadOpts{hx: true, fileName: "x.csv", basis: tt.basis})
		wantStatus(t, r, http.StatusOK)
		id := importID(t, r)
		c.waitImport(id)
		var ct models.Contact
		if err := a.svc.DB.R.Where("user_id = ? AND email = ?", acct, tt.email).First(&ct).Error; err != nil {
			t.Fatal(err)
		}
		cs := ct.Consent
		if cs.Source != models.ConsentImport || itoa(cs.ImportID) != id || cs.Basis != tt.want || cs.At == nil || cs.IP == "" {
			t.Fatalf("%s: consent %+v", tt.email, cs)
		}
		// The contact page says it in words.
		r = c.get("/contacts/" + itoa(ct.ID) + "/edit")
		if got := text(first(r.doc, "#consent-source")); got != "CSV import #"+id {
			t.Errorf("source %q", got)
		}
		if got := text(first(r.doc, "#consent-basis")); got == "" || got == models.ConsentBasisSignedUp || got == models.ConsentBasisCustomers {
			t.Errorf("basis shown as %q", got)
		}
	}
}
