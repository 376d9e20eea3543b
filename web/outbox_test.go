package web_test

import (
	"context"
	"net/http"
	"net/mail"
	"slices"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/web"
)

// storeMail builds a real message and keeps it in acct's outbox, as the
// outbox transport does.
func storeMail(t *testing.T, svc *service.Service, acct int64, to, subject, html string) {
	t.Helper()
	raw, err := delivery.Build(&delivery.Message{
		From: mail.Address{Name: "Ada at Example", Address: "news@example.com"}, To: mail.Address{Address: to},
		Subject: subject, HTML: html, ListUnsubscribeURL: "https://example.com/u/1", OneClick: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Outbox.SaveOutbox(service.WithAccount(context.Background(), acct), "news@example.com", []string{to}, raw); err != nil {
		t.Fatal(err)
	}
}

func TestOutbox(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")

	r := c.get("/outbox")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#outbox-list .empty") == nil || !strings.Contains(text(first(r.doc, ".outbox-intro")), "HERALD_SMTP_URL") {
		t.Fatalf("empty outbox:\n%.3000s", r.body)
	}
	if first(r.doc, `a.nav-link.is-active[href="/outbox"]`) == nil {
		t.Fatal("the outbox is not the current nav entry")
	}

	html := `<!doctype html><html><body><p style="color:#c00">Grüße, Ada — price 5 € &amp; more</p>` +
		`<script>alert(1)</script><p>` + strings.Repeat("long line of text ", 20) + `</p></body></html>`
	storeMail(t, a.svc, acct, "grace@example.com", "Héllo Grace", html)
	for i := range 51 {
		storeMail(t, a.svc, acct, "r"+itoa(int64(i))+"@example.org", "Bulk "+itoa(int64(i)), "<p>bulk</p>")
	}

	// Pages of 50; search by recipient or subject.
	r = c.get("/outbox")
	if got := len(all(r.doc, "#outbox-list tbody tr")); got != 50 {
		t.Fatalf("%d rows on the first page", got)
	}
	if first(r.doc, `#outbox-list a[rel="next"]`) == nil {
		t.Fatal("no next page")
	}
	r = c.hxGet("/outbox?q=grace")
	if first(r.doc, "nav.nav") != nil {
		t.Fatal("the search answered a whole page")
	}
	rows := all(r.doc, "#outbox-list tbody tr")
	if len(rows) != 1 || text(first(rows[0], "td.cell-main a")) != "Héllo Grace" {
		t.Fatalf("search found:\n%s", r.body)
	}
	href := attr(first(rows[0], "td.cell-main a"), "href")

	// Open it: headers, text part, the HTML part in a sandboxed frame.
	r = c.get(href)
	wantStatus(t, r, http.StatusOK)
	heads := map[string]string{}
	for _, tr := range all(r.doc, ".headers-table tr") {
		heads[text(first(tr, "th"))] = text(first(tr, "td"))
	}
	if heads["Subject"] != "Héllo Grace" || !strings.Contains(heads["From"], "Ada at Example") || heads["List-Unsubscribe-Post"] != "List-Unsubscribe=One-Click" || heads["Message-ID"] == "" && heads["Message-Id"] == "" {
		t.Fatalf("headers %q", heads)
	}
	if got := text(first(r.doc, "pre#message-text")); !strings.Contains(got, "Grüße, Ada — price 5 € & more") {
		t.Fatalf("text part %q", got)
	}
	frame := first(r.doc, "iframe#message-html")
	if frame == nil {
		t.Fatal("no frame")
	}
	if sb, ok := attrOK(frame, "sandbox"); !ok || strings.Contains(sb, "allow-scripts") || strings.Contains(sb, "allow-same-origin") {
		t.Fatalf("sandbox %q (present %v)", sb, ok)
	}
	if doc := attr(frame, "srcdoc"); !strings.Contains(doc, "Grüße, Ada") || !strings.Contains(doc, `style="color:#c00"`) {
		t.Fatalf("srcdoc %.500q", doc)
	}
	// The mail's markup is an attribute's value, never the page's.
	if first(r.doc, "#main script") != nil || first(r.doc, "p[style]") != nil {
		t.Fatal("the mail's HTML leaked into the page")
	}
	csp := r.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-eval") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("CSP %q", csp)
	}
	if !strings.Contains(text(first(r.doc, "#message-raw")), "MIME-Version: 1.0") {
		t.Fatal("no raw source")
	}
	raw := c.get(href + "/raw")
	wantStatus(t, raw, http.StatusOK)
	if !strings.HasPrefix(raw.header.Get("Content-Type"), "message/rfc822") || !strings.Contains(raw.body, "Subject:") {
		t.Fatalf("raw: %q %.200q", raw.header.Get("Content-Type"), raw.body)
	}

	// Links in the frame open in a tab of their own (herald's pages refuse
	// framing); links in the text part are links.
	if doc := attr(frame, "srcdoc"); !strings.Contains(doc, `<base target="_blank">`) {
		t.Fatalf("frame links stay in the frame: %.300q", doc)
	}
	storeMail(t, a.svc, acct, "link@example.com", "With a link", `<p>See <a href="https://shop.example.com/sale">the sale</a>.</p>`)
	r = c.hxGet("/outbox?q=link%40example.com")
	r = c.get(attr(first(r.doc, "#outbox-list tbody tr td.cell-main a"), "href"))
	if got := attr(first(r.doc, "pre#message-text a"), "href"); got != "https://shop.example.com/sale" {
		t.Fatalf("text part link %q\n%s", got, text(first(r.doc, "pre#message-text")))
	}

	// Another account's outbox is its own: A's message is not found.
	b, bacct := a.account("Bob", "bob@example.com")
	wantStatus(t, b.get(href), http.StatusNotFound)
	wantStatus(t, b.get(href+"/raw"), http.StatusNotFound)
	if first(b.get("/outbox").doc, "#outbox-list tbody tr") != nil {
		t.Fatal("B lists A's mail")
	}
	_ = bacct
}

// TestReadMailShapes opens messages of other shapes than herald's own:
// a lone base64 HTML body, and a multipart/mixed around an alternative.
func TestReadMailShapes(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	msgs := []string{
		"From: a@example.com\r\nTo: b@example.com\r\nSubject: =?utf-8?q?Caf=C3=A9?=\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
			"PHA+Q2Fmw6kgaHRtbWw8L3A+\r\n",
		"From: a@example.com\r\nTo: b@example.com\r\nSubject: Mixed\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=OUT\r\n\r\n" +
			"--OUT\r\nContent-Type: multipart/alternative; boundary=IN\r\n\r\n" +
			"--IN\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nCaf=E9 plain\r\n" +
			"--IN\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>inner html</p>\r\n--IN--\r\n" +
			"--OUT\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=x.txt\r\n\r\nattached\r\n--OUT--\r\n",
	}
	for _, m := range msgs {
		if err := a.svc.Outbox.SaveOutbox(service.WithAccount(context.Background(), acct), "a@example.com", []string{"b@example.com"}, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	var ids []int64
	_ = a.svc.Outbox.Each(context.Background(), acct, service.ListFilter{}, func(m *models.OutboxMessage) error { ids = append(ids, m.ID); return nil })
	slices.Sort(ids) // the outbox lists newest first; these go in the order saved
	r := c.get("/outbox/" + itoa(ids[0]))
	if got := attr(first(r.doc, "iframe"), "srcdoc"); got != `<base target="_blank"><p>Café htmml</p>` {
		t.Fatalf("base64 html %q", got)
	}
	if got := text(first(r.doc, "h1")); got != "Café" {
		t.Fatalf("title %q", got)
	}
	r = c.get("/outbox/" + itoa(ids[1]))
	if got := text(first(r.doc, "#message-text")); got != "Café plain" {
		t.Fatalf("latin-1 text %q", got)
	}
	if got := attr(first(r.doc, "iframe"), "srcdoc"); !strings.Contains(got, "inner html") {
		t.Fatalf("nested html %q", got)
	}
}

// Viewing a campaign mail in the outbox counts no open and no click: the
// frame holds neither the pixel nor a tracked link.
func TestOutboxViewCountsNothing(t *testing.T) {
	t.Parallel()
	const base = "http://localhost:8080"
	a := newTestAppOn(t, dbtest.Service(t, service.Config{BaseURL: base}), web.Options{BaseURL: base})
	c, acct := a.account("Ada", "ada@example.com")
	now := models.NewTimestamp(models.Now())
	ss := models.SingleSend{UserID: acct, SingleSendName: "Sale", Utr: "sale", CreatedAt: now, UpdatedAt: now, Links: []string{"https://shop.example.com/sale"}}
	if err := a.svc.DB.W.Create(&ss).Error; err != nil {
		t.Fatal(err)
	}
	m := models.SendMessage{SendID: ss.ID, UserID: acct, Email: "ann@example.com", State: models.MessageDelivered, SentAt: &now}
	if err := a.svc.DB.W.Create(&m).Error; err != nil {
		t.Fatal(err)
	}
	tok, err := a.svc.Tracking.Token(context.Background(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	storeMail(t, a.svc, acct, "ann@example.com", "Sale", `<html><body><p><a href="`+base+`/t/c/`+tok+`/0">Shop now</a></p>`+
		`<img src="`+base+`/t/o/`+tok+`.gif" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0"></body></html>`)
	r := c.get("/outbox")
	r = c.get(attr(first(r.doc, "#outbox-list tbody tr td.cell-main a"), "href"))
	wantStatus(t, r, http.StatusOK)
	doc := attr(first(r.doc, "iframe#message-html"), "srcdoc")
	if strings.Contains(doc, "/t/o/") || strings.Contains(doc, "/t/c/") || !strings.Contains(doc, `href="https://shop.example.com/sale"`) {
		t.Fatalf("the frame still tracks: %s", doc)
	}
	if strings.Contains(text(first(r.doc, "pre#message-text")), "/t/c/") {
		t.Fatalf("the text part still tracks: %s", text(first(r.doc, "pre#message-text")))
	}
}
