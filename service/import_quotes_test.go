package service_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// importInBackground runs the import of file as the console does
// (Imports.Go) and returns it as stored once its goroutine has ended.
func importInBackground(t *testing.T, svc *service.Service, acct, typeID int64, file string) *models.Import {
	t.Helper()
	ctx := context.Background()
	imp, err := svc.Imports.Start(ctx, acct, typeID, "people.csv", int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	svc.Imports.Go(imp, strings.NewReader(file), func() { close(ended) })
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the import's goroutine has not ended after a minute")
	}
	got, err := svc.Imports.Get(ctx, acct, imp.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// emailsOf lists the addresses of the account's contacts, sorted.
func emailsOf(t *testing.T, svc *service.Service, acct int64) []string {
	t.Helper()
	var out []string
	if err := svc.Contacts.Each(context.Background(), acct, service.ContactFilter{}, func(v *models.ContactView) error {
		out = append(out, v.Email)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// goodRows writes n valid rows good0@… to good<n-1>@….
func goodRows(b *strings.Builder, n int) []string {
	var emails []string
	for i := range n {
		fmt.Fprintf(b, "good%d@example.com,Good %d\n", i, i)
		emails = append(emails, fmt.Sprintf("good%d@example.com", i))
	}
	slices.Sort(emails)
	return emails
}

// A quote that opens a field and never closes swallows every line after
// it into that field: the import ends failed, its message naming the line
// where the quote opens, and the rows before it are imported, whichever
// writer the database has (SQLite's upserts of 1,000 rows, PostgreSQL's
// COPY of 5,000) and however many batches came before. It never stays
// "running", and nothing after the broken line is imported.
func TestImportUnclosedQuoteFails(t *testing.T) {
	for _, tt := range []struct {
		name string
		good int    // valid rows before the broken one
		bad  string // the broken line and what follows it
	}{
		{"in the first field, to the end of the file", 5, "\"gee@example.com,Gee\nhal@example.com,Hal\nian@example.com,Ian\n"},
		{"in a later field, to the end of the file", 5, "gee@example.com,\"Gee\nhal@example.com,Hal\n"},
		{"without a line end", 5, "gee@example.com,\"Gee"},
		{"meeting a quote on a later line", 5, "gee@example.com,\"Gee\nhal@example.com,\"Hal\"\nian@example.com,Ian\n"},
		{"after full batches", 6000, "\"gee@example.com,Gee\nhal@example.com,Hal\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			svc := dbtest.Service(t)
			acct := servicetest.NewAccount(t, svc, "quotes@example.com")
			ct, err := svc.ContactTypes.Create(context.Background(), acct, "Type")
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			b.WriteString("email,first_name\n")
			want := goodRows(&b, tt.good)
			line := tt.good + 2
			b.WriteString(tt.bad)

			got := importInBackground(t, svc, acct, ct.ID, b.String())
			msg := fmt.Sprintf("Line %d: a quoted field is not closed.", line)
			if got.Status != "failed" || got.FinishedAt == nil || !strings.HasPrefix(got.Message, msg) {
				t.Fatalf("import: status %q, finished %v, message %q; want failed with %q", got.Status, got.FinishedAt, got.Message, msg)
			}
			if got.Created != int64(tt.good) || got.RowsRead != int64(tt.good) {
				t.Errorf("report: rows %d, created %d; want %d", got.RowsRead, got.Created, tt.good)
			}
			if emails := emailsOf(t, svc, acct); !slices.Equal(emails, want) {
				t.Errorf("%d contacts after the import, want the %d rows before line %d", len(emails), len(want), line)
			}
		})
	}
}

// The import answers the API's upload with the same message, as a
// refusal of the file, once the rows before the broken line are in.
func TestImportUnclosedQuoteAnswer(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "answer@example.com")
	ct, err := svc.ContactTypes.Create(ctx, acct, "Type")
	if err != nil {
		t.Fatal(err)
	}
	file := "email,first_name\nann@example.com,Ann\n\"bob@example.com,Bob\n"
	imp, err := svc.Imports.Start(ctx, acct, ct.ID, "people.csv", int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	err = svc.Imports.Import(ctx, imp, strings.NewReader(file))
	var se *service.Error
	var msgs []string
	if errors.As(err, &se) {
		msgs = se.Fields["file"]
	}
	if service.ErrorCode(err) != service.CodeValidation || len(msgs) != 1 || !strings.HasPrefix(msgs[0], "Line 3: a quoted field is not closed.") {
		t.Fatalf("Import: %v (file: %q)", err, msgs)
	}
	if imp.Status != "failed" || imp.Message != msgs[0] || imp.Created != 1 {
		t.Fatalf("import: %+v", imp)
	}
	if emails := emailsOf(t, svc, acct); !slices.Equal(emails, []string{"ann@example.com"}) {
		t.Fatalf("contacts: %v", emails)
	}
}

// A stray quote confined to one line loses only that row: it is skipped
// and reported by line, and the rows after it are imported.
func TestImportStrayQuoteSkipsTheRow(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	acct := servicetest.NewAccount(t, svc, "stray@example.com")
	ct, err := svc.ContactTypes.Create(context.Background(), acct, "Type")
	if err != nil {
		t.Fatal(err)
	}
	file := "email,first_name\n" +
		"ann@example.com,Ann\n" +
		"bo\"b@example.com,Bob\n" + // a quote inside a field that is not quoted
		"\"cid@example.com\"x,Cid\n" + // text after a quoted field's closing quote
		"dee@example.com,Dee \"The\" Third\n" +
		"eve@example.com,Eve\n"
	got := importInBackground(t, svc, acct, ct.ID, file)
	if got.Status != "done" || got.Skipped != 3 || got.Created != 2 {
		t.Fatalf("import: status %q, message %q, created %d, skipped %d, problems %v", got.Status, got.Message, got.Created, got.Skipped, got.Problems)
	}
	lines := map[int64]string{}
	for _, p := range got.Problems {
		lines[p.Line] = p.Reason
	}
	for line, want := range map[int64]string{
		3: `The row cannot be read: a field has a quote (") inside but does not start with one.`,
		4: `The row cannot be read: a quoted field has a quote (") inside that is not doubled.`,
		5: `The row cannot be read: a field has a quote (") inside but does not start with one.`,
	} {
		if lines[line] != want {
			t.Errorf("line %d: %q, want %q (all: %v)", line, lines[line], want, got.Problems)
		}
	}
	if emails := emailsOf(t, svc, acct); !slices.Equal(emails, []string{"ann@example.com", "eve@example.com"}) {
		t.Fatalf("contacts: %v", emails)
	}
}
