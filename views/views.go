// Package views holds the console's templ components: the layout, the
// pieces every page shares (fields, flash messages, pagination, empty
// states) and, in sub-packages mirroring web/, the pages themselves.
// Components take plain data; they never call the service.
package views

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"herald/models"
)

// Page is what the layout needs besides the content.
type Page struct {
	Title string
	Nav   string       // the active navigation entry (see the Nav* constants)
	CSRF  string       // the session's token, put on <body hx-headers> and in forms
	User  *models.User // nil on the pages shown before login
	// Member is the teammate logged in (nil: the owner) and Role its
	// role's label (what it may do reaches the components through the
	// context: views.Can).
	Member *models.Member
	Role   string
	Flash  *Flash // shown once, then gone

	// Styles and Scripts are the page's own files under /static, loaded
	// after the console's (the editor's GrapesJS).
	Styles  []string
	Scripts []string
}

// The navigation entries a page can mark as current.
const (
	NavDashboard     = "dashboard"
	NavContacts      = "contacts"
	NavSegments      = "segments"
	NavGlobal        = "global"
	NavGroups        = "groups"
	NavNotifications = "notifications"
	NavAccount       = "account"
	NavAPIDocs       = "apidocs"
	NavTemplates     = "templates"
	NavSenders       = "senders"
	NavOutbox        = "outbox"
	NavMessages      = "messages"
	NavRelays        = "relays"
	NavAutomations   = "automations" // equals views/automations.NavAutomations
	NavSingleSends   = "single-sends"
	NavBounced       = "bounced"
	NavEventWebhooks = "event-webhooks"
	NavTeam          = "team"
	NavAudit         = "audit-log"
	NavExports       = "exports"
	NavForms         = "forms"
)

// Flash is a one-time message shown at the top of the content.
type Flash struct {
	Kind    string // FlashSuccess, FlashError or FlashInfo
	Message string // a line, or a head line and a list of items, one a line
}

// Lines splits a message of several lines into its head and the items
// listed under it; a message of one line has no items.
func (f Flash) Lines() (head string, items []string) {
	head, rest, ok := strings.Cut(f.Message, "\n")
	if !ok {
		return f.Message, nil
	}
	for _, it := range strings.Split(rest, "\n") {
		if it = strings.TrimSpace(it); it != "" {
			items = append(items, it)
		}
	}
	return head, items
}

// The kinds of flash message.
const (
	FlashSuccess = "success"
	FlashError   = "error"
	FlashInfo    = "info"
)

// Errors are validation messages per form field.
type Errors map[string][]string

// For returns the messages of field.
func (e Errors) For(field string) []string { return e[field] }

// Has reports whether field has a message.
func (e Errors) Has(field string) bool { return len(e[field]) > 0 }

// ListQuery is a list's search text, page number, sort and status filter.
type ListQuery struct {
	Search string
	Page   int
	Sort   string // a column key of the list's; "" its default order
	Desc   bool   // the sort descends
	Status string // a status filter key of the list's; "" all
}

// Pager is a list's position: which page, and whether others exist.
type Pager struct {
	Base    string // the list's address, without query
	Query   ListQuery
	Extra   url.Values // other filters the page links keep (a contact type)
	First   int        // the number of the first row shown (1-based), 0 when none
	Last    int        // the number of the last row shown
	Total   int64      // the number of rows of the whole list, when counted (0: not shown)
	HasNext bool
}

// HasPrev reports whether a page comes before this one.
func (p Pager) HasPrev() bool { return p.Query.Page > 1 }

// URL is the address of page n with the same search.
func (p Pager) URL(n int) string {
	v := url.Values{}
	for k, vs := range p.Extra {
		for _, x := range vs {
			if x != "" {
				v.Add(k, x)
			}
		}
	}
	if p.Query.Search != "" {
		v.Set("q", p.Query.Search)
	}
	if p.Query.Sort != "" {
		v.Set("sort", p.Query.Sort)
		if p.Query.Desc {
			v.Set("dir", "desc")
		}
	}
	if p.Query.Status != "" {
		v.Set("status", p.Query.Status)
	}
	if n > 1 {
		v.Set("page", strconv.Itoa(n))
	}
	if len(v) == 0 {
		return p.Base
	}
	return p.Base + "?" + v.Encode()
}

// SortURL is the list sorted by key from its first page: ascending, or
// descending when it is already sorted by key ascending (desc first says
// a key starts descending: the newest dates first).
func (p Pager) SortURL(key string, descFirst bool) string {
	q := p.Query
	if q.Sort == key {
		q.Desc = !q.Desc
	} else {
		q.Sort, q.Desc = key, descFirst
	}
	p.Query = q
	return p.URL(1)
}

// AriaSort is the aria-sort of the column of key.
func (p Pager) AriaSort(key string) string {
	switch {
	case p.Query.Sort != key:
		return "none"
	case p.Query.Desc:
		return "descending"
	}
	return "ascending"
}

// SortChoice is a sort a list offers on phones, where its headers are
// hidden: the column's key, its label and the words of both directions.
type SortChoice struct {
	Key, Label, Asc, Desc string
}

// ByName and ByDate are the usual choices.
func ByName(key, label string) SortChoice {
	return SortChoice{Key: key, Label: label, Asc: "A to Z", Desc: "Z to A"}
}
func ByDate(key, label string) SortChoice {
	return SortChoice{Key: key, Label: label, Asc: "oldest first", Desc: "newest first"}
}

// ariaSortOf is the aria-sort of a column sorted by any of keys.
func (p Pager) ariaSortOf(keys []Option) string {
	for _, k := range keys {
		if s := p.AriaSort(k.Value); s != "none" {
			return s
		}
	}
	return "none"
}

// StatusURL is the list filtered to status ("" all) from its first page.
func (p Pager) StatusURL(status string) string {
	p.Query.Status = status
	return p.URL(1)
}

// csrfHeaders is the JSON of <body hx-headers>: htmx sends it with every request.
func csrfHeaders(token string) string {
	b, _ := json.Marshal(map[string]string{"X-CSRF-Token": token})
	return string(b)
}

// htmxConfig is the one decision about how htmx swaps answers: 422 (a form
// with its validation errors) swaps like a success; other errors swap too,
// because the console answers them with a message retargeted to the flash
// area (HX-Retarget); static/js/app.js refuses to swap an error that lacks
// that header. History is not cached in localStorage (pages hold private
// data); a back button reloads from the server.
const htmxConfig = `{"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},{"code":"422","swap":true,"error":false},{"code":"[45]..","swap":true,"error":true}],"historyCacheSize":0,"refreshOnHistoryMiss":true,"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}`

// Itoa formats an integer for a template.
func Itoa[T ~int | ~int64](n T) string { return strconv.FormatInt(int64(n), 10) }

// Count formats a number with thousands separators: 12,345.
func Count[T ~int | ~int64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Date formats a stored time as a short date, for lists.
func Date(t models.Timestamp) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("Jan 2, 2006")
}

// DateTime formats a stored time with the minute, for titles.
func DateTime(t models.Timestamp) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC1123)
}

// initial is the first letter of name, upper-cased, for the avatar.
func initial(name string) string {
	for _, r := range name {
		return strings.ToUpper(string(r))
	}
	return "?"
}

// Segment is a piece of text Linkify cut: a link or plain text.
type Segment struct {
	Text string
	URL  bool
}

var linkRE = regexp.MustCompile(`https?://[^\s<>"']+`)

// Linkify cuts text into plain pieces and the http(s) URLs in it, for a
// page to show the URLs as links (a mail's text part). Punctuation that
// ends a sentence is left outside the link.
func Linkify(text string) []Segment {
	var out []Segment
	last := 0
	for _, loc := range linkRE.FindAllStringIndex(text, -1) {
		start, end := loc[0], loc[1]
		for end > start && strings.ContainsRune(".,;:!?)]", rune(text[end-1])) {
			end--
		}
		if start > last {
			out = append(out, Segment{Text: text[last:start]})
		}
		out = append(out, Segment{Text: text[start:end], URL: true})
		last = end
	}
	if last < len(text) {
		out = append(out, Segment{Text: text[last:]})
	}
	return out
}
