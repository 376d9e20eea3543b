package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"herald/web"
)

func TestGroups(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	r := c.get("/suppressions/groups")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#groups-list .empty") == nil {
		t.Fatal("no empty state")
	}
	if first(r.doc, "#group-create-display[checked]") == nil {
		t.Fatal("a new group is not shown by default")
	}

	// Create: the form comes back empty, the table out of band.
	r = c.hxPost("/suppressions/groups", url.Values{"group_name": {"Newsletter"}, "description": {"The weekly letter"}, "is_display": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if value(r.doc, "#group-create-name") != "" || attr(first(r.doc, "#groups-list"), "hx-swap-oob") != "true" {
		t.Fatalf("create answer:\n%s", r.body)
	}
	row := first(r.doc, "#groups-list tbody tr")
	id := strings.TrimPrefix(attr(row, "id"), "group-")
	if text(first(row, ".cell-main")) != "Newsletter" || text(first(row, ".badge")) != "Shown" || text(first(row, "td.cell-num")) != "0" {
		t.Fatalf("row: %s", text(row))
	}
	if got := text(first(r.doc, "#flash .flash")); got != "Group “Newsletter” created." {
		t.Fatalf("flash %q", got)
	}

	// Validation: 422 with the form, each message beside its field.
	r = c.hxPost("/suppressions/groups", url.Values{"group_name": {"  "}, "description": {"x"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := texts(r.doc, "#group-create-name-error li"); !slices.Equal(got, []string{"The group name field is required."}) {
		t.Fatalf("name errors %q\n%s", got, r.body)
	}
	if len(all(r.doc, "#group-create-description-error li")) != 0 || value(r.doc, "#group-create-description") != "x" {
		t.Fatal("the description is wrong or lost")
	}
	if first(r.doc, "#group-create-display[checked]") != nil {
		t.Fatal("the unchecked box came back checked")
	}
	r = c.hxPost("/suppressions/groups", url.Values{"group_name": {strings.Repeat("n", 256)}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := texts(r.doc, "#group-create-name-error li"); !slices.Equal(got, []string{"The group name may not be greater than 255 characters."}) {
		t.Fatalf("name errors %q", got)
	}
	if got := texts(r.doc, "#group-create-description-error li"); !slices.Equal(got, []string{"The description field is required."}) {
		t.Fatalf("description errors %q", got)
	}

	// Inline edit: the row becomes a form; a bad value answers 422 with
	// the row's form and the message beside the field; a good one the row.
	r = c.hxGet("/suppressions/groups/" + id + "/edit")
	wantStatus(t, r, http.StatusOK)
	edit := first(r.doc, "tr.is-editing")
	formID := "group-edit-" + id
	if attr(edit, "id") != "group-"+id || first(edit, "form#"+formID) == nil {
		t.Fatalf("edit row:\n%s", r.body)
	}
	for _, name := range []string{"group_name", "description", "is_display"} {
		n := first(edit, `[name="`+name+`"]`)
		if n == nil || attr(n, "form") != formID {
			t.Fatalf("control %s is not tied to the row's form", name)
		}
	}
	if value(edit, `input[name="group_name"]`) != "Newsletter" {
		t.Fatal("edit row lost the name")
	}

	r = c.hxPost("/suppressions/groups/"+id, url.Values{"group_name": {""}, "description": {"Changed"}, "is_display": {"1"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "tr.is-editing") == nil {
		t.Fatalf("422 without the edit row:\n%s", r.body)
	}
	if got := texts(r.doc, "#group-"+id+"-name-error li"); !slices.Equal(got, []string{"The group name field is required."}) {
		t.Fatalf("edit errors %q", got)
	}
	if value(r.doc, "#group-"+id+"-description") != "Changed" {
		t.Fatal("edit lost the description")
	}

	r = c.hxPost("/suppressions/groups/"+id, url.Values{"group_name": {"Product news"}, "description": {"Changed"}})
	wantStatus(t, r, http.StatusOK)
	row = first(r.doc, "tr#group-"+id)
	if hasClass(row, "is-editing") || text(first(row, ".cell-main")) != "Product news" || text(first(row, ".badge")) != "Hidden" {
		t.Fatalf("saved row: %s", r.body)
	}
	if got := text(first(r.doc, `#flash[hx-swap-oob="true"]`)); got != "Group “Product news” saved." {
		t.Fatalf("flash %q", got)
	}

	// Cancel gives the row back.
	r = c.hxGet("/suppressions/groups/" + id + "/row")
	if row := first(r.doc, "tr#group-"+id); row == nil || hasClass(row, "is-editing") {
		t.Fatalf("cancel: %s", r.body)
	}

	// Without htmx: an edit page, a redirect after saving.
	r = c.get("/suppressions/groups/" + id + "/edit")
	wantStatus(t, r, http.StatusOK)
	if value(r.doc, "form#group-edit #group-edit-name") != "Product news" || first(r.doc, "nav.nav") == nil {
		t.Fatalf("edit page:\n%s", r.body)
	}
	r = c.post("/suppressions/groups/"+id, url.Values{"group_name": {""}, "description": {"d"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if len(texts(r.doc, "#group-edit-name-error li")) != 1 {
		t.Fatalf("edit page errors:\n%s", r.body)
	}
	wantRedirect(t, c.post("/suppressions/groups/"+id, url.Values{"group_name": {"Letters"}, "description": {"d"}, "is_display": {"1"}}), "/suppressions/groups")
	r = c.get("/suppressions/groups")
	if got := text(first(r.doc, "#flash .flash")); got != "Group “Letters” saved." {
		t.Fatalf("flash %q", got)
	}
	if got := texts(r.doc, "#groups-list td.cell-main"); !slices.Equal(got, []string{"Letters"}) {
		t.Fatalf("groups %q", got)
	}
	wantRedirect(t, c.get("/suppressions/groups/"+id+"/row"), "/suppressions/groups")

	// Search.
	c.hxPost("/suppressions/groups", url.Values{"group_name": {"Offers"}, "description": {"Deals"}})
	r = c.hxGet("/suppressions/groups?q=off")
	if got := texts(r.doc, "#groups-list td.cell-main"); !slices.Equal(got, []string{"Offers"}) || first(r.doc, "nav") != nil {
		t.Fatalf("search: %q", got)
	}
}

func TestGroupRecipients(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	c.get("/suppressions/groups")
	r := c.hxPost("/suppressions/groups", url.Values{"group_name": {"Newsletter"}, "description": {"Weekly"}, "is_display": {"1"}})
	id := strings.TrimPrefix(attr(first(r.doc, "#groups-list tbody tr"), "id"), "group-")
	page := "/suppressions/groups/" + id

	r = c.get(page)
	wantStatus(t, r, http.StatusOK)
	if text(first(r.doc, ".page-header h1")) != "Newsletter" || first(r.doc, "#recipients-list .empty") == nil {
		t.Fatalf("recipients page:\n%s", r.body)
	}
	if attr(first(r.doc, "form#recipients-add"), "hx-post") != page+"/recipients" {
		t.Fatal("the add form posts elsewhere")
	}

	r = c.hxPost(page+"/recipients", url.Values{"email_address": {"ann@example.com\nbob@example.com, carol@example.com"}})
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#recipients-list td.cell-main"); !slices.Equal(got, []string{"ann@example.com", "bob@example.com", "carol@example.com"}) {
		t.Fatalf("recipients %q", got)
	}
	// The group's count follows; the global list is another list.
	r = c.get("/suppressions/groups")
	if got := text(first(r.doc, "tr#group-"+id+" td.cell-num")); got != "3" {
		t.Fatalf("count %q", got)
	}
	if first(c.get("/suppressions/global").doc, "#global-list .empty") == nil {
		t.Fatal("group recipients appear on the global list")
	}

	r = c.hxPost(page+"/recipients", url.Values{"email_address": {"nope"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := texts(r.doc, "#recipients-add-email-error li"); !slices.Equal(got, []string{"The email address must be a valid email address."}) {
		t.Fatalf("errors %q", got)
	}

	r = c.hxGet(page + "?q=bob")
	if got := texts(r.doc, "#recipients-list td.cell-main"); !slices.Equal(got, []string{"bob@example.com"}) {
		t.Fatalf("search %q", got)
	}

	r = c.get(page)
	ids := rowIDs(r.doc, "#recipients-list")
	del := attr(first(r.doc, "#recipients-list button[data-delete]"), "hx-post")
	if del != page+"/recipients/"+ids[0]+"/delete" {
		t.Fatalf("delete address %q", del)
	}
	r = c.hxPost(del, nil)
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#recipients-list td.cell-main"); !slices.Equal(got, []string{"bob@example.com", "carol@example.com"}) {
		t.Fatalf("after delete %q", got)
	}
	r = c.hxPost(page+"/recipients/bulk-delete", url.Values{"ids": ids[1:]})
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#recipients-list .empty") == nil {
		t.Fatalf("after bulk delete:\n%s", r.body)
	}
	// A bulk delete naming a missing id deletes nothing: 404.
	c.hxPost(page+"/recipients", url.Values{"email_address": {"dan@example.com"}})
	r = c.get(page)
	left := rowIDs(r.doc, "#recipients-list")
	wantStatus(t, c.hxPost(page+"/recipients/bulk-delete", url.Values{"ids": {left[0], "999999"}}), http.StatusNotFound)
	if got := rowIDs(c.get(page).doc, "#recipients-list"); !slices.Equal(got, left) {
		t.Fatalf("a failed bulk delete deleted some: %v", got)
	}
}
