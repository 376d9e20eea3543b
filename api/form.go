package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

// How much a form may hold (decisions.md 8). The body is counted while it
// is read, so a list past its limit is refused at its first item too many
// and the rest of the body is never decoded: 10 MB of JSON holds about
// five million ids, which cost a minute and gigabytes when decoded whole
// before the bulk limit was applied.
const (
	// maxNameValues is how many values one name may carry (the items of
	// its list, the entries of its object, nested ones included) when it
	// has no limit of its own in listLimits.
	maxNameValues = service.MaxBulkIDs
	// maxFormValues is how many values a whole request body may carry:
	// the largest list, and room for every other field beside it.
	maxFormValues = 2 * service.MaxBulkIDs
	// maxJSONDepth is how deeply a JSON body may nest: the deepest name
	// the API reads is name[i][key] (three levels under the body).
	maxJSONDepth = 8
)

// listLimit is how many items a list takes, and the field whose message
// (`The <field> may not have more than <max> items.`) refuses more.
type listLimit struct {
	max   int
	field string
}

// listLimits are the names the API reads as lists (form.Array), each with
// its limit and with the field and wording the service uses for it, so
// that a list refused while it is read is answered exactly as one refused
// later. A single plain value of a list counts its comma-separated items.
var listLimits = map[string]listLimit{
	"strIds": {service.MaxBulkIDs, "strIds"},
	// A segment's conditions are counted on its fields, whichever of the
	// two lists is longer (compileConditions).
	"select_field":                  {service.MaxConditions, "select_field"},
	"select_operator":               {service.MaxConditions, "select_field"},
	"value":                         {service.MaxConditions, "value"},
	"recipient_id":                  {service.MaxBulkIDs, "recipient_id"},
	"exclude_specific_recipient_id": {service.MaxBulkIDs, "exclude_specific_recipient_id"},
	"events":                        {service.MaxBulkIDs, "events"},
}

// limitOf is the limit of name's values.
func limitOf(name string) listLimit {
	if l, ok := listLimits[name]; ok {
		return l
	}
	return listLimit{maxNameValues, name}
}

// errTooManyValues refuses a body of more than maxFormValues values.
var errTooManyValues = &service.Error{Code: service.CodeValidation,
	Message: fmt.Sprintf("The request may not have more than %d values.", maxFormValues)}

// formReader fills a form's body and counts what it holds.
type formReader struct {
	body   map[string][]string
	counts map[string]int // values per name (the part of a key before its first '[')
	total  int
}

func newFormReader(body map[string][]string) *formReader {
	return &formReader{body: body, counts: map[string]int{}}
}

// count adds n values to name, and refuses name's list or the whole body
// once past its limit.
func (r *formReader) count(name string, n int) error {
	r.counts[name] += n
	if l := limitOf(name); r.counts[name] > l.max {
		return service.TooManyItems(l.field, l.max)
	}
	return r.grow(n)
}

// grow adds n values to the whole body's, and refuses it once past
// maxFormValues.
func (r *formReader) grow(n int) error {
	r.total += n
	if r.total > maxFormValues {
		return errTooManyValues
	}
	return nil
}

// add stores v under key (a value of a URL-encoded or multipart body),
// counted as one value of its name, or as its comma-separated items when
// it is the plain value of a list (see form.Array).
func (r *formReader) add(key, v string) error {
	name, _, indexed := strings.Cut(key, "[")
	n := 1
	if _, list := listLimits[name]; list && !indexed {
		n = countItems(v, limitOf(name).max+1)
	}
	if err := r.count(name, n); err != nil {
		return err
	}
	r.body[key] = append(r.body[key], v)
	return nil
}

// parseForm reads the body of c by its Content-Type. Values are copied,
// so they stay valid after the handler returns. Errors: errBadBody (400),
// a validation error (422) for a body holding more than listLimits and
// maxFormValues allow, or text that is not valid UTF-8.
func parseForm(c *fiber.Ctx) (*form, error) {
	f := &form{body: map[string][]string{}, query: map[string][]string{}}
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		f.query[string(k)] = append(f.query[string(k)], string(v))
	})
	r := newFormReader(f.body)
	ct := strings.ToLower(string(c.Request().Header.ContentType()))
	body := c.Body()
	switch {
	case strings.HasPrefix(ct, fiber.MIMEApplicationJSON):
		if len(bytes.TrimSpace(body)) == 0 {
			return f, nil
		}
		if err := r.readJSON(body); err != nil {
			return nil, err
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
				if err := r.add(k, v); err != nil {
					return nil, err
				}
			}
		}
	case strings.HasPrefix(ct, fiber.MIMEApplicationForm):
		// fasthttp has parsed the arguments already (checkUTF8 walked
		// them); what is copied is counted, and nothing after a refusal.
		var err error
		c.Request().PostArgs().VisitAll(func(k, v []byte) {
			if err == nil {
				err = r.add(string(k), string(v))
			}
		})
		if err != nil {
			return nil, err
		}
	case len(bytes.TrimSpace(body)) == 0:
	default:
		return nil, errBadBody
	}
	return f, nil
}

// readJSON reads a JSON object body token by token into the form's naming
// (nested values as name[key] and name[i]; true and false as 1 and 0;
// null as ""), counting as it goes: the first value past a limit stops the
// reading. A body that is not one object (or null) is errBadBody, and so
// is one naming a member twice in an object (readers differ on which value
// wins; this one would have to hold both to choose), or nesting deeper
// than maxJSONDepth.
func (r *formReader) readJSON(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	switch {
	case err != nil:
		return errBadBody
	case tok == nil: // null: an empty form
	case tok == json.Delim('{'):
		if err := r.jsonObject(dec, "", "", 1); err != nil {
			return err
		}
	default:
		return errBadBody
	}
	if _, err := dec.Token(); err != io.EOF {
		return errBadBody
	}
	return nil
}

// jsonObject reads the members of an object whose '{' was read, up to its
// '}'. prefix is the object's key, name the name it counts toward ("" for
// the body itself, whose members are names of their own). depth is the
// depth of the members.
func (r *formReader) jsonObject(dec *json.Decoder, prefix, name string, depth int) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errBadBody
		}
		k, _ := tok.(string)
		if seen[k] {
			return errBadBody
		}
		seen[k] = true
		key, of := k, name
		if prefix == "" {
			of, _, _ = strings.Cut(k, "[")
		} else {
			key = prefix + "[" + k + "]"
			if err := r.count(name, 1); err != nil {
				return err
			}
		}
		if err := r.jsonValue(dec, key, of, depth); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return errBadBody
	}
	return nil
}

// jsonValue reads one value at depth, stored as key and counted toward
// name (a member of the body itself is at depth 1).
func (r *formReader) jsonValue(dec *json.Decoder, key, name string, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return errBadBody
	}
	var v string
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxJSONDepth {
			return errBadBody
		}
		if depth == 1 {
			// A member of the body counts toward the body; its items
			// count toward its name as well.
			if err := r.grow(1); err != nil {
				return err
			}
		}
		if t == '{' {
			return r.jsonObject(dec, key, name, depth+1)
		}
		// '[': every item counts, lists and objects too, so that a list
		// of empty lists costs no less than a list of ids.
		i := 0
		for ; dec.More(); i++ {
			if err := r.count(name, 1); err != nil {
				return err
			}
			if err := r.jsonValue(dec, key+"["+strconv.Itoa(i)+"]", name, depth+1); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return errBadBody
		}
		if i == 0 {
			r.body[key+"[]"] = []string{}
		}
		return nil
	case string:
		v = t
	case json.Number:
		v = t.String()
	case bool:
		v = "0"
		if t {
			v = "1"
		}
	}
	if depth == 1 {
		return r.add(key, v) // counted as a form's value is
	}
	r.body[key] = append(r.body[key], v)
	return nil
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
			if len(vs) == 1 {
				// parseForm counted these items against listLimits; the
				// query was not, so no more than one past the limit are
				// made, enough for the caller to refuse them.
				out = splitItems(vs[0], limitOf(key).max+1)
				break
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

// splitItems returns the non-blank comma-separated items of v, trimmed,
// at most max of them.
func splitItems(v string, max int) []string {
	var out []string
	for len(out) < max {
		item, rest, more := strings.Cut(v, ",")
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
		if !more {
			break
		}
		v = rest
	}
	return out
}

// countItems is len(splitItems(v, max)), without making the items.
func countItems(v string, max int) int {
	n := 0
	for n < max {
		item, rest, more := strings.Cut(v, ",")
		if strings.TrimSpace(item) != "" {
			n++
		}
		if !more {
			break
		}
		v = rest
	}
	return n
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
