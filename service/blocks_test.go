package service_test

import (
	"context"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/service"
	"herald/service/servicetest"
)

// TestSavedBlocks saves, lists, reads and deletes an account's blocks: a
// name is unique in the account whatever its case (another account may
// use it), a block needs a name and markup, and another account's block
// is not found for reading or deleting.
func TestSavedBlocks(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	a := servicetest.NewAccount(t, svc, "a@example.com")
	b := servicetest.NewAccount(t, svc, "b@example.com")

	for _, tc := range []struct {
		name  string
		in    service.BlockInput
		field string
	}{
		{"no name", service.BlockInput{Name: " ", HTML: "<p>x</p>"}, "name"},
		{"no markup", service.BlockInput{Name: "Footer", HTML: "  "}, "html"},
		{"a line break in the name", service.BlockInput{Name: "Foo\nter", HTML: "<p>x</p>"}, "name"},
		{"a NUL in the styles", service.BlockInput{Name: "Footer", HTML: "<p>x</p>", CSS: "a\x00"}, "css"},
		{"too long a name", service.BlockInput{Name: strings.Repeat("n", 101), HTML: "<p>x</p>"}, "name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Blocks.Create(ctx, a, tc.in)
			var e *service.Error
			if service.ErrorCode(err) != service.CodeValidation || !asError(err, &e) || len(e.Fields[tc.field]) == 0 {
				t.Fatalf("want a problem with %s, got %v", tc.field, err)
			}
		})
	}

	footer, err := svc.Blocks.Create(ctx, a, service.BlockInput{Name: " Footer ", HTML: `<table id="f1"><tr><td>((org_name))</td></tr></table>`, CSS: "#f1{color:#333;}"})
	if err != nil {
		t.Fatal(err)
	}
	if footer.Name != "Footer" || footer.UserID != a {
		t.Fatalf("saved %+v", footer)
	}
	if _, err := svc.Blocks.Create(ctx, a, service.BlockInput{Name: "FOOTER", HTML: "<p>y</p>"}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("a second Footer in any case: %v", err)
	}
	if _, err := svc.Blocks.Create(ctx, a, service.BlockInput{Name: "Banner", HTML: "<p>banner</p>"}); err != nil {
		t.Fatal(err)
	}
	theirs, err := svc.Blocks.Create(ctx, b, service.BlockInput{Name: "Footer", HTML: "<p>b's footer</p>"})
	if err != nil {
		t.Fatalf("another account's Footer: %v", err)
	}

	list, err := svc.Blocks.List(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, bl := range list {
		names = append(names, bl.Name)
	}
	if got := strings.Join(names, ","); got != "Banner,Footer" {
		t.Fatalf("a's blocks: %s", got)
	}
	got, err := svc.Blocks.Get(ctx, a, footer.ID)
	if err != nil || got.HTML != footer.HTML || got.CSS != "#f1{color:#333;}" {
		t.Fatalf("read back %+v %v", got, err)
	}

	// Scoping: b neither reads nor deletes a's block, nor a b's.
	if _, err := svc.Blocks.Get(ctx, b, footer.ID); !service.IsNotFound(err) {
		t.Fatalf("b reads a's block: %v", err)
	}
	if err := svc.Blocks.Delete(ctx, b, footer.ID); !service.IsNotFound(err) {
		t.Fatalf("b deletes a's block: %v", err)
	}
	if err := svc.Blocks.Delete(ctx, a, theirs.ID); !service.IsNotFound(err) {
		t.Fatalf("a deletes b's block: %v", err)
	}

	if err := svc.Blocks.Delete(ctx, a, footer.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Blocks.Get(ctx, a, footer.ID); !service.IsNotFound(err) {
		t.Fatalf("a deleted block is read: %v", err)
	}
	if err := svc.Blocks.Delete(ctx, a, footer.ID); !service.IsNotFound(err) {
		t.Fatalf("deleted twice: %v", err)
	}
	if _, err := svc.Blocks.Get(ctx, b, theirs.ID); err != nil {
		t.Fatalf("b's block after a's deletions: %v", err)
	}
	// The name is free again once its block is gone.
	if _, err := svc.Blocks.Create(ctx, a, service.BlockInput{Name: "footer", HTML: "<p>new</p>"}); err != nil {
		t.Fatalf("name after deletion: %v", err)
	}
}

// TestMergeTags lists the editor's placeholders: every name Placeholders
// gives (the API's list) and ((view_in_browser)), each once, the account's
// own custom fields among them and another account's not; addresses are
// links, the logo an image.
func TestMergeTags(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	a := servicetest.NewAccount(t, svc, "a@example.com")
	b := servicetest.NewAccount(t, svc, "b@example.com")
	if _, err := svc.Fields.Create(ctx, a, service.FieldInput{FieldName: "member_code", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Fields.Create(ctx, b, service.FieldInput{FieldName: "their_code", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	tags, err := svc.Fields.MergeTags(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	names, err := svc.Fields.Placeholders(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]service.MergeTag{}
	for _, tg := range tags {
		if _, dup := seen[tg.Name]; dup {
			t.Errorf("%s offered twice", tg.Name)
		}
		seen[tg.Name] = tg
	}
	for _, n := range append(names, "view_in_browser") {
		if _, ok := seen[n]; !ok {
			t.Errorf("%s is not offered", n)
		}
	}
	if len(seen) != len(names)+1 {
		t.Errorf("%d tags offered, want %d", len(seen), len(names)+1)
	}
	for name, want := range map[string]string{"member_code": "custom/text", "first_name": "contact/text", "unsubscribe_preferences": "links/link",
		"view_in_browser": "links/link", "org_name": "org/text", "org_logo_url": "org/image"} {
		if got := seen[name].Group + "/" + seen[name].Kind; got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	if _, ok := seen["their_code"]; ok {
		t.Error("another account's field is offered")
	}
}
