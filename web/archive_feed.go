package web

import (
	"encoding/xml"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// The archive's Atom feed (RFC 4287): the newest page of the archive.
// encoding/xml writes it, so every text is escaped. Ids are stable: the
// feed's is the archive's address, an entry's the send's utr (a UUID) as
// a urn:uuid.

const atomNS = "http://www.w3.org/2005/Atom"

type atomFeed struct {
	XMLName   xml.Name    `xml:"feed"`
	NS        string      `xml:"xmlns,attr"`
	Lang      string      `xml:"xml:lang,attr"`
	ID        string      `xml:"id"`
	Title     atomText    `xml:"title"`
	Updated   string      `xml:"updated"`
	Author    atomPerson  `xml:"author"`
	Links     []atomLink  `xml:"link"`
	Generator string      `xml:"generator"`
	Entries   []atomEntry `xml:"entry"`
}

type atomText struct {
	Type string `xml:"type,attr"`
	Text string `xml:",chardata"`
}

type atomPerson struct {
	Name string `xml:"name"`
	URI  string `xml:"uri,omitempty"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomEntry struct {
	ID        string   `xml:"id"`
	Title     atomText `xml:"title"`
	Updated   string   `xml:"updated"`
	Published string   `xml:"published"`
	Link      atomLink `xml:"link"`
	Summary   atomText `xml:"summary"`
}

// atomTime is a date in RFC 3339, as RFC 4287 asks.
func atomTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (w *Web) archiveFeed(c *fiber.Ctx) error {
	archiveHeaders(c)
	l, err := w.svc.Archive.List(c.UserContext(), strings.Clone(c.Params("id")), 1)
	if err != nil {
		return archiveMissing(c, err)
	}
	t := archiveText(c)
	updated := l.Created
	if len(l.Entries) > 0 {
		updated = l.Entries[0].SentAt
	}
	f := atomFeed{
		NS: atomNS, Lang: t.Lang, ID: l.URL, Title: atomText{Type: "text", Text: l.Title}, Updated: atomTime(updated),
		Author: atomPerson{Name: l.Title, URI: l.URL},
		Links: []atomLink{
			{Rel: "self", Type: "application/atom+xml", Href: l.URL + "/feed.xml"},
			{Rel: "alternate", Type: "text/html", Href: l.URL},
		},
		Generator: "Herald",
	}
	for _, e := range l.Entries {
		summary := e.Preheader
		if summary == "" {
			summary = e.Subject
		}
		f.Entries = append(f.Entries, atomEntry{
			ID: "urn:uuid:" + e.Utr, Title: atomText{Type: "text", Text: t.OrNoSubject(e.Subject)},
			Updated: atomTime(e.SentAt), Published: atomTime(e.SentAt),
			Link:    atomLink{Rel: "alternate", Type: "text/html", Href: l.URL + "/" + e.Utr},
			Summary: atomText{Type: "text", Text: summary},
		})
	}
	out, err := xml.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/atom+xml; charset=utf-8")
	return c.Send(append([]byte(xml.Header), out...))
}
