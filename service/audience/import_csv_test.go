package audience

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"herald/models"
	"herald/service/core"
)

// importSeeds are files the fuzzer starts from; as a seed corpus they run
// in every go test. Each names what it covers.
var importSeeds = []struct {
	name, file string
	mapping    uint8  // index into fuzzMappings
	want       string // the outcome (importFileOutcome.String)
}{
	{"plain", "email,first_name,last_name\nann@example.com,Ann,Lee\nbob@example.com,Bob,\n", 0, "accepted [2 3]"},
	{"BOM, CRLF, spaced header", "\ufeffEmail,First Name,country\r\nann@example.com,Ann,US\r\n", 0, "accepted [2]"},
	{"semicolons", "email;first_name;company\nann@example.com;Ann;\"Acme; Sons\"\n", 0, "accepted [2]"},
	{"tabs", "email\tage\nann@example.com\t41\n", 0, "accepted [2]"},
	{"quoted newline and doubled quote", "email,first_name,company\n\"ann@example.com\",\"Ann\nMulti\",\"Say \"\"hi\"\"\"\n", 0, "rejected [2]"},
	{"custom fields", "email,age,joined,company\nann@example.com,abc,2026-01-31T09:30,Acme\nbob@example.com,42,soon,\n", 0, "rejected [2 3]"},
	{"unclosed quote, first field", "email,first_name\nann@example.com,Ann\n\"bob@example.com,Bob\ncid@example.com,Cid\n", 0, "accepted [2], broken at 3"},
	{"unclosed quote, later field", "email,first_name\nann@example.com,\"Ann\n", 0, "broken at 2"},
	{"unclosed quote, no line end", "email,first_name\nann@example.com,\"Ann", 0, "broken at 2"},
	{"unclosed quote meets a quote", "email,first_name\nann@example.com,\"Ann\nbob@example.com,\"Bob\"\ncid@example.com,Cid\n", 0, "broken at 2"},
	{"bare quote, first field", "email,first_name\nan\"n@example.com,Ann\nbob@example.com,Bob\n", 0, "accepted [3], rejected [2]"},
	{"text after a closing quote", "email,first_name\n\"ann@example.com\"x,Ann\nbob@example.com,Bob\n", 0, "accepted [3], rejected [2]"},
	{"text after a closing quote, last line", "email,first_name\nbob@example.com,Bob\n\"ann@example.com\"x,Ann\n", 0, "accepted [2], broken at 3"},
	{"unclosed quote in the header", "email,\"first_name\nann@example.com,Ann\n", 0, "refused: Line 1: a quoted field is not closed."},
	{"lone quote", "\"", 0, "refused: Line 1: a quoted field is not closed."},
	{"empty", "", 0, "refused: The file is empty."},
	{"BOM only", "\ufeff", 0, "refused: The file is empty."},
	{"blank lines", "\n\n\nemail\n\n\nann@example.com\n\n", 0, "accepted [7]"},
	{"no email column", "name,age\nAnn,1\n", 0, "no email column"},
	{"CR only: one line", "email,first_name\rann@example.com,Ann\r", 0, "no rows"},
	{"NUL and bad UTF-8", "email,first_name,company\nann@example.com,A\x00nn,\xff\xfe\nbob\x00@example.com,Bob,x\x00y\n", 0, "rejected [2 3]"},
	{"more cells than the header", "email\nann@example.com,extra,cells\n,\n", 0, "accepted [2], rejected [3]"},
	{"columns chosen: one skipped", "email,first_name\nann@example.com,Ann\n", 1, "accepted [2]"},
	{"columns chosen: renamed", "mail,name,junk,firm\nann@example.com,Ann,x,Acme\n", 2, "accepted [2]"},
}

// fuzzMappings are column choices of the console (models.Import.Columns).
var fuzzMappings = [][]string{nil, {"", SkipColumn}, {"email", "first_name", SkipColumn, "company"}}

// fuzzCustoms are the account's custom fields, one of each type.
var fuzzCustoms = []models.Field{{FieldName: "age", FieldType: "number"}, {FieldName: "joined", FieldType: "datetime-local"}, {FieldName: "company", FieldType: "text"}}

// FuzzImportCSV reads arbitrary files the way an import does (its CSV
// settings, header mapping and column choices, row validation) and checks
// that it never panics and ends either at the end of the file or with a
// clean error: the header refused as a validation of the file, or the
// file broken off at a line. Rows come with increasing line numbers, no
// more records than lines; every row accepted can be written to either
// database (valid UTF-8, no NUL, an address, a JSON object of custom
// values).
func FuzzImportCSV(f *testing.F) {
	for _, s := range importSeeds {
		f.Add([]byte(s.file), s.mapping)
	}
	f.Fuzz(func(t *testing.T, data []byte, mapping uint8) {
		readImportFile(t, data, fuzzMappings[int(mapping)%len(fuzzMappings)])
	})
}

// importFileOutcome is what reading one file gave.
type importFileOutcome struct {
	headerErr error
	accepted  []int // lines of the rows accepted
	rejected  []int // lines of the rows rejected
	broken    int   // the line the file broke off at, 0 if it did not
	noEmail   bool  // the header has no email column (the import stops there)
}

func (o importFileOutcome) String() string {
	if o.headerErr != nil {
		var se *core.Error
		errors.As(o.headerErr, &se)
		return "refused: " + strings.Join(se.Fields["file"], " ")
	}
	if o.noEmail {
		return "no email column"
	}
	var parts []string
	if len(o.accepted) > 0 {
		parts = append(parts, fmt.Sprint("accepted ", o.accepted))
	}
	if len(o.rejected) > 0 {
		parts = append(parts, fmt.Sprint("rejected ", o.rejected))
	}
	if o.broken > 0 {
		parts = append(parts, fmt.Sprint("broken at ", o.broken))
	}
	if len(parts) == 0 {
		return "no rows"
	}
	return strings.Join(parts, ", ")
}

// Each seed file reads as the import's rules say: rows accepted and
// rejected by line, the file broken off at an unclosed quote, or refused.
func TestImportCSVSeeds(t *testing.T) {
	t.Parallel()
	for _, s := range importSeeds {
		t.Run(s.name, func(t *testing.T) {
			got := readImportFile(t, []byte(s.file), fuzzMappings[s.mapping])
			if got.String() != s.want {
				t.Errorf("got %s, want %s", got, s.want)
			}
		})
	}
}

func readImportFile(t *testing.T, data []byte, columns []string) importFileOutcome {
	t.Helper()
	var out importFileOutcome
	rows := newCSVRows(bufio.NewReaderSize(bytes.NewReader(data), 256<<10))
	header, err := rows.header()
	if err != nil {
		var se *core.Error
		if !errors.As(err, &se) || se.Code != core.CodeValidation || len(se.Fields["file"]) != 1 {
			t.Fatalf("header: %v, want a validation of the file", err)
		}
		out.headerErr = err
		return out
	}
	applyColumns(header, columns)
	cols, _ := mapHeader(header, fuzzCustoms)
	out.noEmail = cols.email < 0
	maxRecords := bytes.Count(data, []byte("\n")) + 1
	last := 1 // the header takes a line at least
	for n := 0; ; n++ {
		rec, line, reason, err := rows.next()
		if err == io.EOF {
			return out
		}
		if n >= maxRecords {
			t.Fatalf("more than %d records from a file of as many lines", maxRecords)
		}
		if line <= last {
			t.Fatalf("a record at line %d after line %d", line, last)
		}
		last = line
		if err != nil {
			var broken *csvBroken
			if !errors.As(err, &broken) || broken.line != line {
				t.Fatalf("line %d: %v, want the file broken off there", line, err)
			}
			if want := "Line " + strconv.Itoa(line) + ": a quoted field is not closed."; broken.Error() != want {
				t.Fatalf("message %q, want %q", broken.Error(), want)
			}
			out.broken = line
			return out
		}
		if reason != "" {
			if rec != nil || strings.HasSuffix(reason, ".") {
				t.Fatalf("line %d: record %q with reason %q", line, rec, reason)
			}
			out.rejected = append(out.rejected, line)
			continue
		}
		if len(rec) == 0 {
			t.Fatalf("line %d: a record without fields", line)
		}
		if out.noEmail {
			continue // the import refuses such a file before its rows; they are read all the same
		}
		row, why := cols.row(rec, fuzzCustoms)
		if why != "" {
			out.rejected = append(out.rejected, line)
			continue
		}
		c := row.c
		values := []string{c.Email, c.FirstName, c.LastName, c.Country, c.State, c.City, c.AddressLine1, c.AddressLine2, c.StateProvinceRegion, c.PostalCode}
		if c.AltEmail != nil {
			values = append(values, *c.AltEmail)
		}
		for k, v := range row.custom {
			values = append(values, k, v)
		}
		for _, v := range values {
			if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
				t.Fatalf("line %d: accepted value %q cannot be stored", line, v)
			}
		}
		if c.Email == "" {
			t.Fatalf("line %d: a row accepted without an address: %q", line, rec)
		}
		if js := customJSON(row.custom); !json.Valid([]byte(js)) {
			t.Fatalf("line %d: custom values %s are not JSON", line, js)
		}
		out.accepted = append(out.accepted, line)
	}
}
