package web

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
)

// perPage is how many rows a list page shows.
const perPage = 50

// eachFunc is the shape of the service's list iterators, bound to an account.
type eachFunc[T any] func(ctx context.Context, f service.ListFilter, fn func(*T) error) error

// listQuery reads the search text and page of a list from the query
// string or, for the answer to a change, from the form.
func listQuery(c *fiber.Ctx) views.ListQuery {
	page, _ := strconv.Atoi(c.FormValue("page"))
	sort, desc := strings.TrimSpace(formValue(c, "sort")), formValue(c, "dir") == "desc"
	if k, d, ok := strings.Cut(sort, ":"); ok { // the phones' sort select: key:dir
		sort, desc = k, d == "desc"
	}
	return views.ListQuery{Search: strings.TrimSpace(formValue(c, "q")), Page: max(page, 1),
		Sort: sort, Desc: desc, Status: strings.TrimSpace(formValue(c, "status"))}
}

// readPage reads one page of a list, and whether another page follows
// (by asking for the one row after it). A page past the end (its last
// rows were just deleted) falls back to the first page.
func readPage[T any](ctx context.Context, q views.ListQuery, base string, each eachFunc[T]) ([]T, views.Pager, error) {
	read := func(q views.ListQuery) ([]T, error) {
		rows := make([]T, 0, perPage)
		err := each(ctx, service.ListFilter{Search: q.Search, Page: q.Page, PerPage: perPage, Sort: q.Sort, Desc: q.Desc, Status: q.Status}, func(r *T) error {
			rows = append(rows, *r)
			return nil
		})
		return rows, err
	}
	rows, err := read(q)
	if err == nil && len(rows) == 0 && q.Page > 1 {
		q.Page = 1
		rows, err = read(q)
	}
	if err != nil {
		return nil, views.Pager{}, err
	}
	p := views.Pager{Base: base, Query: q}
	if len(rows) == perPage {
		// With PerPage 1, page n is the row at offset n-1.
		err = each(ctx, service.ListFilter{Search: q.Search, Page: q.Page*perPage + 1, PerPage: 1, Sort: q.Sort, Desc: q.Desc, Status: q.Status}, func(*T) error {
			p.HasNext = true
			return nil
		})
		if err != nil {
			return nil, views.Pager{}, err
		}
	}
	if len(rows) > 0 {
		p.First = (q.Page-1)*perPage + 1
		p.Last = p.First + len(rows) - 1
	}
	return rows, p, nil
}

// errStop ends an iteration early.
var errStop = errors.New("stop")

// formList reads every value of a repeated form field (checkboxes),
// from a URL-encoded or a multipart body, as strings of their own.
func formList(c *fiber.Ctx, name string) []string {
	var out []string
	if mf, err := c.MultipartForm(); err == nil {
		for _, v := range mf.Value[name] {
			out = append(out, strings.Clone(v))
		}
		return out
	}
	for _, v := range c.Request().PostArgs().PeekMulti(name) {
		out = append(out, string(v))
	}
	return out
}

// parseSelection reads the ids of the selected rows; nil when none is.
func parseSelection(c *fiber.Ctx) ([]int64, error) {
	raw := formList(c, "ids")
	if len(raw) == 0 {
		return nil, nil
	}
	return service.ParseIDs("ids", raw)
}

// addedMessage tells how many addresses an add really added.
func addedMessage(n int) string {
	switch n {
	case 0:
		return "Those addresses were already on the list."
	case 1:
		return "Added 1 address."
	}
	return "Added " + strconv.Itoa(n) + " addresses."
}

// deletedMessage tells how many rows a bulk delete removed: id is the
// console's plural message of the rows' kind ({{.N}} is the number).
func deletedMessage(n int, id string) string {
	return views.N(id, n, "N", strconv.Itoa(n))
}
