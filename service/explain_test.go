package service_test

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// TestExplainMatchesReference: for every pair of a fixed-seed set of
// contacts (of the segment's type and of another) and segments (one per
// field and operator, random mixes joined by and/or, none, addresses added
// by hand), Explain's verdict equals the stored membership and the
// reference evaluation of segments_test.go, and so does each condition.
func TestExplainMatchesReference(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "explain@example.com")
	ct, err := svc.ContactTypes.Create(ctx, acct, "All")
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.ContactTypes.Create(ctx, acct, "Others")
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range map[string]string{"age": "number", "joined": "datetime-local", "nick": "text"} {
		if _, err := svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: name, FieldType: typ}); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewSource(14))
	for i := 0; i < 50; i++ {
		if _, err := svc.Contacts.Create(ctx, acct, randomInput(r, ct.ID, i)); err != nil {
			t.Fatal(err)
		}
	}
	// The other type shares five addresses (c0, c5 … c20) with the first
	// and has five of its own (c105 … c109).
	for i := 0; i < 10; i++ {
		n := i * 5
		if i >= 5 {
			n = 100 + i
		}
		if _, err := svc.Contacts.Create(ctx, acct, randomInput(r, other.ID, n)); err != nil {
			t.Fatal(err)
		}
	}

	type segCase struct {
		id    int64
		conds []refCond
		or    bool
		hand  map[string]bool // addresses added by hand
	}
	var cases []segCase
	add := func(conds []refCond, or bool) *segCase {
		in := service.SegmentInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), SegmentName: fmt.Sprint("s", len(cases))}
		for _, c := range conds {
			in.SelectField = append(in.SelectField, c.field)
			in.SelectOperator = append(in.SelectOperator, c.op)
			in.Value = append(in.Value, c.value)
		}
		if or {
			in.QueryType = "or"
		}
		seg, err := svc.Segments.Create(ctx, acct, in)
		if err != nil {
			t.Fatalf("%+v: %v", conds, err)
		}
		cases = append(cases, segCase{id: seg.ID, conds: conds, or: or, hand: map[string]bool{}})
		return &cases[len(cases)-1]
	}
	fields := []string{"first_name", "city", "age", "joined", "nick"}
	for _, f := range fields {
		for _, op := range service.OperatorsFor(types[f]) {
			v := pool[f][1+r.Intn(len(pool[f])-1)]
			if op == "in" {
				v += "|" + pool[f][1+r.Intn(len(pool[f])-1)]
			}
			add([]refCond{{f, types[f], op, v}}, false)
		}
	}
	for i := 0; i < 20; i++ {
		var conds []refCond
		for j := 0; j < 1+r.Intn(3); j++ {
			f := fields[r.Intn(len(fields))]
			ops := service.OperatorsFor(types[f])
			op := ops[r.Intn(len(ops))]
			conds = append(conds, refCond{f, types[f], op, pool[f][1+r.Intn(len(pool[f])-1)]})
		}
		add(conds, r.Intn(2) == 0)
	}
	add(nil, false) // no condition: every contact of the type
	// Addresses by hand: a contact of the type, one of another type only,
	// and an address that is no contact at all.
	for i := 0; i < 12; i++ {
		sc := &cases[r.Intn(len(cases))]
		email := []string{fmt.Sprintf("c%d@example.com", r.Intn(50)), "c105@example.com", "stranger@example.com"}[i%3]
		if sc.hand[email] {
			continue
		}
		if _, err := svc.Segments.AddEmail(ctx, acct, service.SegmentEmailInput{SegmentID: strconv.FormatInt(sc.id, 10), FirstName: "H", LastName: "B", Email: email}); err != nil {
			t.Fatal(err)
		}
		sc.hand[email] = true
	}

	type contact struct {
		refContact
		email string
		typ   int64
	}
	var cs []contact
	if err := svc.Contacts.Each(ctx, acct, service.ContactFilter{}, func(v *models.ContactView) error {
		c := contact{refContact: refContact{id: v.ID, values: map[string]string{"first_name": v.FirstName, "city": v.City}}, email: v.Email, typ: v.ContactTypeID}
		for name, cv := range v.CustomField {
			if cv.FieldValue != nil {
				c.values[name] = *cv.FieldValue
			}
		}
		cs = append(cs, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(cs) != 60 {
		t.Fatalf("%d contacts", len(cs))
	}

	pairs, ins := 0, 0
	for _, sc := range cases {
		stored := map[string]bool{} // contact id "#n" or a hand address
		if err := svc.Segments.EachEmail(ctx, acct, sc.id, service.ListFilter{}, func(e *models.SegmentRecipient) error {
			if e.ContactID != nil {
				stored["#"+strconv.FormatInt(*e.ContactID, 10)] = true
			} else {
				stored[e.Email] = true
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			x, err := svc.Segments.Explain(ctx, acct, sc.id, c.id)
			if err != nil {
				t.Fatal(err)
			}
			pairs++
			refConds := len(sc.conds) == 0 || len(refSegment([]refContact{c.refContact}, sc.conds, sc.or)) == 1
			want := c.typ == ct.ID && refConds || sc.hand[c.email]
			isStored := stored["#"+strconv.FormatInt(c.id, 10)] || stored[c.email]
			if x.In != want || x.In != isStored || x.Stored != isStored || x.ConditionsMet != refConds || x.ByHand != sc.hand[c.email] {
				t.Fatalf("segment %+v (or=%v) hand %v, contact %s type %d %v:\nexplain in=%v stored=%v met=%v hand=%v (%s); reference %v, stored rows %v",
					sc.conds, sc.or, sc.hand, c.email, c.typ, c.values, x.In, x.Stored, x.ConditionsMet, x.ByHand, x.Reason, want, isStored)
			}
			if x.In {
				ins++
			}
			wantReason := service.ReasonConditions
			switch {
			case c.typ == ct.ID && refConds:
			case sc.hand[c.email]:
				wantReason = service.ReasonByHand
			case c.typ != ct.ID:
				wantReason = service.ReasonContactType
			}
			if x.Reason != wantReason || x.SameType != (c.typ == ct.ID) {
				t.Fatalf("contact %s in segment %+v: reason %s same type %v, want %s", c.email, sc.conds, x.Reason, x.SameType, wantReason)
			}
			if len(x.Conditions) != len(sc.conds) {
				t.Fatalf("%d conditions explained, %d in the segment", len(x.Conditions), len(sc.conds))
			}
			for i, k := range sc.conds {
				got := x.Conditions[i]
				if got.Met != refMatch(c.refContact, k.field, k.typ, k.op, k.value) || got.Field != k.field || got.Operator != k.op || got.Ignored {
					t.Fatalf("contact %s %v, condition %+v: explained %+v, reference %v", c.email, c.values, k, got, !got.Met)
				}
				if strings.TrimSpace(got.Value) != strings.TrimSpace(c.values[k.field]) {
					t.Fatalf("contact %s, condition %+v: own value %q, stored %q", c.email, k, got.Value, c.values[k.field])
				}
			}
		}
		// By address: the contact of the segment's type first, then any;
		// an address that is no contact is in only by hand.
		for _, email := range []string{"c0@example.com", "c105@example.com", "stranger@example.com", "nobody@example.com"} {
			x, err := svc.Segments.ExplainEmail(ctx, acct, sc.id, strings.ToUpper(email))
			if err != nil {
				t.Fatal(err)
			}
			if x.In != (stored[email] || x.Contact != nil && stored["#"+strconv.FormatInt(x.Contact.ID, 10)]) || x.Email != email {
				t.Fatalf("by address %s in segment %+v: in=%v, stored rows %v", email, sc.conds, x.In, stored)
			}
			switch email {
			case "c0@example.com":
				if x.Contact == nil || x.Contact.ContactTypeID != ct.ID {
					t.Fatalf("c0 explained as %+v, want the contact of the segment's type", x.Contact)
				}
			case "c105@example.com":
				if x.Contact == nil || x.Contact.ContactTypeID != other.ID || x.ContactType != "Others" || x.SegmentType != "All" {
					t.Fatalf("c105 explained as %+v (%q / %q), want the contact of the other type", x.Contact, x.ContactType, x.SegmentType)
				}
			default:
				if x.Contact != nil || x.In != sc.hand[email] || (!x.In && x.Reason != service.ReasonNoContact) {
					t.Fatalf("%s: %+v", email, x)
				}
			}
		}
	}
	if ins == 0 || ins == pairs {
		t.Fatalf("%d of %d pairs in: the set does not test both verdicts", ins, pairs)
	}
	t.Logf("%d contact × segment pairs, %d in", pairs, ins)
}

// One readable case per operator: the condition, the contact's own value,
// the values compared and whether it is met.
func TestExplainOperators(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "ops@example.com")
	ct, err := svc.ContactTypes.Create(ctx, acct, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range map[string]string{"age": "number", "joined": "datetime-local", "plan": "text"} {
		if _, err := svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: name, FieldType: typ}); err != nil {
			t.Fatal(err)
		}
	}
	ann, err := svc.Contacts.Create(ctx, acct, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), Email: "ann@example.com",
		FirstName: "Ann", City: "New York", Country: "FR", Custom: map[string]string{"age": "42", "joined": "2026-03-01T10:00"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field, op, value string
		met              bool
		own              string
		compared         []string
	}{
		{"city", "equals", "new york", true, "New York", []string{"new york"}},
		{"city", "equals", "York", false, "New York", []string{"york"}},
		{"city", "not_equals", "Paris", true, "New York", []string{"paris"}},
		{"city", "contains", "W Y", true, "New York", []string{"w y"}},
		{"city", "not_contains", "york", false, "New York", []string{"york"}},
		{"city", "starts_with", "new", true, "New York", []string{"new"}},
		{"city", "ends_with", "new", false, "New York", []string{"new"}},
		{"city", "in", "Paris|NEW YORK", true, "New York", []string{"paris", "new york"}},
		{"city", "is_empty", "", false, "New York", []string{}},
		{"city", "is_not_empty", "", true, "New York", []string{}},
		{"last_name", "is_empty", "", true, "", []string{}},
		{"country", "equals", "France", true, "France", []string{"France"}},
		{"country", "in", "DE|US", false, "France", []string{"Germany", "United States"}},
		{"age", "greater_than", "41.5", true, "42", []string{"41.5"}},
		{"age", "less_than", "42", false, "42", []string{"42"}},
		{"age", "equals", "42.0", true, "42", []string{"42"}},
		{"age", "in", "1|2", false, "42", []string{"1", "2"}},
		{"plan", "not_equals", "gold", true, "", []string{"gold"}}, // an absent value differs
		{"plan", "equals", "gold", false, "", []string{"gold"}},
		{"joined", "greater_than", "2026-02-28", true, "2026-03-01T10:00:00", []string{"2026-02-28T00:00:00"}},
		{"joined", "less_than", "2026-03-01 09:00", false, "2026-03-01T10:00:00", []string{"2026-03-01T09:00:00"}},
		{"created_at", "greater_than", "2000-01-01", true, "", []string{"2000-01-01 00:00:00 UTC"}},
		{"created_at", "is_empty", "", false, "", []string{}},
	} {
		t.Run(tc.field+" "+tc.op+" "+tc.value, func(t *testing.T) {
			seg, err := svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), SegmentName: "x",
				SelectField: []string{tc.field}, SelectOperator: []string{tc.op}, Value: []string{tc.value}})
			if err != nil {
				t.Fatal(err)
			}
			x, err := svc.Segments.Explain(ctx, acct, seg.ID, ann.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(x.Conditions) != 1 {
				t.Fatalf("%d conditions", len(x.Conditions))
			}
			c := x.Conditions[0]
			own := c.Value
			if tc.field == "created_at" {
				own = "" // the contact's creation time, checked below
				if !strings.HasSuffix(c.Value, " UTC") || !strings.HasPrefix(c.Value, "20") {
					t.Errorf("created_at shown as %q", c.Value)
				}
			}
			if c.Met != tc.met || own != tc.own || fmt.Sprint(c.Values) != fmt.Sprint(tc.compared) || c.Operator != tc.op || c.Field != tc.field {
				t.Errorf("explained %+v, want met %v own %q compared %q", c, tc.met, tc.own, tc.compared)
			}
			if x.In != tc.met || x.ConditionsMet != tc.met || x.Reason != service.ReasonConditions || x.Stored != tc.met {
				t.Errorf("verdict in=%v met=%v stored=%v reason %s, want %v", x.In, x.ConditionsMet, x.Stored, x.Reason, tc.met)
			}
		})
	}
}

// The verdict's reasons: and/or, contact type, by hand, no contact; and
// another account's segment or contact is not found.
func TestExplainReasons(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "why@example.com")
	ct, _ := svc.ContactTypes.Create(ctx, acct, "Customers")
	leads, _ := svc.ContactTypes.Create(ctx, acct, "Leads")
	ann, err := svc.Contacts.Create(ctx, acct, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), Email: "ann@example.com", FirstName: "Ann", City: "Paris", Country: "FR"})
	if err != nil {
		t.Fatal(err)
	}
	lead, err := svc.Contacts.Create(ctx, acct, service.ContactInput{ContactTypeID: strconv.FormatInt(leads.ID, 10), Email: "lea@example.com", FirstName: "Ann", City: "Paris", Country: "FR"})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(qt string) *models.Segment {
		seg, err := svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), SegmentName: "Parisian Anns " + qt, QueryType: qt,
			SelectField: []string{"first_name", "city"}, SelectOperator: []string{"equals", "equals"}, Value: []string{"ann", "london"}})
		if err != nil {
			t.Fatal(err)
		}
		return seg
	}
	and, or := mk("and"), mk("or")
	explain := func(seg *models.Segment, id int64) *service.Explanation {
		t.Helper()
		x, err := svc.Segments.Explain(ctx, acct, seg.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	if x := explain(and, ann.ID); x.In || x.Reason != service.ReasonConditions || x.Or || !x.Conditions[0].Met || x.Conditions[1].Met {
		t.Errorf("and: %+v", x)
	}
	if x := explain(or, ann.ID); !x.In || x.Reason != service.ReasonConditions || !x.Or {
		t.Errorf("or: %+v", x)
	}
	// The lead meets the OR segment's conditions but is of another type.
	if x := explain(or, lead.ID); x.In || x.Reason != service.ReasonContactType || !x.ConditionsMet || x.ContactType != "Leads" || x.SegmentType != "Customers" {
		t.Errorf("another type: %+v", x)
	}
	if _, err := svc.Segments.AddEmail(ctx, acct, service.SegmentEmailInput{SegmentID: strconv.FormatInt(and.ID, 10), FirstName: "L", LastName: "A", Email: "lea@example.com"}); err != nil {
		t.Fatal(err)
	}
	if x := explain(and, lead.ID); !x.In || x.Reason != service.ReasonByHand || !x.ByHand || !x.Stored {
		t.Errorf("by hand: %+v", x)
	}
	if x, err := svc.Segments.ExplainEmail(ctx, acct, and.ID, "nobody@example.com"); err != nil || x.In || x.Reason != service.ReasonNoContact || x.Contact != nil {
		t.Errorf("no contact: %+v %v", x, err)
	}
	if _, err := svc.Segments.ExplainEmail(ctx, acct, and.ID, "not an address"); service.ErrorCode(err) != service.CodeValidation {
		t.Errorf("a malformed address: %v", err)
	}
	// The contact's page lists the segments of its type and those that
	// hold its address by hand.
	list, err := svc.Segments.OfContact(ctx, acct, lead.ID)
	if err != nil || len(list) != 1 || list[0].Segment.ID != and.ID || !list[0].In || !list[0].ByHand {
		t.Errorf("lead's segments: %+v %v", list, err)
	}
	list, err = svc.Segments.OfContact(ctx, acct, ann.ID)
	if err != nil || len(list) != 2 || list[0].In || !list[1].In {
		t.Errorf("ann's segments: %+v %v", list, err)
	}

	// A condition whose field was deleted reads the field as empty text;
	// one whose operator text cannot take (greater_than) is left out by
	// the segment, and shown as such.
	score, err := svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: "score", FieldType: "number"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Contacts.Update(ctx, acct, service.ContactInput{ContactID: strconv.FormatInt(ann.ID, 10), ContactTypeID: strconv.FormatInt(ct.ID, 10),
		Email: "ann@example.com", FirstName: "Ann", City: "Paris", Country: "FR", Custom: map[string]string{"score": "3"}}); err != nil {
		t.Fatal(err)
	}
	scored, err := svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), SegmentName: "High scores",
		SelectField: []string{"score", "score"}, SelectOperator: []string{"greater_than", "is_empty"}, Value: []string{"10", ""}, QueryType: "or"})
	if err != nil {
		t.Fatal(err)
	}
	if x := explain(scored, ann.ID); x.In || x.Conditions[0].Met || x.Conditions[0].Value != "3" || x.Conditions[1].Met {
		t.Errorf("before the field's deletion: %+v", x)
	}
	if err := svc.Fields.Delete(ctx, acct, score.ID); err != nil {
		t.Fatal(err)
	}
	if x := explain(scored, ann.ID); !x.In || !x.Stored || !x.Conditions[0].Ignored || x.Conditions[0].Met || !x.Conditions[1].Met || x.Conditions[1].Value != "" {
		t.Errorf("after the field's deletion: %+v", x)
	}

	stranger := servicetest.NewAccount(t, svc, "stranger@example.com")
	if _, err := svc.Segments.Explain(ctx, stranger, and.ID, ann.ID); service.ErrorCode(err) != service.CodeNotFound {
		t.Errorf("another account's segment: %v", err)
	}
	theirs, _ := svc.ContactTypes.Create(ctx, stranger, "Theirs")
	seg, err := svc.Segments.Create(ctx, stranger, service.SegmentInput{ContactTypeID: strconv.FormatInt(theirs.ID, 10), SegmentName: "All"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Segments.Explain(ctx, stranger, seg.ID, ann.ID); service.ErrorCode(err) != service.CodeNotFound {
		t.Errorf("another account's contact: %v", err)
	}
	if _, err := svc.Segments.OfContact(ctx, stranger, ann.ID); service.ErrorCode(err) != service.CodeNotFound {
		t.Errorf("another account's contact page: %v", err)
	}
}
