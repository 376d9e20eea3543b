package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// form is a request's input, whatever its encoding: multipart, URL-encoded
// or a JSON object, plus the query string. Arrays arrive as `name[0]`,
// `name[]` repeated, `name` repeated, or a JSON array; nested JSON
// objects as `name[key]`.
type form struct {
	body  map[string][]string
	query map[string][]string
}

// errBadBody is answered 400: the body cannot be read as its type says.
var errBadBody = fiber.NewError(fiber.StatusBadRequest, textBadBody)

// parseForm reads the body of c by its Content-Type. Values are copied,
// so they stay valid after the handler returns.
func parseForm(c *fiber.Ctx) (*form, error) {
	f := &form{body: map[string][]string{}, query: map[string][]string{}}
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		f.query[string(k)] = append(f.query[string(k)], string(v))
	})
	ct := strings.ToLower(string(c.Request().Header.ContentType()))
	body := c.Body()
	switch {
	case strings.HasPrefix(ct, fiber.MIMEApplicationJSON):
		if len(bytes.TrimSpace(body)) == 0 {
			return f, nil
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil || dec.More() {
			return nil, errBadBody
		}
		for k, v := range obj {
			flatten(f.body, k, v)
		}
	case strings.HasPrefix(ct, fiber.MIMEMultipartForm):
		mf, err := c.MultipartForm()
		if err != nil {
			return nil, errBadBody
		}
		for k, vs := range mf.Value {
			for _, v := range vs {
				if !utf8.ValidString(k) || !utf8.ValidString(v) {
					return nil, service.NotUTF8(k)
				}
			}
			f.body[k] = append(f.body[k], vs...)
		}
	case strings.HasPrefix(ct, fiber.MIMEApplicationForm):
		c.Request().PostArgs().VisitAll(func(k, v []byte) {
			f.body[string(k)] = append(f.body[string(k)], string(v))
		})
	case len(bytes.TrimSpace(body)) == 0:
	default:
		return nil, errBadBody
	}
	return f, nil
}

// flatten stores a JSON value under key in the form's naming.
func flatten(m map[string][]string, key string, v any) {
	switch t := v.(type) {
	case nil:
		m[key] = append(m[key], "")
	case string:
		m[key] = append(m[key], t)
	case json.Number:
		m[key] = append(m[key], t.String())
	case bool:
		if t {
			m[key] = append(m[key], "1")
		} else {
			m[key] = append(m[key], "0")
		}
	case []any:
		for i, item := range t {
			flatten(m, fmt.Sprintf("%s[%d]", key, i), item)
		}
		if len(t) == 0 {
			m[key+"[]"] = []string{}
		}
	case map[string]any:
		for k, item := range t {
			flatten(m, key+"["+k+"]", item)
		}
	}
}

// Get returns the first value of key from the body, else from the query.
func (f *form) Get(key string) string {
	if vs := f.body[key]; len(vs) > 0 {
		return vs[0]
	}
	if vs := f.query[key]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// Has reports whether the body or the query holds key (even empty).
func (f *form) Has(key string) bool {
	_, inBody := f.body[key]
	_, inQuery := f.query[key]
	return inBody || inQuery
}

// Array returns the items of the array key in their order: indexed items
// (`key[0]`, `key[1]` …) sorted by index, then `key[]` and repeated `key`
// items. A single plain value holding commas is split on them.
func (f *form) Array(key string) []string {
	type item struct {
		i int
		v string
	}
	var indexed []item
	var out []string
	for _, src := range []map[string][]string{f.body, f.query} {
		for k, vs := range src {
			if !strings.HasPrefix(k, key+"[") || !strings.HasSuffix(k, "]") {
				continue
			}
			inner := k[len(key)+1 : len(k)-1]
			if inner == "" {
				out = append(out, vs...)
				continue
			}
			if i, err := strconv.Atoi(inner); err == nil {
				for _, v := range vs {
					indexed = append(indexed, item{i, v})
				}
			}
		}
		if len(indexed) > 0 || len(out) > 0 {
			break
		}
		if vs := src[key]; len(vs) > 0 {
			if len(vs) == 1 && strings.Contains(vs[0], ",") {
				vs = strings.Split(vs[0], ",")
			}
			for _, v := range vs {
				if v = strings.TrimSpace(v); v != "" {
					out = append(out, v)
				}
			}
			break
		}
	}
	sort.SliceStable(indexed, func(a, b int) bool { return indexed[a].i < indexed[b].i })
	res := make([]string, 0, len(indexed)+len(out))
	for _, it := range indexed {
		res = append(res, it.v)
	}
	return append(res, out...)
}

// Map returns the entries `key[name]` as name → value (custom fields).
func (f *form) Map(key string) map[string]string {
	m := map[string]string{}
	for k, vs := range f.body {
		if strings.HasPrefix(k, key+"[") && strings.HasSuffix(k, "]") && len(vs) > 0 {
			if name := k[len(key)+1 : len(k)-1]; name != "" {
				m[name] = vs[0]
			}
		}
	}
	return m
}
