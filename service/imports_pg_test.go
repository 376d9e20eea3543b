package service_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// importOutcome is what an import leaves: its report, every contact of
// the type (by address) and the recipients of the segments.
type importOutcome struct {
	report   string
	contacts map[string]string
	segments map[string][]string
}

// runImportCase imports the same file into svc over contacts that exist
// before it, and reads back what it left.
func runImportCase(t *testing.T, svc *service.Service, csv string) importOutcome {
	t.Helper()
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "same@example.com")
	ct, err := svc.ContactTypes.Create(ctx, acct, "Type")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range [][2]string{{"age", "number"}, {"company", "text"}, {"nick", "text"}} {
		if _, err := svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: f[0], FieldType: f[1]}); err != nil {
			t.Fatal(err)
		}
	}
	typeID := fmt.Sprint(ct.ID)
	// Existing contacts: the file updates some of them.
	for i := range 30 {
		in := service.ContactInput{ContactTypeID: typeID, Email: fmt.Sprintf("old%d@example.com", i), FirstName: "Old", LastName: fmt.Sprintf("Last%d", i),
			Country: "FR", Custom: map[string]string{"nick": fmt.Sprintf("n%d", i), "company": "Before Ltd", "age": "20"}}
		if _, err := svc.Contacts.Create(ctx, acct, in); err != nil {
			t.Fatal(err)
		}
	}
	segs := map[string]service.SegmentInput{
		"acme":     {SelectField: []string{"company"}, SelectOperator: []string{"contains"}, Value: []string{"acme"}},
		"over30":   {SelectField: []string{"age"}, SelectOperator: []string{"greater_than"}, Value: []string{"30"}},
		"old-kept": {SelectField: []string{"nick", "first_name"}, SelectOperator: []string{"is_not_empty", "equals"}, Value: []string{"", "old"}},
	}
	segIDs := map[string]int64{}
	for name, in := range segs {
		in.ContactTypeID, in.SegmentName = typeID, name
		seg, err := svc.Segments.Create(ctx, acct, in)
		if err != nil {
			t.Fatal(err)
		}
		segIDs[name] = seg.ID
	}

	imp, err := svc.Imports.Start(ctx, acct, ct.ID, "same.csv", int64(len(csv)))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Imports.Run(ctx, imp, strings.NewReader(csv)); err != nil {
		t.Fatal(err)
	}
	out := importOutcome{contacts: map[string]string{}, segments: map[string][]string{}}
	out.report = fmt.Sprintf("status %s, rows %d, created %d, updated %d, skipped %d, problems %v",
		imp.Status, imp.RowsRead, imp.Created, imp.Updated, imp.Skipped, imp.Problems)
	err = svc.Contacts.Each(ctx, acct, service.ContactFilter{}, func(v *models.ContactView) error {
		keys := make([]string, 0, len(v.CustomField))
		for k := range v.CustomField {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var custom []string
		for _, k := range keys {
			if cv := v.CustomField[k]; cv.FieldValue != nil && *cv.FieldValue != "" {
				custom = append(custom, k+"="+*cv.FieldValue)
			}
		}
		alt := "<nil>"
		if v.AltEmail != nil {
			alt = *v.AltEmail
		}
		out.contacts[v.Email] = fmt.Sprintf("%s|%s|%s|%s|%s|%v", v.FirstName, v.LastName, alt, v.Country, v.City, custom)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, id := range segIDs {
		var emails []string
		if err := svc.Segments.EachEmail(ctx, acct, id, service.ListFilter{}, func(r *models.SegmentRecipient) error {
			emails = append(emails, r.Email)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		sort.Strings(emails)
		out.segments[name] = emails
	}
	return out
}

// A PostgreSQL import (COPY into a staging table, one merge per batch)
// leaves the same contacts, counts and segment recipients as the SQLite
// upserter, for a file that updates existing contacts, repeats addresses
// within a batch and across batches, carries custom fields (an empty cell
// keeps the stored value) and has rows that are rejected.
func TestImportSameOnSQLiteAndPostgres(t *testing.T) {
	t.Parallel()
	if os.Getenv("HERALD_TEST_DATABASE") == "" {
		// The SQLite pass of make test; the PostgreSQL pass runs it (it
		// needs both databases).
		t.Skip("comparing a PostgreSQL import with SQLite's runs when HERALD_TEST_DATABASE names a PostgreSQL database")
	}
	var b strings.Builder
	b.WriteString("email,first_name,city,age,company\n")
	// Updates of existing contacts: no nick column (kept), an empty
	// company cell (kept), a new age; one in another case.
	for i := range 10 {
		fmt.Fprintf(&b, "old%d@example.com,Renamed%d,Paris,%d,\n", i, i, 25+i)
	}
	b.WriteString("OLD10@Example.com,Upper,Lyon,41,Acme Upper\n")
	// New contacts, over several batches of either writer (1,000 rows on
	// SQLite, 5,000 on PostgreSQL).
	for i := range 12000 {
		fmt.Fprintf(&b, "new%d@example.com,New%d,,%d,%s\n", i, i, 18+i%60, []string{"Acme 1", "Other", ""}[i%3])
		switch i {
		case 5:
			// A repeat inside the same batch: the later row wins, and
			// values only the earlier row gave stay.
			b.WriteString("new3@example.com,Again,Nice,,Acme Again\n")
		case 6100:
			// A repeat in a later batch of both writers.
			b.WriteString("new4@example.com,Later,Rome,77,\n")
			// A repeat of an existing contact, updated twice.
			b.WriteString("old1@example.com,Twice,,,Acme Twice\n")
		case 7000:
			b.WriteString("not-an-address,Bad,,,\n")
			b.WriteString("new8@example.com,BadAge,,abc,\n")
		}
	}

	lite, err := service.OpenDB(filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	if err := lite.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	liteSvc, err := service.New(lite, service.Config{PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	pgSvc := dbtest.Service(t)

	want := runImportCase(t, liteSvc, b.String())
	got := runImportCase(t, pgSvc, b.String())

	// The SQLite outcome is the reference; check it holds what the rules say
	// so that two equally wrong answers cannot pass.
	if want.report != "status done, rows 12016, created 12000, updated 13, skipped 2, problems [{7017 The email must be a valid email address.} {7018 The age must be a number.}]" {
		t.Errorf("sqlite report: %s", want.report)
	}
	for email, v := range map[string]string{
		"old0@example.com":  "Renamed0|Last0|<nil>|France|Paris|[age=25 company=Before Ltd nick=n0]",
		"old1@example.com":  "Twice|Last1|<nil>|France||[age=26 company=Acme Twice nick=n1]",
		"old10@example.com": "Upper|Last10|<nil>|France|Lyon|[age=41 company=Acme Upper nick=n10]",
		"old11@example.com": "Old|Last11|<nil>|France||[age=20 company=Before Ltd nick=n11]",
		"new3@example.com":  "Again||<nil>||Nice|[age=21 company=Acme Again]",
		"new4@example.com":  "Later||<nil>||Rome|[age=77 company=Other]",
	} {
		if want.contacts[email] != v {
			t.Errorf("sqlite contact %s: %q, want %q", email, want.contacts[email], v)
		}
	}
	if len(want.contacts) != 12030 {
		t.Errorf("sqlite: %d contacts, want 12,030", len(want.contacts))
	}

	if got.report != want.report {
		t.Errorf("report:\npostgres %s\nsqlite   %s", got.report, want.report)
	}
	if len(got.contacts) != len(want.contacts) {
		t.Errorf("postgres has %d contacts, sqlite %d", len(got.contacts), len(want.contacts))
	}
	n := 0
	for email, w := range want.contacts {
		if g := got.contacts[email]; g != w && n < 10 {
			n++
			t.Errorf("contact %s:\npostgres %q\nsqlite   %q", email, g, w)
		}
	}
	for name, w := range want.segments {
		if len(w) == 0 {
			t.Errorf("segment %s is empty on sqlite: the case proves nothing", name)
		}
		if g := got.segments[name]; !slices.Equal(g, w) {
			t.Errorf("segment %s: postgres %d recipients, sqlite %d", name, len(g), len(w))
		}
	}
}

// A file written with semicolons (spreadsheets where the comma is the
// decimal mark) or tabs imports as the same file with commas: the
// delimiter is read from the header line.
func TestImportDetectsDelimiter(t *testing.T) {
	t.Parallel()
	rows := [][]string{
		{"email", "first_name", "company", "age"},
		{"ann@example.com", "Ann", "Acme; Sons", "41"},
		{"bob@example.com", "Bob", "Globex, Inc", "29"},
		{"old3@example.com", "Carl", "", "35"},
		{"not-an-address", "Dan", "", "1"},
	}
	file := func(sep string) string {
		var b strings.Builder
		for _, r := range rows {
			cells := make([]string, len(r))
			for i, c := range r {
				if strings.ContainsAny(c, ",;\t") {
					c = `"` + c + `"`
				}
				cells[i] = c
			}
			b.WriteString(strings.Join(cells, sep) + "\n")
		}
		return b.String()
	}
	want := runImportCase(t, dbtest.Service(t), file(","))
	if !strings.Contains(want.report, "created 2") || want.contacts["bob@example.com"] == "" {
		t.Fatalf("comma file: %s", want.report)
	}
	for name, sep := range map[string]string{"semicolon": ";", "tab": "\t"} {
		t.Run(name, func(t *testing.T) {
			got := runImportCase(t, dbtest.Service(t), file(sep))
			if got.report != want.report {
				t.Fatalf("report:\n got %s\nwant %s", got.report, want.report)
			}
			if !reflect.DeepEqual(got.contacts, want.contacts) || !reflect.DeepEqual(got.segments, want.segments) {
				t.Fatalf("contacts or segments differ from the comma file:\n got %v %v\nwant %v %v", got.contacts, got.segments, want.contacts, want.segments)
			}
		})
	}
}
