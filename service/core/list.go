package core

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// ListFilter narrows a list. Page and PerPage (beyond the spec) return one
// page; without them the whole collection is read in batches.
type ListFilter struct {
	Search  string
	Page    int
	PerPage int
	// AfterID resumes a whole-collection read after this id (keyset).
	AfterID int64
	// Newest lists the newest rows (highest ids) first; AfterID then
	// resumes below that id.
	Newest bool
	// Sort names a column the list offers to sort by (its keys: each
	// list's Sorts); "" or an unknown key keeps the order by id. Desc
	// reverses it. A sorted list is read by pages (Page, PerPage) with
	// LIMIT/OFFSET over an index of (user_id, column); without PerPage the
	// whole collection is read by id as before.
	Sort string
	Desc bool
	// Status keeps the rows of one state (each list's Statuses); "" all.
	Status string

	order string // the column of Sort, set by sortedBy
}

// SortedBy resolves f.Sort among a list's columns (key → column).
func (f ListFilter) SortedBy(cols map[string]string) ListFilter {
	f.order = cols[f.Sort]
	return f
}

// BatchSize is how many rows a list reads per query: large enough that a
// query's cost is spread over many rows, small enough that memory stays
// flat however long the list is.
const BatchSize = 1000

// MaxPerPage caps one page.
const MaxPerPage = 1000

// Each runs fn for every row of the query built by q, ordered by id. The
// whole collection is read by keyset batches (id > last), so no query
// holds a connection while fn runs and memory does not grow with the
// collection. idOf returns a row's id. table qualifies the id column.
func Each[T any](ctx context.Context, f ListFilter, table string, q func() *gorm.DB, idOf func(*T) int64, fn func(*T) error) error {
	return EachFetched(ctx, f, table, q, findInto[T], idOf, fn)
}

// findInto reads the rows of q into dst with GORM.
func findInto[T any](q *gorm.DB, dst *[]T) error { return q.Find(dst).Error }

// EachFetched is each with its own way of reading a batch (fetch), for
// lists whose rows are scanned by hand.
func EachFetched[T any](ctx context.Context, f ListFilter, table string, q func() *gorm.DB, fetch func(*gorm.DB, *[]T) error, idOf func(*T) int64, fn func(*T) error) error {
	idCol := "id"
	if table != "" {
		idCol = table + ".id"
	}
	order, after := idCol, idCol+" > ?"
	if f.Newest {
		order, after = idCol+" DESC", idCol+" < ?"
	}
	if f.PerPage > 0 && f.order != "" {
		// The id breaks ties, so that pages neither repeat nor skip rows.
		dir := " ASC"
		if f.Desc {
			dir = " DESC"
		}
		order = f.order + dir + ", " + idCol + dir
	} else if f.PerPage > 0 && f.Desc {
		order = idCol + " DESC"
	}
	if f.PerPage > 0 {
		per := min(f.PerPage, MaxPerPage)
		page := max(f.Page, 1)
		var rows []T
		if err := fetch(q().WithContext(ctx).Order(order).Limit(per).Offset((page-1)*per), &rows); err != nil {
			return fmt.Errorf("list: read page %d: %w", page, err)
		}
		for i := range rows {
			if err := fn(&rows[i]); err != nil {
				return err
			}
		}
		return nil
	}
	last := f.AfterID
	var rows []T // Find grows it to the batch's size: short lists stay small
	for first := true; ; first = false {
		rows = rows[:0]
		b := q().WithContext(ctx)
		if !first || !f.Newest || last > 0 { // newest first starts from the top
			b = b.Where(after, last)
		}
		if err := fetch(b.Order(order).Limit(BatchSize), &rows); err != nil {
			return fmt.Errorf("list: read after id %d: %w", last, err)
		}
		for i := range rows {
			if err := fn(&rows[i]); err != nil {
				return err
			}
		}
		if len(rows) < BatchSize {
			return nil
		}
		last = idOf(&rows[len(rows)-1])
	}
}

// LikePattern makes a case-insensitive substring pattern for LIKE, with
// the wildcards of the search text escaped (use with ESCAPE '\').
//
// A NUL is dropped: PostgreSQL refuses one in a query's text (a search of
// any list answered 500 there), and no text it stores holds one.
func LikePattern(s string) string { return "%" + LikeEscape(strings.ReplaceAll(s, "\x00", "")) + "%" }

// WithStatus narrows q to the rows of f.Status among a list's statuses;
// an unknown key narrows nothing.
func WithStatus(q *gorm.DB, f ListFilter, statuses map[string]string) *gorm.DB {
	if cond, ok := statuses[f.Status]; ok {
		return q.Where(cond)
	}
	return q
}
