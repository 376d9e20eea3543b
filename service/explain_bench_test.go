package service_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/service"
)

// BenchmarkSegmentsExplain: one Explain (by id and by address) of a
// contact against a ten-condition segment, and the Segments card of a
// contact's page, in accounts of 1,000 and 50,000 contacts of the
// segment's type. Its statements follow indexes to the one contact, so
// the cost does not grow with the audience.
func BenchmarkSegmentsExplain(b *testing.B) {
	svc := dbtest.Service(b)
	for _, n := range []int{1000, 50000} {
		b.Run(fmt.Sprintf("%d contacts", n), func(b *testing.B) { benchExplain(b, svc, n) })
	}
}

func benchExplain(b *testing.B, svc *service.Service, n int) {
	ctx := context.Background()
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "B", Email: fmt.Sprintf("bench%d@example.com", n), Password: "test-passphrase-9"})
	if err != nil {
		b.Fatal(err)
	}
	acct := u.ID
	ct, err := svc.ContactTypes.Create(ctx, acct, "All")
	if err != nil {
		b.Fatal(err)
	}
	for name, typ := range map[string]string{"age": "number", "joined": "datetime-local", "plan": "text"} {
		if _, err := svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: name, FieldType: typ}); err != nil {
			b.Fatal(err)
		}
	}
	var csv strings.Builder
	csv.WriteString("email,first_name,city,country,age,joined,plan\n")
	for i := range n {
		fmt.Fprintf(&csv, "c%d@example.com,Name%d,City%d,US,%d,2026-0%d-01T10:00,%s\n", i, i%100, i%50, i%90, 1+i%9, []string{"gold", "silver", ""}[i%3])
	}
	imp, err := svc.Imports.Start(ctx, acct, ct.ID, "bench.csv", -1)
	if err != nil {
		b.Fatal(err)
	}
	if err := svc.Imports.Run(ctx, imp, strings.NewReader(csv.String())); err != nil {
		b.Fatal(err)
	}
	seg, err := svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), SegmentName: "Ten",
		SelectField:    []string{"first_name", "city", "country", "age", "age", "joined", "plan", "email", "created_at", "plan"},
		SelectOperator: []string{"starts_with", "not_equals", "equals", "greater_than", "in", "less_than", "in", "ends_with", "greater_than", "is_not_empty"},
		Value:          []string{"name1", "City7", "US", "20", "21|42|63|84", "2026-06-01", "gold|silver", "@example.com", "2000-01-01", ""}})
	if err != nil {
		b.Fatal(err)
	}
	var id int64
	if err := svc.DB.R.Raw("SELECT id FROM contacts WHERE user_id = ? AND email = ?", acct, "c442@example.com").Scan(&id).Error; err != nil || id == 0 {
		b.Fatal(err)
	}
	b.Run("by id", func(b *testing.B) {
		for b.Loop() {
			if _, err := svc.Segments.Explain(ctx, acct, seg.ID, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("by address", func(b *testing.B) {
		for b.Loop() {
			if _, err := svc.Segments.ExplainEmail(ctx, acct, seg.ID, "c442@example.com"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("contact page", func(b *testing.B) {
		for b.Loop() {
			if _, err := svc.Segments.OfContact(ctx, acct, id); err != nil {
				b.Fatal(err)
			}
		}
	})
}
