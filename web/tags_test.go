package web_test

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"herald/models"
	"herald/service"
	"herald/web"
)

func TestContactTagsConsole(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	typeID := au.contactType("Customers")
	ann := au.contact(typeID, "ann@example.com", "Ann", "A", "US", nil)
	bob := au.contact(typeID, "bob@example.com", "Bob", "B", "US", nil)

	// The contact's page: no tags yet, a field to add some.
	r := c.get("/contacts/" + itoa(ann) + "/edit")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#contact-tags #contact-tags-none") == nil || first(r.doc, `#contact-tags form.tag-add input[name="tags"]`) == nil {
		t.Fatalf("tags card:\n%.3000s", r.body)
	}
	r = c.hxPost("/contacts/"+itoa(ann)+"/tags", url.Values{"tags": {"VIP, trial; vip"}})
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#contact-tags .tag-name"); !reflect.DeepEqual(got, []string{"trial", "vip"}) {
		t.Fatalf("tags after add: %v", got)
	}
	// A refused tag is said beside the field, what was typed kept.
	long := strings.Repeat("x", 65)
	r = c.hxPost("/contacts/"+itoa(ann)+"/tags", url.Values{"tags": {long}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if text(first(r.doc, "#contact-tags-input-error")) == "" || value(r.doc, "#contact-tags-input") != long {
		t.Fatalf("refused tag:\n%s", r.body)
	}
	// Remove one with its button's form.
	r = c.hxPost("/contacts/"+itoa(ann)+"/tags/remove", url.Values{"tag": {"trial"}})
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#contact-tags .tag-name"); !reflect.DeepEqual(got, []string{"vip"}) {
		t.Fatalf("tags after remove: %v", got)
	}
	// Without htmx: back to the page.
	r = c.post("/contacts/"+itoa(bob)+"/tags", url.Values{"tags": {"news"}})
	wantRedirect(t, r, "/contacts/"+itoa(bob)+"/edit")

	// Bulk on the list's selection.
	r = c.get("/contacts")
	if first(r.doc, `#contacts-list-form [data-bulk-tags-add][hx-post="/contacts/tags/add"]`) == nil {
		t.Fatalf("no bulk tag controls:\n%.3000s", r.body)
	}
	r = c.hxPost("/contacts/tags/add", url.Values{"ids": {itoa(ann), itoa(bob)}, "tags": {"Spring"}})
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#flash .flash")); got != "Tagged 2 contacts." {
		t.Fatalf("flash %q", got)
	}
	if got := texts(r.doc, "#contact-"+itoa(bob)+" .row-tags .badge"); !reflect.DeepEqual(got, []string{"news", "spring"}) {
		t.Fatalf("bob's row tags: %v", got)
	}
	r = c.hxPost("/contacts/tags/remove", url.Values{"ids": {itoa(bob)}, "tags": {"news"}})
	wantStatus(t, r, http.StatusOK)
	if got := au.get(bob).Tags; !reflect.DeepEqual(got, []string{"spring"}) {
		t.Fatalf("bob after bulk remove: %v", got)
	}
	wantStatus(t, c.hxPost("/contacts/tags/add", url.Values{"tags": {"x"}}), http.StatusUnprocessableEntity)
	wantStatus(t, c.hxPost("/contacts/tags/add", url.Values{"ids": {itoa(bob)}}), http.StatusUnprocessableEntity)
	wantStatus(t, c.hxPost("/contacts/tags/add", url.Values{"ids": {itoa(bob), "999999"}, "tags": {"x"}}), http.StatusNotFound)

	// Another account's contact is not found.
	other, _ := a.account("Eve", "eve@example.com")
	other.get("/contacts")
	wantStatus(t, other.hxPost("/contacts/"+itoa(ann)+"/tags", url.Values{"tags": {"x"}}), http.StatusNotFound)
	if got := au.get(ann).Tags; !reflect.DeepEqual(got, []string{"spring", "vip"}) {
		t.Fatalf("ann: %v", got)
	}
}

// TestAutomationStartTag: a new automation that starts when a tag is
// added targets the segment of that tag (made once, found again).
func TestAutomationStartTag(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	r := c.get("/automations")
	if first(r.doc, `#automation-create input[name="start_tag"]`) == nil {
		t.Fatalf("no start tag field:\n%.3000s", r.body)
	}
	// A tag needs a contact type.
	r = c.hxPost("/automations", url.Values{"type": {"custom"}, "automation_name": {"Trial"}, "automation_for": {"segments_" + itoa(s.segment)},
		"start_tag": {"trial"}, "unsubscribe_group_id": {"0"}, "exit_criteria": {"0"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if text(first(r.doc, "#automation-create-target-error")) != "Choose the contact type whose contacts get the tag." {
		t.Fatalf("tag without a type:\n%s", r.body)
	}
	for i := 0; i < 2; i++ {
		r = c.hxPost("/automations", url.Values{"type": {"custom"}, "automation_name": {"Trial"}, "automation_for": {"contacts_" + itoa(s.ctype)},
			"start_tag": {" Trial"}, "unsubscribe_group_id": {"0"}, "exit_criteria": {"0"}})
		wantStatus(t, r, http.StatusNoContent)
	}
	var autos []*models.Automation
	if err := s.a.svc.Automations.Each(context.Background(), s.acct, service.ListFilter{}, func(a *models.AutomationCount) error {
		autos = append(autos, &a.Automation)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(autos) != 2 || autos[0].AutomationForTable != models.TargetSegments || autos[0].AutomationFor != autos[1].AutomationFor {
		t.Fatalf("automations: %+v %+v", autos[0], autos[1])
	}
	seg, err := s.a.svc.Segments.Get(context.Background(), s.acct, autos[0].AutomationFor)
	if err != nil || seg.SegmentName != "Tagged trial" || seg.ContactTypeID != s.ctype {
		t.Fatalf("segment %+v %v", seg, err)
	}
}
