package service_test

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// refContact is what the reference evaluation sees of a contact.
type refContact struct {
	id     int64
	values map[string]string // field → stored value ("" when unset)
}

// refMatch is the reference meaning of one condition (decisions.md
// section 4), written independently of the SQL the service generates.
func refMatch(c refContact, field, typ, op, value string) bool {
	v := strings.TrimSpace(c.values[field])
	lv := strings.ToLower(v)
	vals := []string{value}
	if op == "in" {
		vals = strings.Split(value, "|")
	}
	switch op {
	case "is_empty":
		return v == ""
	case "is_not_empty":
		return v != ""
	}
	switch typ {
	case "number":
		if v == "" {
			return op == "not_equals"
		}
		n, _ := strconv.ParseFloat(v, 64)
		for _, s := range vals {
			w, _ := strconv.ParseFloat(strings.TrimSpace(s), 64)
			switch op {
			case "equals", "in":
				if n == w {
					return true
				}
			case "not_equals":
				return n != w
			case "greater_than":
				return n > w
			case "less_than":
				return n < w
			}
		}
		return false
	case "datetime-local":
		for _, s := range vals {
			w, _ := service.NormaliseDateTime(s)
			switch op {
			case "equals", "in":
				if v == w {
					return true
				}
			case "not_equals":
				return v != w
			case "greater_than":
				return v > w
			case "less_than":
				return v < w
			}
		}
		return false
	}
	for _, s := range vals {
		w := strings.ToLower(strings.TrimSpace(s))
		switch op {
		case "equals", "in":
			if lv == w {
				return true
			}
		case "not_equals":
			return lv != w
		case "contains":
			return strings.Contains(lv, w)
		case "not_contains":
			return !strings.Contains(lv, w)
		case "starts_with":
			return strings.HasPrefix(lv, w)
		case "ends_with":
			return strings.HasSuffix(lv, w)
		}
	}
	return false
}

type refCond struct{ field, typ, op, value string }

func refSegment(cs []refContact, conds []refCond, or bool) []int64 {
	var out []int64
	for _, c := range cs {
		match := !or
		for _, k := range conds {
			m := refMatch(c, k.field, k.typ, k.op, k.value)
			if or {
				match = match || m
			} else {
				match = match && m
			}
		}
		if len(conds) == 0 || match {
			out = append(out, c.id)
		}
	}
	return out
}

var (
	pool = map[string][]string{
		"first_name": {"", "Ann", "ann", "Bob", "Annabel", "Zed", "bo"},
		"city":       {"", "Paris", "paris", "New York", "York", "Newark"},
		"age":        {"", "0", "7", "18", "18.5", "42", "-3", "100"},
		"joined":     {"", "2026-01-01T00:00", "2026-06-15T12:30", "2025-12-31T23:59:59", "2026-06-15"},
		"nick":       {"", "a_b", "a%b", "ab", "AB", "x"},
	}
	types = map[string]string{"first_name": "text", "city": "text", "age": "number", "joined": "datetime-local", "nick": "text"}
)

func randomInput(r *rand.Rand, typeID int64, i int) service.ContactInput {
	pick := func(f string) string { return pool[f][r.Intn(len(pool[f]))] }
	return service.ContactInput{
		ContactTypeID: strconv.FormatInt(typeID, 10), Email: fmt.Sprintf("c%d@example.com", i), Country: "US",
		FirstName: pick("first_name"), City: pick("city"),
		Custom: map[string]string{"age": pick("age"), "joined": pick("joined"), "nick": pick("nick")},
	}
}

func TestSegmentsMatchReference(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "seg@example.com")
	ct, err := svc.ContactTypes.Create(ctx, acct, "All")
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range map[string]string{"age": "number", "joined": "datetime-local", "nick": "text"} {
		if _, err := svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: name, FieldType: typ}); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 150; i++ {
		if _, err := svc.Contacts.Create(ctx, acct, randomInput(r, ct.ID, i)); err != nil {
			t.Fatal(err)
		}
	}

	// One segment per (field, operator, value) and some random mixes.
	type segCase struct {
		id    int64
		conds []refCond
		or    bool
	}
	var cases []segCase
	add := func(conds []refCond, or bool) {
		in := service.SegmentInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), SegmentName: fmt.Sprint(len(cases))}
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
		cases = append(cases, segCase{seg.ID, conds, or})
	}
	fields := []string{"first_name", "city", "age", "joined", "nick"}
	for _, f := range fields {
		for _, op := range service.OperatorsFor(types[f]) {
			for _, v := range pool[f] {
				if v == "" && op != "is_empty" && op != "is_not_empty" {
					continue
				}
				if op == "in" {
					v = v + "|" + pool[f][r.Intn(len(pool[f]))]
					if strings.HasSuffix(v, "|") {
						v += pool[f][1]
					}
				}
				add([]refCond{{f, types[f], op, v}}, false)
				if op == "is_empty" || op == "is_not_empty" {
					break
				}
			}
		}
	}
	for i := 0; i < 30; i++ {
		var conds []refCond
		for j := 0; j < 1+r.Intn(3); j++ {
			f := fields[r.Intn(len(fields))]
			ops := service.OperatorsFor(types[f])
			op := ops[r.Intn(len(ops))]
			v := pool[f][1+r.Intn(len(pool[f])-1)]
			conds = append(conds, refCond{f, types[f], op, v})
		}
		add(conds, r.Intn(2) == 0)
	}

	check := func(stage string) {
		t.Helper()
		var cs []refContact
		err := svc.Contacts.Each(ctx, acct, service.ContactFilter{}, func(v *models.ContactView) error {
			c := refContact{id: v.ID, values: map[string]string{"first_name": v.FirstName, "city": v.City}}
			for name, cv := range v.CustomField {
				if cv.FieldValue != nil {
					c.values[name] = *cv.FieldValue
				}
			}
			cs = append(cs, c)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range cases {
			want := refSegment(cs, sc.conds, sc.or)
			var got []int64
			if err := svc.Segments.EachEmail(ctx, acct, sc.id, service.ListFilter{}, func(e *models.SegmentRecipient) error {
				got = append(got, *e.ContactID)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: segment %+v (or=%v):\n got %v\nwant %v", stage, sc.conds, sc.or, got, want)
			}
		}
	}
	check("created")

	// Changes: updates, deletes and new contacts keep every segment exact.
	var ids []int64
	_ = svc.Contacts.Each(ctx, acct, service.ContactFilter{}, func(v *models.ContactView) error { ids = append(ids, v.ID); return nil })
	for i := 0; i < 40; i++ {
		in := randomInput(r, ct.ID, 1000+i)
		in.ContactID = strconv.FormatInt(ids[r.Intn(len(ids))], 10)
		if _, err := svc.Contacts.Update(ctx, acct, in); err != nil && service.ErrorCode(err) != service.CodeNotFound {
			t.Fatal(err)
		}
	}
	if err := svc.Contacts.BulkDelete(ctx, acct, ids[:10]); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := svc.Contacts.Create(ctx, acct, randomInput(r, ct.ID, 2000+i)); err != nil {
			t.Fatal(err)
		}
	}
	check("after changes")

	// A CSV import of new and existing addresses.
	var b strings.Builder
	b.WriteString("email,first_name,age,joined\n")
	for i := 0; i < 120; i++ {
		in := randomInput(r, ct.ID, 140+i) // overlaps existing c140…c149 and the updated ones
		fmt.Fprintf(&b, "%s,%s,%s,%s\n", in.Email, in.FirstName, in.Custom["age"], in.Custom["joined"])
	}
	imp, err := svc.Imports.Start(ctx, acct, ct.ID, "x.csv", -1)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Imports.Run(ctx, imp, strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
	check("after import")

	// Deleting a custom field: conditions on it now see an empty value.
	fs, _ := svc.Fields.Custom(ctx, acct)
	for _, f := range fs {
		if f.FieldName == "nick" {
			if err := svc.Fields.Delete(ctx, acct, f.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	check("after field delete")
}
