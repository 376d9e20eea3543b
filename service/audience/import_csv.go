package audience

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"

	"herald/service/core"
)

// csvRows reads the records of an import's file with the import's
// settings: a UTF-8 BOM dropped, the delimiter read from the header line
// (sniffDelimiter), any number of fields per row, and strict quotes: with
// lazy quotes a quote left open would silently read the rest of the file
// into one field. It sorts the reader's errors by what they cost: a row
// that cannot be read is rejected with a reason and the file goes on; a
// quote that does not close breaks the rows after it apart, so the file
// stops there (csvBroken).
type csvRows struct {
	rd    *csv.Reader
	ahead *csvRecord // a record read ahead, handed out by the next call
}

type csvRecord struct {
	rec  []string
	line int
	err  error
}

// newCSVRows reads the file from br (which must buffer at least 64 KB,
// the most of a header line the delimiter is sniffed from).
func newCSVRows(br *bufio.Reader) *csvRows {
	if bom, _ := br.Peek(3); len(bom) == 3 && bom[0] == 0xEF && bom[1] == 0xBB && bom[2] == 0xBF {
		_, _ = br.Discard(3)
	}
	rd := csv.NewReader(br)
	rd.Comma = sniffDelimiter(br)
	rd.FieldsPerRecord = -1
	rd.ReuseRecord = true
	return &csvRows{rd: rd}
}

// csvBroken ends an import at a quote that opens a field and does not
// close it before the end of the file (or closes only on a later line,
// before text that cannot follow a closing quote): the lines after it are
// not rows that can be trusted.
type csvBroken struct{ line int }

func (e *csvBroken) Error() string {
	return fmt.Sprintf("Line %d: a quoted field is not closed.", e.line)
}

// header reads the header row. Errors: validation (key file: the file is
// empty, or its header row cannot be read); the reader's failures.
func (c *csvRows) header() ([]string, error) {
	rec, _, reason, err := c.next()
	var broken *csvBroken
	switch {
	case err == io.EOF:
		return nil, core.Invalid("file", "The file is empty.")
	case errors.As(err, &broken):
		return nil, core.Invalid("file", broken.Error())
	case err != nil:
		return nil, core.Invalid("file", "The header row cannot be read: "+err.Error())
	case reason != "":
		return nil, core.Invalid("file", "The header row cannot be read: "+reason+".")
	}
	return rec, nil
}

// next returns the next record and the line it starts on. A record that
// cannot be read comes back as its line and the reason (a clause, no
// capital, no full stop), with a nil record. Errors: io.EOF at the end,
// *csvBroken (the file stops there), the reader's failures. The record is
// reused by the call after.
func (c *csvRows) next() (rec []string, line int, reason string, err error) {
	r := c.read()
	if r.err == nil || r.err == io.EOF {
		return r.rec, r.line, "", r.err
	}
	var pe *csv.ParseError
	if !errors.As(r.err, &pe) {
		return nil, 0, "", r.err
	}
	// A quote error that ran past its line, or that ends the file, is a
	// quote that never closed. The reader words both the same way as a
	// quote closed too early on one line (`"abc"x`), after which it goes on
	// at the next line: only that one costs a single row.
	if errors.Is(pe.Err, csv.ErrQuote) && (pe.Line > pe.StartLine || c.atEnd()) {
		return nil, pe.StartLine, "", &csvBroken{line: pe.StartLine}
	}
	return nil, pe.StartLine, csvReason(pe.Err), nil
}

// read returns the record read ahead, or reads one.
func (c *csvRows) read() csvRecord {
	if r := c.ahead; r != nil {
		c.ahead = nil
		return *r
	}
	rec, err := c.rd.Read()
	r := csvRecord{rec: rec, err: err}
	if err == nil && len(rec) > 0 {
		// A record read without error has the position of each field.
		r.line, _ = c.rd.FieldPos(0)
	}
	return r
}

// atEnd reports whether the file holds no record after the one just
// read; a record it reads to know is handed out by the next call.
func (c *csvRows) atEnd() bool {
	r := c.read()
	c.ahead = &r
	return r.err == io.EOF
}

// csvReason words a parse error of one row.
func csvReason(err error) string {
	switch {
	case errors.Is(err, csv.ErrBareQuote):
		return `a field has a quote (") inside but does not start with one`
	case errors.Is(err, csv.ErrQuote):
		return `a quoted field has a quote (") inside that is not doubled`
	}
	return err.Error()
}

// sniffDelimiter reads the header line ahead (without consuming it) and
// picks the delimiter it uses most outside quotes: a comma, a semicolon
// (what spreadsheets write where the comma is the decimal mark) or a
// tab. A header with none of them (a lone email column) is read with
// commas.
func sniffDelimiter(br *bufio.Reader) rune {
	head, _ := br.Peek(64 << 10) // a header longer than this is read with commas
	counts := map[byte]int{}
	quoted := false
	for _, c := range head {
		if c == '"' {
			quoted = !quoted
			continue
		}
		if quoted {
			continue
		}
		if c == '\n' || c == '\r' {
			break
		}
		if c == ',' || c == ';' || c == '\t' {
			counts[c]++
		}
	}
	best := byte(',')
	for _, c := range []byte{';', '\t'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return rune(best)
}
