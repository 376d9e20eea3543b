package service_test

import (
	"strconv"
	"strings"
	"testing"

	"herald/service"
	"herald/service/servicetest"
)

// The count of a form's audience keeps only the account's own live
// contact types, segments and group; a malformed, deleted or another
// account's item is left out, where AudienceCount would count nothing at
// all (a malformed target) or drop every exclusion (a malformed one).
func TestFormAudienceCountKeepsOnlyOwnTargets(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	typeA := f.ContactType("Alpha", "a1@example.com", "a2@example.com", "a3@example.com", "a4@example.com")
	gone := f.ContactType("Gone", "g1@example.com")
	if err := f.Svc.ContactTypes.Delete(f.Ctx, f.Acct, gone); err != nil {
		t.Fatal(err)
	}
	seg, err := f.Svc.Segments.Create(f.Ctx, f.Acct, service.SegmentInput{ContactTypeID: id(typeA), SegmentName: "Ones",
		SelectField: []string{"email"}, SelectOperator: []string{"contains"}, Value: []string{"a1@"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Groups.AddRecipients(f.Ctx, f.Acct, service.RecipientsInput{GroupID: id(f.Group), EmailAddress: "a2@example.com"}); err != nil {
		t.Fatal(err)
	}
	other := servicetest.NewAccount(t, f.Svc, "other@herald.test")
	theirType, err := f.Svc.ContactTypes.Create(f.Ctx, other, "Theirs")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"t1@example.com", "t2@example.com"} {
		if _, err := f.Svc.Contacts.Create(f.Ctx, other, service.ContactInput{ContactTypeID: id(theirType.ID), FirstName: "T", LastName: "T", Email: e, Country: "250"}); err != nil {
			t.Fatal(err)
		}
	}
	theirSeg, err := f.Svc.Segments.Create(f.Ctx, other, service.SegmentInput{ContactTypeID: id(theirType.ID), SegmentName: "Theirs"})
	if err != nil {
		t.Fatal(err)
	}
	theirGroup, err := f.Svc.Groups.Create(f.Ctx, other, service.GroupInput{GroupName: "Theirs", Description: "x", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}

	mine, ones := "contacts_"+id(typeA), "segments_"+id(seg.ID)
	noise := []string{"junk", "contacts_" + id(gone), "contacts_" + id(theirType.ID), "segments_" + id(theirSeg.ID), "segments_999999", ""}
	for _, c := range []struct {
		name   string
		to, ex []string
		group  string
		want   int64
	}{
		{"own type", []string{mine}, nil, "", 4},
		{"own type among others'", append([]string{" " + mine + " "}, noise...), nil, "", 4},
		{"only others'", noise, nil, "", 0},
		{"own exclusion among others'", []string{mine}, append(noise, ones), "", 3},
		{"own group", []string{mine}, nil, id(f.Group), 3},
		{"another account's group", []string{mine}, nil, id(theirGroup.ID), 4},
		{"no group", []string{mine}, nil, "0", 4},
		{"malformed group", []string{mine}, nil, "x", 4},
	} {
		n, err := f.Svc.SingleSends.FormAudienceCount(f.Ctx, f.Acct, c.to, c.ex, c.group)
		if err != nil || n != c.want {
			t.Errorf("%s: %d, %v; want %d", c.name, n, err, c.want)
		}
	}
	got, err := f.Svc.SingleSends.OwnTargets(f.Ctx, f.Acct, append(append([]string{" " + mine}, noise...), ones, mine))
	if err != nil || strings.Join(got, ",") != mine+","+ones+","+mine {
		t.Errorf("OwnTargets = %q, %v; want [%s %s %s]", got, err, mine, ones, mine)
	}
	// Without the filter a malformed item spoils the whole count.
	if n, err := f.Svc.SingleSends.AudienceCount(f.Ctx, f.Acct, []string{mine, "junk"}, nil, 0); err != nil || n != 0 {
		t.Errorf("AudienceCount with a malformed target: %d, %v; want 0", n, err)
	}
}
