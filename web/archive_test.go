package web_test

import (
	"encoding/xml"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/service/servicetest"
	"herald/web"
)

// archiveWorld is an account with two archived sends, completed, whose
// subjects need escaping in XML, and one send not archived.
type archiveWorld struct {
	f    *servicetest.SendFixture
	app  *testApp
	pub  string
	utrs []string // archived, oldest first
	off  string   // not archived
}

func newArchiveWorld(t *testing.T) *archiveWorld {
	f := servicetest.NewSendFixture(t, true)
	typeID := f.ContactType("Readers", "reader.one@private.example")
	w := &archiveWorld{f: f, app: newTestAppOn(t, f.Svc, web.Options{BaseURL: "http://herald.test"})}
	for i, subj := range []string{`Tom & Jerry's "news" <1>`, "Second issue for ((first_name))", "Not archived"} {
		in := f.Input("Send "+strconv.Itoa(i), []string{"contacts_" + strconv.FormatInt(typeID, 10)}, nil)
		in.Subject, in.Archive = subj, "1"
		if i == 2 {
			in.Archive = "0"
		}
		ss := f.Create(in)
		f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
		f.Advance(time.Minute) // distinct sent_at
		if i == 2 {
			w.off = ss.Utr
		} else {
			w.utrs = append(w.utrs, ss.Utr)
		}
	}
	var err error
	if w.pub, err = f.Svc.Archive.PublicID(f.Ctx, f.Acct); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestArchivePages(t *testing.T) {
	t.Parallel()
	w := newArchiveWorld(t)
	c := w.app.client()
	base := "/archive/" + w.pub

	r := c.get(base)
	wantStatus(t, r, http.StatusOK)
	if lang := attr(first(r.doc, "html"), "lang"); lang != "en" {
		t.Fatalf("html lang %q", lang)
	}
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("list CSP %q", csp)
	}
	links := all(r.doc, "#archive-list .archive-subject a")
	if len(links) != 2 || attr(links[0], "href") != base+"/"+w.utrs[1] || attr(links[1], "href") != base+"/"+w.utrs[0] {
		t.Fatalf("list links: %v", attrs(links, "href"))
	}
	if got := text(links[1]); got != `Tom & Jerry's "news" <1>` {
		t.Fatalf("subject shown as %q", got)
	}
	if got := text(links[0]); strings.Contains(got, "((") || strings.Contains(got, "Name0") {
		t.Fatalf("subject placeholder: %q", got)
	}
	if strings.Contains(r.body, w.off) || strings.Contains(r.body, "private.example") {
		t.Fatal("the list shows a send not archived or a recipient")
	}
	if attr(first(r.doc, `link[rel="alternate"]`), "href") != base+"/feed.xml" {
		t.Fatal("no feed link in the head")
	}

	e := c.get(base + "/" + w.utrs[0])
	wantStatus(t, e, http.StatusOK)
	frame := first(e.doc, "iframe#archive-mail")
	if frame == nil || attr(frame, "src") != base+"/"+w.utrs[0]+"/mail" || !strings.Contains(attr(frame, "sandbox"), "allow-popups") || attr(frame, "title") == "" {
		t.Fatalf("mail frame: %+v", frame)
	}
	if attr(first(e.doc, "html"), "lang") != "en" || attr(first(e.doc, "a.archive-back"), "href") != base {
		t.Fatal("entry page: lang or back link")
	}

	m := c.get(base + "/" + w.utrs[0] + "/mail")
	wantStatus(t, m, http.StatusOK)
	csp := m.header.Get("Content-Security-Policy")
	for _, want := range []string{"sandbox", "default-src 'none'", "frame-ancestors 'self'"} {
		if !strings.Contains(csp, want) {
			t.Fatalf("mail CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "allow-scripts") || strings.Contains(csp, "allow-same-origin") {
		t.Fatalf("mail CSP %q lets the mail run or reach the origin", csp)
	}
	if m.header.Get("X-Frame-Options") != "SAMEORIGIN" {
		t.Fatalf("mail X-Frame-Options %q", m.header.Get("X-Frame-Options"))
	}
	for _, bad := range []string{"Name0", "private.example", "/t/o/", "/t/c/", "/u/", "Preferences"} {
		if strings.Contains(m.body, bad) {
			t.Fatalf("the archived mail holds %q: %s", bad, m.body)
		}
	}
	if !strings.Contains(m.body, `href="https://shop.example.com/sale"`) {
		t.Fatalf("links do not point to their targets: %s", m.body)
	}

	for _, path := range []string{"/archive/nope", "/archive/nope/feed.xml", base + "/" + w.off, base + "/" + w.off + "/mail",
		"/archive/" + strconv.FormatInt(w.f.Acct, 10), base + "?page=2", base + "?page=x"} {
		if r := c.get(path); r.status != http.StatusNotFound {
			t.Fatalf("%s: %d", path, r.status)
		}
	}
}

// atom is what RFC 4287 requires of a feed and its entries (section 4.1).
type atomDoc struct {
	XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
	ID      []string `xml:"id"`
	Title   []struct {
		Type string `xml:"type,attr"`
		Text string `xml:",chardata"`
	} `xml:"title"`
	Updated []string `xml:"updated"`
	Author  []struct {
		Name string `xml:"name"`
	} `xml:"author"`
	Links []struct {
		Rel  string `xml:"rel,attr"`
		Type string `xml:"type,attr"`
		Href string `xml:"href,attr"`
	} `xml:"link"`
	Entries []struct {
		ID      []string `xml:"id"`
		Title   []string `xml:"title"`
		Updated []string `xml:"updated"`
		Author  []struct {
			Name string `xml:"name"`
		} `xml:"author"`
		Links []struct {
			Rel  string `xml:"rel,attr"`
			Href string `xml:"href,attr"`
		} `xml:"link"`
		Summary []string `xml:"summary"`
		Content []string `xml:"content"`
	} `xml:"entry"`
}

var rfc3339 = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$`)

func TestArchiveAtomFeed(t *testing.T) {
	t.Parallel()
	w := newArchiveWorld(t)
	c := w.app.client()
	read := func() (atomDoc, string) {
		t.Helper()
		r := c.get("/archive/" + w.pub + "/feed.xml")
		wantStatus(t, r, http.StatusOK)
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/atom+xml") {
			t.Fatalf("content type %q", ct)
		}
		var f atomDoc
		d := xml.NewDecoder(strings.NewReader(r.body))
		d.Strict = true
		if err := d.Decode(&f); err != nil {
			t.Fatalf("feed does not parse: %v\n%s", err, r.body)
		}
		return f, r.body
	}
	f, body := read()
	url := "http://herald.test/archive/" + w.pub
	one := func(what string, n int) {
		t.Helper()
		if n != 1 {
			t.Fatalf("%s: %d elements, RFC 4287 wants exactly one\n%s", what, n, body)
		}
	}
	one("feed id", len(f.ID))
	one("feed title", len(f.Title))
	one("feed updated", len(f.Updated))
	if f.ID[0] != url || f.Title[0].Text != "Shop" || !rfc3339.MatchString(f.Updated[0]) {
		t.Fatalf("feed id %q title %q updated %q", f.ID[0], f.Title[0].Text, f.Updated[0])
	}
	if len(f.Author) == 0 || f.Author[0].Name == "" {
		t.Fatal("no feed author (the entries have none)")
	}
	self := ""
	for _, l := range f.Links {
		if l.Rel == "self" {
			self = l.Href
		}
	}
	if self != url+"/feed.xml" {
		t.Fatalf("self link %q", self)
	}
	if len(f.Entries) != 2 {
		t.Fatalf("%d entries", len(f.Entries))
	}
	for i, e := range f.Entries {
		one("entry id", len(e.ID))
		one("entry title", len(e.Title))
		one("entry updated", len(e.Updated))
		want := w.utrs[len(w.utrs)-1-i] // newest first
		if e.ID[0] != "urn:uuid:"+want || !rfc3339.MatchString(e.Updated[0]) {
			t.Fatalf("entry %d: id %q updated %q", i, e.ID[0], e.Updated[0])
		}
		alt := false
		for _, l := range e.Links {
			alt = alt || (l.Rel == "alternate" && l.Href == url+"/"+want)
		}
		if !alt || len(e.Summary)+len(e.Content) == 0 {
			t.Fatalf("entry %d: alternate link %v, summary or content %d", i, alt, len(e.Summary)+len(e.Content))
		}
		if e.Updated[0] > f.Updated[0] {
			t.Fatalf("entry updated %s after the feed's %s", e.Updated[0], f.Updated[0])
		}
	}
	if f.Entries[1].Title[0] != `Tom & Jerry's "news" <1>` || !strings.Contains(body, "Tom &amp; Jerry") || strings.Contains(body, "<1>") {
		t.Fatalf("title escaping: %q\n%s", f.Entries[1].Title[0], body)
	}
	if strings.Contains(body, "((") || strings.Contains(body, "Name0") || strings.Contains(body, "private.example") {
		t.Fatalf("the feed holds a placeholder or a recipient:\n%s", body)
	}
	// Ids are stable from one read to the next.
	g, _ := read()
	if g.ID[0] != f.ID[0] || g.Entries[0].ID[0] != f.Entries[0].ID[0] || g.Entries[1].ID[0] != f.Entries[1].ID[0] {
		t.Fatal("ids changed between two reads")
	}
}

func TestArchiveInConsole(t *testing.T) {
	t.Parallel()
	w := newArchiveWorld(t)
	c := w.app.client()
	c.login("owner@herald.test", "test-passphrase-9")
	url := "http://herald.test/archive/" + w.pub
	acct := c.get("/account")
	wantStatus(t, acct, http.StatusOK)
	if got := attr(first(acct.doc, "a#archive-url"), "href"); got != url {
		t.Fatalf("account page archive url %q, want %q", got, url)
	}
	list := c.get("/single-sends")
	wantStatus(t, list, http.StatusOK)
	if got := attr(first(list.doc, "a#sends-archive"), "href"); got != url {
		t.Fatalf("sends list archive link %q", got)
	}
	form := c.get("/single-sends/new")
	wantStatus(t, form, http.StatusOK)
	box := first(form.doc, "input#send-archive")
	if box == nil || attr(box, "type") != "checkbox" || attr(box, "name") != "archive" {
		t.Fatal("no archive checkbox on the send form")
	}
	if l := first(form.doc, `label[for="send-archive"]`); l == nil || !strings.Contains(text(l), "Show in the public archive") {
		t.Fatal("the archive checkbox has no label")
	}
}
