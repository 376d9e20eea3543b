package web_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"herald/models"
	"herald/service"
	"herald/web"
	"herald/world"
)

// place is a country, one of its states and one of that state's cities.
func place(t *testing.T) (world.Country, world.State, world.City) {
	t.Helper()
	ct, ok := world.LookupCountry("DE")
	if !ok {
		t.Fatal("no Germany in the world data")
	}
	for _, s := range world.States(ct.ID) {
		if cs := world.Cities(ct.ID, s.ID); len(cs) > 0 {
			return ct, s, cs[0]
		}
	}
	t.Fatal("no German state with cities")
	return ct, world.State{}, world.City{}
}

func TestSenders(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	ct, st, ci := place(t)

	r := c.get("/senders")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#senders-list .empty") == nil || first(r.doc, `a.nav-link.is-active[href="/senders"]`) == nil {
		t.Fatalf("empty page:\n%.3000s", r.body)
	}

	// The form: countries offered; choosing one loads its states (ids),
	// choosing a state its cities, and empties the city select out of band.
	r = c.get("/senders/new")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `#sender-country option[value="`+itoa(ct.ID)+`"]`) == nil {
		t.Fatal("the country select lacks Germany")
	}
	if attr(first(r.doc, "#sender-country"), "hx-get") != "/senders/states" {
		t.Fatal("the country select does not load states")
	}
	r = c.hxGet("/senders/states?country_id=" + itoa(ct.ID))
	if first(r.doc, `option[value="`+itoa(st.ID)+`"]`) == nil || first(r.doc, `select#sender-city[hx-swap-oob="innerHTML"]`) == nil {
		t.Fatalf("states answer:\n%.2000s", r.body)
	}
	r = c.hxGet("/senders/cities?country_id=" + itoa(ct.ID) + "&state_id=" + itoa(st.ID))
	if first(r.doc, `option[value="`+itoa(ci.ID)+`"]`) == nil {
		t.Fatalf("cities answer lacks %s", ci.Name)
	}

	// Validation: messages beside the fields, values kept (htmx: the form).
	r = c.hxPost("/senders", url.Values{"from_name": {"Ada"}, "from_email": {"not-an-address"}, "country_id": {itoa(ct.ID)}, "state_id": {itoa(st.ID)}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	for _, id := range []string{"sender-from-email-error", "sender-reply-to-error", "sender-nickname-error", "sender-address1-error"} {
		if first(r.doc, "#"+id) == nil {
			t.Errorf("no message %s\n%.3000s", id, r.body)
		}
	}
	// In the form's words, never the API's parameter names.
	for id, want := range map[string]string{
		"sender-from-email-error": "The from email must be a valid email address.",
		"sender-reply-to-error":   "Enter the reply-to email address.",
		"sender-nickname-error":   "Give this sender a nickname.",
		"sender-address1-error":   "Enter the company address.",
	} {
		if got := texts(r.doc, "#"+id+" li"); !slices.Equal(got, []string{want}) {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	if value(r.doc, "#sender-from-name") != "Ada" || first(r.doc, `#sender-state option[value="`+itoa(st.ID)+`"][selected]`) == nil {
		t.Fatal("the form lost its values")
	}
	r = c.post("/senders", url.Values{"from_name": {"Ada"}, "country_id": {"999999"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "#sender-country-error") == nil || first(r.doc, "nav.nav") == nil {
		t.Fatal("plain post: no whole page with the country's error")
	}
	if got := texts(r.doc, "#sender-country-error li"); !slices.Equal(got, []string{"Choose a country."}) {
		t.Errorf("country: %q", got)
	}
	r = c.post("/senders", url.Values{"company_address2": {strings.Repeat("x", 300)}})
	if got := texts(r.doc, "#sender-address2-error li"); !slices.Equal(got, []string{"The second line of the company address may not be greater than 255 characters."}) {
		t.Errorf("address line 2: %q", got)
	}

	// Create: ids are stored; the sender's page follows, with the mail sent.
	form := url.Values{
		"from_name": {"Ada at Example"}, "from_email": {"news@example.com"}, "reply_to_email": {"ada@example.com"},
		"nickname": {"News"}, "country_id": {itoa(ct.ID)}, "state_id": {itoa(st.ID)}, "city_id": {itoa(ci.ID)},
		"zip_code": {"10115"}, "company_address": {"1 Main Street"},
	}
	r = c.post("/senders", form)
	wantRedirect(t, r, "/senders/")
	page := r.location()
	var s *models.Sender
	_ = a.svc.Senders.Each(context.Background(), acct, service.ListFilter{}, func(x *models.Sender) error { s = x; return nil })
	if s == nil || s.CountryID != ct.ID || s.StateID != st.ID || s.CityID != ci.ID {
		t.Fatalf("stored %+v", s)
	}
	r = c.get(page)
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#flash .flash-success")); !strings.Contains(got, "verification link") {
		t.Fatalf("flash %q", got)
	}
	if got := text(first(r.doc, ".sender-status .badge")); got != "Waiting for verification" {
		t.Fatalf("badge %q", got)
	}
	if !strings.Contains(text(first(r.doc, ".sender-status")), "sent ") {
		t.Fatal("no time of the verification mail")
	}
	for _, p := range []string{"DKIM", "SPF", "DMARC"} {
		rec := first(r.doc, "#dns-"+p)
		if rec == nil || first(rec, "pre.code-block code") == nil || first(rec, "button[data-copy]") == nil || text(first(rec, "p.help")) == "" {
			t.Fatalf("record %s missing or incomplete", p)
		}
	}
	if !strings.Contains(text(first(r.doc, "#dns-DKIM")), "v=DKIM1") || !strings.Contains(text(first(r.doc, "#dns-SPF")), "v=spf1") ||
		!strings.Contains(text(first(r.doc, "#dns-DMARC")), "_dmarc.example.com") {
		t.Fatalf("records:\n%s", text(first(r.doc, ".dns-card")))
	}
	if !strings.Contains(text(first(r.doc, ".details")), ci.Name) {
		t.Fatal("the page does not name the city")
	}

	// The verification mail is in the outbox.
	r = c.get("/outbox")
	if got := texts(r.doc, "#outbox-list td[data-label=To]"); len(got) != 1 || got[0] != "news@example.com" {
		t.Fatalf("outbox lists %q", got)
	}

	// The list shows the state; resend through htmx answers the state and a flash.
	r = c.get("/senders")
	if got := texts(r.doc, "#senders-list .badge"); len(got) != 1 || got[0] != "Waiting for verification" {
		t.Fatalf("badges %q", got)
	}
	id := itoa(s.ID)
	r = c.hxPost("/senders/"+id+"/resend", nil)
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#sender-status-"+id) == nil || text(first(r.doc, `#flash[hx-swap-oob="true"] .flash-success`)) != "Verification link sent again." {
		t.Fatalf("resend answer:\n%s", r.body)
	}
	if n, _ := a.svc.Outbox.Count(context.Background(), acct); n != 2 {
		t.Fatalf("%d messages in the outbox, want 2", n)
	}

	// Edit: the form shows the stored ids selected.
	r = c.get("/senders/" + id + "/edit")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `#sender-city option[value="`+itoa(ci.ID)+`"][selected]`) == nil || value(r.doc, "#sender-nickname") != "News" {
		t.Fatalf("edit form:\n%.3000s", r.body)
	}
	form.Set("nickname", "Newsletter")
	wantRedirect(t, c.post("/senders/"+id, form), "/senders/"+id)
	if got, _ := a.svc.Senders.Get(context.Background(), acct, s.ID); got.Nickname != "Newsletter" {
		t.Fatalf("nickname %q", got.Nickname)
	}

	// Verified: the badge says so, and no resend button is offered. (The
	// resend above issued a fresh link: read it again.)
	s, _ = a.svc.Senders.Get(context.Background(), acct, s.ID)
	if _, err := a.svc.Senders.Verify(context.Background(), s.VerifyToken); err != nil {
		t.Fatal(err)
	}
	r = c.get("/senders")
	if got := text(first(r.doc, "#senders-list .badge")); got != "Verified" || first(r.doc, "[data-resend]") != nil {
		t.Fatalf("verified badge %q", got)
	}

	// Another account sees none of it.
	b, _ := a.account("Bob", "bob@example.com")
	for _, p := range []string{"/senders/" + id, "/senders/" + id + "/edit"} {
		wantStatus(t, b.get(p), http.StatusNotFound)
	}
	form.Del("_csrf")
	wantStatus(t, b.post("/senders/"+id, form), http.StatusNotFound)
	wantStatus(t, b.hxPost("/senders/"+id+"/resend", nil), http.StatusNotFound)
	wantStatus(t, b.hxPost("/senders/"+id+"/delete", nil), http.StatusNotFound)
	if first(b.get("/senders").doc, "#senders-list tbody tr") != nil {
		t.Fatal("B lists A's sender")
	}

	// Delete through htmx: the list comes back empty, with a flash.
	r = c.hxPost("/senders/"+id+"/delete", url.Values{"q": {""}, "page": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#senders-list .empty") == nil || text(first(r.doc, `#flash[hx-swap-oob="true"]`)) != "Sender deleted." {
		t.Fatalf("after delete:\n%s", r.body)
	}
	wantStatus(t, c.get("/senders/"+id), http.StatusNotFound)
}
