package service_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// tagsWorld is an account with one contact type of three contacts and
// another account with a contact of the same address.
type tagsWorld struct {
	svc          *service.Service
	ctx          context.Context
	acct, other  int64
	typeID       int64
	ids          map[string]int64 // address → contact id (acct)
	otherContact int64
}

func newTagsWorld(t *testing.T) *tagsWorld {
	t.Helper()
	w := &tagsWorld{svc: dbtest.Service(t), ctx: context.Background(), ids: map[string]int64{}}
	w.acct = servicetest.NewAccount(t, w.svc, "tags@example.com")
	w.other = servicetest.NewAccount(t, w.svc, "tags-other@example.com")
	ct, err := w.svc.ContactTypes.Create(w.ctx, w.acct, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	w.typeID = ct.ID
	for _, e := range []string{"ann@example.com", "bob@example.com", "cy@example.com"} {
		v, err := w.svc.Contacts.Create(w.ctx, w.acct, service.ContactInput{ContactTypeID: itoa(ct.ID), Email: e, FirstName: "F", Country: "US"})
		if err != nil {
			t.Fatal(err)
		}
		w.ids[e] = v.ID
	}
	oct, err := w.svc.ContactTypes.Create(w.ctx, w.other, "Theirs")
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.svc.Contacts.Create(w.ctx, w.other, service.ContactInput{ContactTypeID: itoa(oct.ID), Email: "ann@example.com", Country: "US"})
	if err != nil {
		t.Fatal(err)
	}
	w.otherContact = v.ID
	return w
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// tags returns a contact's tags as contacts/details answers them.
func (w *tagsWorld) tags(t *testing.T, acct, id int64) []string {
	t.Helper()
	v, err := w.svc.Contacts.Get(w.ctx, acct, id)
	if err != nil {
		t.Fatal(err)
	}
	if v.Tags == nil {
		t.Fatal("tags is nil (would answer null)")
	}
	return v.Tags
}

func TestTagsAddAndRemove(t *testing.T) {
	t.Parallel()
	w := newTagsWorld(t)
	ann, bob, cy := w.ids["ann@example.com"], w.ids["bob@example.com"], w.ids["cy@example.com"]
	if got := w.tags(t, w.acct, ann); len(got) != 0 {
		t.Fatalf("a new contact has tags %v", got)
	}
	// By address and by id at once; stored trimmed and lower-cased,
	// without repeats, answered sorted.
	n, err := w.svc.Contacts.AddTags(w.ctx, w.acct, service.TagsInput{Emails: []string{" ANN@example.com"}, IDs: []string{itoa(bob)},
		Tags: []string{"Zebra", " vip ", "VIP", "alpha"}})
	if err != nil || n != 2 {
		t.Fatalf("add: %d %v", n, err)
	}
	for _, id := range []int64{ann, bob} {
		if got := w.tags(t, w.acct, id); !reflect.DeepEqual(got, []string{"alpha", "vip", "zebra"}) {
			t.Fatalf("contact %d tags %v", id, got)
		}
	}
	if got := w.tags(t, w.acct, cy); len(got) != 0 {
		t.Fatalf("an unnamed contact got tags %v", got)
	}
	// The other account's contact of the same address is not touched.
	if got := w.tags(t, w.other, w.otherContact); len(got) != 0 {
		t.Fatalf("another account's contact got tags %v", got)
	}
	// Adding again changes nothing; the list shows each contact's tags.
	if _, err := w.svc.Contacts.AddTags(w.ctx, w.acct, service.TagsInput{IDs: []string{itoa(ann)}, Tags: []string{"vip"}}); err != nil {
		t.Fatal(err)
	}
	listed := map[int64][]string{}
	if err := w.svc.Contacts.Each(w.ctx, w.acct, service.ContactFilter{}, func(v *models.ContactView) error {
		listed[v.ID] = v.Tags
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(listed[ann], []string{"alpha", "vip", "zebra"}) || len(listed[cy]) != 0 || listed[cy] == nil {
		t.Fatalf("list: %v", listed)
	}
	// A page of the list reads the same.
	paged := map[int64][]string{}
	if err := w.svc.Contacts.Each(w.ctx, w.acct, service.ContactFilter{ListFilter: service.ListFilter{Page: 1, PerPage: 2}}, func(v *models.ContactView) error {
		paged[v.ID] = v.Tags
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(paged[bob], []string{"alpha", "vip", "zebra"}) {
		t.Fatalf("page: %v", paged)
	}
	// Remove: tags a contact lacks are passed over.
	if _, err := w.svc.Contacts.RemoveTags(w.ctx, w.acct, service.TagsInput{IDs: []string{itoa(ann), itoa(cy)}, Tags: []string{"VIP", "nope"}}); err != nil {
		t.Fatal(err)
	}
	if got := w.tags(t, w.acct, ann); !reflect.DeepEqual(got, []string{"alpha", "zebra"}) {
		t.Fatalf("after remove: %v", got)
	}
	if got := w.tags(t, w.acct, bob); !reflect.DeepEqual(got, []string{"alpha", "vip", "zebra"}) {
		t.Fatalf("remove touched another contact: %v", got)
	}
	names, err := w.svc.Contacts.TagNames(w.ctx, w.acct)
	if err != nil || !reflect.DeepEqual(names, []string{"alpha", "vip", "zebra"}) {
		t.Fatalf("tag names: %v %v", names, err)
	}
	if names, _ := w.svc.Contacts.TagNames(w.ctx, w.other); len(names) != 0 {
		t.Fatalf("another account sees tags %v", names)
	}
	// A deleted contact's tags go with it.
	if err := w.svc.Contacts.Delete(w.ctx, w.acct, bob); err != nil {
		t.Fatal(err)
	}
	var left int64
	if err := w.svc.DB.R.Raw("SELECT COUNT(*) FROM contact_tags WHERE contact_id = ?", bob).Scan(&left).Error; err != nil || left != 0 {
		t.Fatalf("tags of a deleted contact: %d %v", left, err)
	}
}

func TestTagsRefusals(t *testing.T) {
	t.Parallel()
	w := newTagsWorld(t)
	ann := itoa(w.ids["ann@example.com"])
	many := func(n int, prefix string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%03d", prefix, i)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		in    service.TagsInput
		field string
		msg   string
	}{
		{"no contacts", service.TagsInput{Tags: []string{"a"}}, "emails", "The emails field is required."},
		{"no tags", service.TagsInput{IDs: []string{ann}}, "tags", "The tags field is required."},
		{"empty tag", service.TagsInput{IDs: []string{ann}, Tags: []string{"a", "  "}}, "tags.1", "The tags.1 must be at least 1 characters."},
		{"long tag", service.TagsInput{IDs: []string{ann}, Tags: []string{strings.Repeat("é", 65)}}, "tags.0", "The tags.0 may not be greater than 64 characters."},
		{"line break", service.TagsInput{IDs: []string{ann}, Tags: []string{"a\nb"}}, "tags.0", "The tags.0 must not contain line breaks."},
		{"bad address", service.TagsInput{Emails: []string{"nope"}, Tags: []string{"a"}}, "emails.0", "The emails.0 must be a valid email address."},
		{"too many tags", service.TagsInput{IDs: []string{ann}, Tags: many(101, "t")}, "tags", "The tags may not have more than 100 items."},
		{"too many ids", service.TagsInput{IDs: make([]string, 10001), Tags: []string{"a"}}, "ids", "The ids may not have more than 10000 items."},
	} {
		_, err := w.svc.Contacts.AddTags(w.ctx, w.acct, c.in)
		var se *service.Error
		if !errors.As(err, &se) || se.Code != service.CodeValidation || len(se.Fields[c.field]) == 0 || se.Fields[c.field][0] != c.msg {
			t.Errorf("%s: %v (%+v)", c.name, err, se)
		}
	}
	// 64 characters (not bytes) is allowed.
	if _, err := w.svc.Contacts.AddTags(w.ctx, w.acct, service.TagsInput{IDs: []string{ann}, Tags: []string{strings.Repeat("é", 64)}}); err != nil {
		t.Fatal(err)
	}
	// At most 100 tags per contact: 99 more fit, one beyond is refused
	// and nothing of that change is kept.
	if _, err := w.svc.Contacts.AddTags(w.ctx, w.acct, service.TagsInput{IDs: []string{ann}, Tags: many(99, "a")}); err != nil {
		t.Fatal(err)
	}
	bob := itoa(w.ids["bob@example.com"])
	_, err := w.svc.Contacts.AddTags(w.ctx, w.acct, service.TagsInput{IDs: []string{bob, ann}, Tags: []string{"a000", "one-more"}})
	var se *service.Error
	if !errors.As(err, &se) || se.Code != service.CodeValidation || se.Fields["tags"][0] != "A contact may not have more than 100 tags." {
		t.Fatalf("101st tag: %v", err)
	}
	if got := w.tags(t, w.acct, w.ids["bob@example.com"]); len(got) != 0 {
		t.Fatalf("a refused change was kept: %v", got)
	}
	if got := w.tags(t, w.acct, w.ids["ann@example.com"]); len(got) != 100 {
		t.Fatalf("ann has %d tags", len(got))
	}
	// Not found, all or none: an unknown id, another account's contact
	// by id or by address (it has none of its own of that address).
	for name, in := range map[string]service.TagsInput{
		"unknown id":      {IDs: []string{bob, "999999"}, Tags: []string{"x"}},
		"other's id":      {IDs: []string{bob, itoa(w.otherContact)}, Tags: []string{"x"}},
		"other's address": {IDs: []string{bob}, Emails: []string{"zed@example.com"}, Tags: []string{"x"}},
		"malformed id":    {IDs: []string{bob, "abc"}, Tags: []string{"x"}},
	} {
		for _, add := range []bool{true, false} {
			f := w.svc.Contacts.AddTags
			if !add {
				f = w.svc.Contacts.RemoveTags
			}
			if _, err := f(w.ctx, w.acct, in); service.ErrorCode(err) != service.CodeNotFound {
				t.Errorf("%s (add %v): %v", name, add, err)
			}
		}
	}
	if got := w.tags(t, w.acct, w.ids["bob@example.com"]); len(got) != 0 {
		t.Fatalf("a not-found change was kept: %v", got)
	}
	if _, err := w.svc.Contacts.AddTags(w.ctx, w.other, service.TagsInput{IDs: []string{bob}, Tags: []string{"x"}}); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("another account tagging our contact: %v", err)
	}
}

// segmentMembers lists the contact ids stored as the segment's recipients.
func segmentMembers(t *testing.T, svc *service.Service, acct, segID int64) map[int64]bool {
	t.Helper()
	out := map[int64]bool{}
	if err := svc.Segments.EachEmail(context.Background(), acct, segID, service.ListFilter{}, func(r *models.SegmentRecipient) error {
		if r.ContactID != nil {
			out[*r.ContactID] = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTagsSegmentCondition(t *testing.T) {
	t.Parallel()
	w := newTagsWorld(t)
	ann, bob, cy := w.ids["ann@example.com"], w.ids["bob@example.com"], w.ids["cy@example.com"]
	if _, err := w.svc.Contacts.AddTags(w.ctx, w.acct, service.TagsInput{IDs: []string{itoa(ann)}, Tags: []string{"vip", "trial"}}); err != nil {
		t.Fatal(err)
	}
	// A tag is matched whole (not as a substring), ignoring case and spaces.
	vip, err := w.svc.Segments.Create(w.ctx, w.acct, service.SegmentInput{ContactTypeID: itoa(w.typeID), SegmentName: "VIPs",
		SelectField: []string{"tags"}, SelectOperator: []string{"contains"}, Value: []string{" VIP "}})
	if err != nil {
		t.Fatal(err)
	}
	notVip, err := w.svc.Segments.Create(w.ctx, w.acct, service.SegmentInput{ContactTypeID: itoa(w.typeID), SegmentName: "Others",
		SelectField: []string{"tags"}, SelectOperator: []string{"not_contains"}, Value: []string{"vip"}})
	if err != nil {
		t.Fatal(err)
	}
	part, err := w.svc.Segments.Create(w.ctx, w.acct, service.SegmentInput{ContactTypeID: itoa(w.typeID), SegmentName: "Part",
		SelectField: []string{"tags"}, SelectOperator: []string{"contains"}, Value: []string{"vi"}})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string, seg int64, want ...int64) {
		t.Helper()
		got := segmentMembers(t, w.svc, w.acct, seg)
		wantSet := map[int64]bool{}
		for _, id := range want {
			wantSet[id] = true
		}
		if !reflect.DeepEqual(got, wantSet) {
			t.Fatalf("%s: segment %d holds %v, want %v", when, seg, got, wantSet)
		}
		n, err := w.svc.Segments.Count(w.ctx, w.acct, segInputOf(w.svc, t, w.acct, seg))
		if err != nil || n != int64(len(want)) {
			t.Fatalf("%s: live count %d %v", when, n, err)
		}
	}
	check("created", vip.ID, ann)
	check("created", notVip.ID, bob, cy)
	check("created", part.ID)
	// Kept current as tags change.
	if _, err := w.svc.Contacts.AddTags(w.ctx, w.acct, service.TagsInput{Emails: []string{"cy@example.com"}, Tags: []string{"Vip"}}); err != nil {
		t.Fatal(err)
	}
	check("cy tagged", vip.ID, ann, cy)
	check("cy tagged", notVip.ID, bob)
	if _, err := w.svc.Contacts.RemoveTags(w.ctx, w.acct, service.TagsInput{IDs: []string{itoa(ann)}, Tags: []string{"vip"}}); err != nil {
		t.Fatal(err)
	}
	check("ann untagged", vip.ID, cy)
	check("ann untagged", notVip.ID, ann, bob)

	// Explain names the condition, the tag and the contact's tags.
	x, err := w.svc.Segments.Explain(w.ctx, w.acct, vip.ID, ann)
	if err != nil {
		t.Fatal(err)
	}
	if x.In || x.Reason != service.ReasonConditions || len(x.Conditions) != 1 {
		t.Fatalf("explain ann: %+v", x)
	}
	c := x.Conditions[0]
	if c.Field != "tags" || c.Type != "tags" || c.Operator != "contains" || !reflect.DeepEqual(c.Values, []string{"vip"}) || c.Value != "trial" || c.Met {
		t.Fatalf("explain ann's condition: %+v", c)
	}
	x, err = w.svc.Segments.Explain(w.ctx, w.acct, vip.ID, cy)
	if err != nil || !x.In || !x.Stored || !x.Conditions[0].Met || x.Conditions[0].Value != "vip" {
		t.Fatalf("explain cy: %+v %v", x, err)
	}
	x, err = w.svc.Segments.Explain(w.ctx, w.acct, notVip.ID, bob)
	if err != nil || !x.In || !x.Conditions[0].Met || x.Conditions[0].Value != "" {
		t.Fatalf("explain bob in not_contains: %+v %v", x, err)
	}
	// Only contains and not_contains apply to tags.
	if _, err := w.svc.Segments.Create(w.ctx, w.acct, service.SegmentInput{ContactTypeID: itoa(w.typeID), SegmentName: "Bad",
		SelectField: []string{"tags"}, SelectOperator: []string{"equals"}, Value: []string{"vip"}}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("tags equals: %v", err)
	}
}

// segInputOf is a stored segment as the input that would make it.
func segInputOf(svc *service.Service, t *testing.T, acct, id int64) service.SegmentInput {
	t.Helper()
	seg, err := svc.Segments.Get(context.Background(), acct, id)
	if err != nil {
		t.Fatal(err)
	}
	in := service.SegmentInput{ContactTypeID: itoa(seg.ContactTypeID), SegmentName: seg.SegmentName,
		SelectField: seg.SelectField, SelectOperator: seg.SelectOperator, Value: seg.Value}
	if seg.QueryType != nil {
		in.QueryType = *seg.QueryType
	}
	return in
}

func TestTagsImportColumn(t *testing.T) {
	t.Parallel()
	w := newTagsWorld(t)
	ann := w.ids["ann@example.com"]
	if _, err := w.svc.Contacts.AddTags(w.ctx, w.acct, service.TagsInput{IDs: []string{itoa(ann)}, Tags: []string{"old"}}); err != nil {
		t.Fatal(err)
	}
	seg, err := w.svc.Segments.Create(w.ctx, w.acct, service.SegmentInput{ContactTypeID: itoa(w.typeID), SegmentName: "Buyers",
		SelectField: []string{"tags"}, SelectOperator: []string{"contains"}, Value: []string{"buyer"}})
	if err != nil {
		t.Fatal(err)
	}
	csv := "email,first_name,Tags\n" +
		"ann@example.com,Ann,Buyer; News\n" + // adds to ann's tags
		"new@example.com,New,buyer;;\n" +
		"plain@example.com,Plain,\n" +
		"bad@example.com,Bad," + strings.Repeat("x", 65) + "\n" +
		"new@example.com,New,later\n" // the later row of an address adds its tags too
	imp, err := w.svc.Imports.Start(w.ctx, w.acct, w.typeID, "tags.csv", int64(len(csv)))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.svc.Imports.Run(w.ctx, imp, strings.NewReader(csv)); err != nil {
		t.Fatal(err)
	}
	if imp.Created != 2 || imp.Updated != 1 || imp.Skipped != 1 {
		t.Fatalf("import: created %d updated %d skipped %d %+v", imp.Created, imp.Updated, imp.Skipped, imp.Problems)
	}
	if len(imp.Problems) != 1 || imp.Problems[0].Line != 5 || !strings.Contains(imp.Problems[0].Reason, "64 characters") {
		t.Fatalf("problems: %+v", imp.Problems)
	}
	byEmail := map[string]*models.ContactView{}
	if err := w.svc.Contacts.Each(w.ctx, w.acct, service.ContactFilter{}, func(v *models.ContactView) error {
		byEmail[v.Email] = v
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for email, want := range map[string][]string{
		"ann@example.com":   {"buyer", "news", "old"},
		"new@example.com":   {"buyer", "later"},
		"plain@example.com": {},
	} {
		v := byEmail[email]
		if v == nil || !reflect.DeepEqual(v.Tags, want) {
			t.Fatalf("%s: %+v", email, v)
		}
	}
	// The import's contacts entered the segment on tags.
	got := segmentMembers(t, w.svc, w.acct, seg.ID)
	if len(got) != 2 || !got[ann] || !got[byEmail["new@example.com"].ID] {
		t.Fatalf("segment after import: %v", got)
	}
}

// TestTagStartsAutomation: an automation whose target is a segment on
// `tags contains trial` enrols a contact when the tag is added, and the
// contact gets the first email; a contact without the tag gets nothing.
func TestTagStartsAutomation(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers", "before@example.com")
	seg, err := f.Svc.Segments.Create(f.Ctx, f.Acct, service.SegmentInput{ContactTypeID: itoa(typeA), SegmentName: "Trial",
		SelectField: []string{"tags"}, SelectOperator: []string{"contains"}, Value: []string{"trial"}})
	if err != nil {
		t.Fatal(err)
	}
	a := f.Automation(typeA, "0")
	if _, err := f.Svc.Automations.Update(f.Ctx, f.Acct, a.Utr, service.AutomationInput{Type: "custom", AutomationName: a.AutomationName,
		AutomationFor: "segments_" + itoa(seg.ID), UnsubscribeGroupID: itoa(f.Group), ExitCriteria: "0"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	f.AddContact(typeA, "later@example.com")
	f.Settle()
	if n := f.StepsOf("before@example.com", "Step") + f.StepsOf("later@example.com", "Step"); n != 0 {
		t.Fatalf("%d steps before any tag", n)
	}
	if _, err := f.Svc.Contacts.AddTags(f.Ctx, f.Acct, service.TagsInput{Emails: []string{"later@example.com"}, Tags: []string{"Trial"}}); err != nil {
		t.Fatal(err)
	}
	f.Settle()
	if n := f.StepsOf("later@example.com", "Step 1"); n != 1 {
		t.Fatalf("step 1 after the tag: %d", n)
	}
	if n := f.StepsOf("before@example.com", "Step"); n != 0 {
		t.Fatalf("an untagged contact got %d steps", n)
	}
	// Removing and adding the tag again does not start it twice.
	if _, err := f.Svc.Contacts.RemoveTags(f.Ctx, f.Acct, service.TagsInput{Emails: []string{"later@example.com"}, Tags: []string{"trial"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Contacts.AddTags(f.Ctx, f.Acct, service.TagsInput{Emails: []string{"later@example.com"}, Tags: []string{"trial"}}); err != nil {
		t.Fatal(err)
	}
	f.Settle()
	if n := f.StepsOf("later@example.com", "Step 1"); n != 1 {
		t.Fatalf("step 1 after the tag came again: %d", n)
	}
}

// TestSegmentForTag: the segment of a tag is found again (whatever the
// case typed), made once per contact type, and refused for a bad tag.
func TestSegmentForTag(t *testing.T) {
	t.Parallel()
	w := newTagsWorld(t)
	a, err := w.svc.Segments.ForTag(w.ctx, w.acct, itoa(w.typeID), " Trial ")
	if err != nil || a.SegmentName != "Tagged trial" || !reflect.DeepEqual([]string(a.SelectField), []string{"tags"}) {
		t.Fatalf("made: %+v %v", a, err)
	}
	b, err := w.svc.Segments.ForTag(w.ctx, w.acct, itoa(w.typeID), "TRIAL")
	if err != nil || b.ID != a.ID {
		t.Fatalf("found again: %+v %v", b, err)
	}
	if _, err := w.svc.Segments.ForTag(w.ctx, w.acct, itoa(w.typeID), strings.Repeat("x", 65)); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("long tag: %v", err)
	}
	if _, err := w.svc.Segments.ForTag(w.ctx, w.other, itoa(w.typeID), "trial"); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("another account's type: %v", err)
	}
}
