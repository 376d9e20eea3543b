package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"herald/service"
)

// TestSavedBlocksPanel saves and deletes blocks through the editor's
// panel: the owner and an editor see the save form and Delete buttons and
// may use them, a viewer sees the blocks with no such control and is
// refused by the server; a refused save answers 422 with the name's
// problem; another account's block is not found. The editor's data lists
// the account's merge tags, custom fields among them.
func TestSavedBlocksPanel(t *testing.T) {
	t.Parallel()
	s := newRoleSetup(t)
	owner, editor, viewer := s.clients[service.RoleOwner], s.clients[service.RoleEditor], s.clients[service.RoleViewer]

	// The editor page: its tools, and the merge tags in its data.
	r := editor.get("/templates/editor?from=2")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#editor-tools #merge-tag-pick") == nil || first(r.doc, "#block-save-form") == nil {
		t.Fatal("the editor has no merge-tag picker or block form")
	}
	var data struct {
		MergeTags []struct {
			Label string `json:"label"`
			Tags  []struct {
				Tag, Insert string
			} `json:"tags"`
		} `json:"merge_tags"`
	}
	if err := json.Unmarshal([]byte(text(first(r.doc, "#editor-data"))), &data); err != nil {
		t.Fatal(err)
	}
	inserts := map[string]string{}
	for _, g := range data.MergeTags {
		for _, tg := range g.Tags {
			inserts[tg.Tag] = tg.Insert
		}
	}
	if inserts["((first_name))"] != "((first_name))" || !strings.HasPrefix(inserts["((unsubscribe_preferences))"], `<a href="((unsubscribe_preferences))">`) ||
		!strings.HasPrefix(inserts["((view_in_browser))"], `<a href="((view_in_browser))">`) || inserts["((org_name))"] != "((org_name))" {
		t.Fatalf("merge tags %v", inserts)
	}

	// A refused save: the panel again with the problem, 422.
	r = editor.hxPost("/templates/blocks", url.Values{"name": {""}, "html": {"<p>x</p>"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "#saved-blocks #block-name-error") == nil {
		t.Fatalf("refused save:\n%s", r.body)
	}
	// The editor saves one; the owner another.
	r = editor.hxPost("/templates/blocks", url.Values{"name": {"Footer"}, "html": {`<table><tr><td>((org_name))</td></tr></table>`}, "css": {"td{color:#333}"}})
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#saved-blocks .block-name"); len(got) != 1 || got[0] != "Footer" {
		t.Fatalf("after saving: %q\n%s", got, r.body)
	}
	// The page lists the name; the script reads the markup from the block's address.
	blockURL := attr(first(r.doc, "[data-block-insert]"), "data-block-insert")
	r = editor.get(blockURL)
	wantStatus(t, r, http.StatusOK)
	var block struct{ Name, HTML, CSS string }
	if err := json.Unmarshal([]byte(r.body), &block); err != nil || block.Name != "Footer" ||
		block.HTML != `<table><tr><td>((org_name))</td></tr></table>` || block.CSS != "td{color:#333}" {
		t.Fatalf("block %s (%v)", r.body, err)
	}
	wantStatus(t, owner.hxPost("/templates/blocks", url.Values{"name": {"Banner"}, "html": {"<p>Banner</p>"}}), http.StatusOK)

	// The viewer sees both, with Insert but neither Delete nor the form,
	// and is refused both actions.
	r = viewer.get("/templates/editor?from=2")
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#saved-blocks .block-name"); len(got) != 2 {
		t.Fatalf("viewer sees %q", got)
	}
	if first(r.doc, "[data-block-delete]") != nil || first(r.doc, "#block-save-form") != nil || first(r.doc, "[data-block-insert]") == nil {
		t.Fatal("the viewer's panel offers what a viewer may not do, or no Insert")
	}
	id := strings.TrimPrefix(attr(first(r.doc, "#saved-blocks .block-item"), "id"), "block-")
	wantStatus(t, viewer.hxPost("/templates/blocks", url.Values{"name": {"Mine"}, "html": {"<p>x</p>"}}), http.StatusForbidden)
	wantStatus(t, viewer.hxPost("/templates/blocks/"+id+"/delete", nil), http.StatusForbidden)

	// Another account neither sees nor deletes them.
	bob, _ := s.a.account("Bob", "bob@example.com")
	r = bob.get("/templates/editor?from=2")
	if first(r.doc, "#saved-blocks .block-item") != nil {
		t.Fatal("Bob sees Ada's blocks")
	}
	wantStatus(t, bob.hxPost("/templates/blocks/"+id+"/delete", nil), http.StatusNotFound)
	wantStatus(t, bob.get(blockURL), http.StatusNotFound)
	wantStatus(t, viewer.get(blockURL), http.StatusOK)

	// The editor deletes one.
	r = editor.hxPost("/templates/blocks/"+id+"/delete", nil)
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#saved-blocks .block-name"); len(got) != 1 {
		t.Fatalf("after deleting: %q", got)
	}
	if text(first(r.doc, `#flash[hx-swap-oob="true"]`)) != "Block deleted." {
		t.Fatalf("no flash:\n%s", r.body)
	}
}
