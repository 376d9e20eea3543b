package audience

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"herald/service/core"
)

// ImportColumn is the console's choice for one column of a CSV file
// before its import: Field names what the column fills (a reserved field
// or a custom field, by name), SkipColumn leaves it out, NewColumn makes
// a custom field NewName of NewType for it, and "" keeps what the file's
// header says.
type ImportColumn struct {
	Field   string
	NewName string
	NewType string
}

// The choices of ImportColumn.Field that are not field names.
const (
	SkipColumn = "-"
	NewColumn  = "+new"
)

// maxImportColumns bounds the columns a mapping may name.
const maxImportColumns = 1000

// ImportColumns checks the console's column choices of an upload and
// makes the custom fields they ask for. It returns the header to read
// the file with, by position (models.Import.Columns: "" keeps the file's
// own name, SkipColumn leaves the column out). The choices are checked
// first, so a refused mapping makes no field; a new field refused when
// it is made (its name taken meanwhile) stops there. Errors: validation
// (key "columns", one message per refused column).
func (f *Fields) ImportColumns(ctx context.Context, accountID int64, cols map[int]ImportColumn) ([]string, error) {
	if len(cols) == 0 {
		return nil, nil
	}
	n := 0
	for i := range cols {
		if i < 0 || i >= maxImportColumns {
			return nil, core.Invalid("columns", fmt.Sprintf("A file may have at most %d columns.", maxImportColumns))
		}
		n = max(n, i+1)
	}
	customs, err := customFields(ctx, f.db.R, accountID)
	if err != nil {
		return nil, fmt.Errorf("fields: custom fields of account %d: %w", accountID, err)
	}
	p := core.Problems{}
	out := make([]string, n)
	filledBy := map[string]int{}
	fill := func(i int, name string) {
		key := strings.ToLower(name)
		if j, ok := filledBy[key]; ok {
			p.Add("columns", fmt.Sprintf("Columns %d and %d both fill %s: choose one.", j+1, i+1, name))
			return
		}
		filledBy[key] = i
		out[i] = name
	}
	for i := range n {
		c := cols[i]
		choice := strings.TrimSpace(c.Field)
		switch {
		case choice == "":
		case choice == SkipColumn:
			out[i] = SkipColumn
		case choice == NewColumn:
			name := strings.TrimSpace(c.NewName)
			if name == "" {
				p.Add("columns", fmt.Sprintf("Column %d: name the new field.", i+1))
				continue
			}
			if !oneOf(strings.TrimSpace(c.NewType), FieldTypes) {
				p.Add("columns", fmt.Sprintf("Column %d: choose the new field's type.", i+1))
				continue
			}
			for _, cf := range customs {
				if strings.EqualFold(cf.FieldName, name) {
					p.Add("columns", fmt.Sprintf("Column %d: a field named %s exists already; choose it instead.", i+1, cf.FieldName))
				}
			}
			fill(i, name)
		case isImportSlot(strings.ToLower(choice)) || strings.EqualFold(choice, "tags"):
			fill(i, strings.ToLower(choice))
		default:
			found := false
			for _, cf := range customs {
				if strings.EqualFold(cf.FieldName, choice) {
					fill(i, cf.FieldName)
					found = true
					break
				}
			}
			if !found {
				p.Add("columns", fmt.Sprintf("Column %d: there is no field %q.", i+1, choice))
			}
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	for i := range n {
		c := cols[i]
		if strings.TrimSpace(c.Field) != NewColumn {
			continue
		}
		if _, err := f.Create(ctx, accountID, FieldInput{FieldName: strings.TrimSpace(c.NewName), FieldType: strings.TrimSpace(c.NewType)}); err != nil {
			var e *core.Error
			if ok := asValidation(err, &e); !ok {
				return nil, err
			}
			for _, msgs := range e.Fields {
				for _, m := range msgs {
					p.Add("columns", fmt.Sprintf("Column %d: %s", i+1, m))
				}
			}
			return nil, p.Err()
		}
	}
	return out, nil
}

// asValidation reports whether err is (or wraps) a validation *Error,
// setting e.
func asValidation(err error, e **core.Error) bool {
	var v *core.Error
	ok := errors.As(err, &v)
	if ok && v.Code == core.CodeValidation {
		*e = v
	}
	return ok && v.Code == core.CodeValidation
}

// applyColumns puts the console's column choices over a file's header
// (see Fields.ImportColumns): a chosen name replaces the file's, a
// skipped column gets no name (mapHeader passes it over).
func applyColumns(header, cols []string) {
	for i, c := range cols {
		if i >= len(header) {
			return
		}
		switch c {
		case "":
		case SkipColumn:
			header[i] = ""
		default:
			header[i] = c
		}
	}
}
