package main

import (
	"context"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"herald/models"
	"herald/service"
)

// TestBrowserBackgroundExport exports a contact type of 3,000 contacts at
// desktop and phone widths: Export CSV starts a background export and
// leads to the Exports page, whose list (polled by htmx while an export
// runs) shows the download link once the runner of `herald serve` has
// written the file; the file fetched from the link holds every contact.
// An export held by another process shows its real progress bar and
// "12,345 of 100,000 rows". axe-core checks the page at both widths, the
// page is no wider than a phone, and the download link is reached with Tab.
func TestBrowserBackgroundExport(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)

	b.signUp()
	ctx := context.Background()
	svc, db, acct := ownerService(t, dsn, service.Config{BaseURL: base})
	ct, err := svc.ContactTypes.Create(ctx, acct.ID, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	const contacts = 3000
	now := models.NewTimestamp(models.Now())
	if err := db.W.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO contacts (user_id, contact_type_id, first_name, last_name, email, created_at, updated_at)
		SELECT ?, ?, 'First ' || i, '=Last', 'c' || i || '@example.com', ?, ? FROM n`, contacts, acct.ID, ct.ID, now, now).Error; err != nil {
		t.Fatal(err)
	}
	// An export another (live) process is writing: its lease runs for an
	// hour, so this server's runner leaves it alone and the page polls.
	held := models.ExportJob{UserID: acct.ID, Kind: string(service.ExportContactsType), TargetID: ct.ID, Name: "Contacts of the type Customers (other process)",
		FileName: "held.csv", State: service.ExportRunning, RowsDone: 12345, RowsTotal: 100000, Worker: "elsewhere:1",
		LeaseUntil: time.Now().Add(time.Hour).UnixMilli(), Attempts: 1, CreatedAt: time.Now().Add(-time.Minute).UnixMilli()}
	if err := db.W.Create(&held).Error; err != nil {
		t.Fatal(err)
	}
	heldRow := "#export-" + strconv.FormatInt(held.ID, 10)

	for i, width := range []int64{1280, 390} {
		w := strconv.FormatInt(width, 10)
		b.do("open the type's contacts at "+w+" px",
			chromedp.EmulateViewport(width, 800),
			chromedp.Navigate(base+"/contacts?type="+strconv.FormatInt(ct.ID, 10)),
			b.idle,
			chromedp.WaitVisible(chromedp.ID("export-contacts")),
		)
		if got := b.eval("contacts width", `String(document.documentElement.scrollWidth)`); got != w {
			t.Errorf("the contacts page with its Export CSV form is %s px wide at %s px", got, w)
		}
		if i == 0 {
			b.capture("contacts-export-button")
			b.do("back to "+w+" px", chromedp.EmulateViewport(width, 800))
		}
		b.do("export CSV at "+w+" px",
			chromedp.Click(chromedp.ID("export-contacts")),
			chromedp.WaitVisible(chromedp.CSS("#exports tbody tr")),
			b.idle,
		)
		if got := b.eval("address", `location.pathname`); got != "/exports" {
			t.Fatalf("Export CSV led to %q", got)
		}
		if got := b.eval("rows", `String(document.querySelectorAll("#exports tbody tr").length)`); got != strconv.Itoa(i+2) {
			t.Fatalf("%s exports listed, want %d", got, i+2)
		}
		// The held export: a real progress bar, its figures, and the list polls.
		if got := b.eval("progress", `(p => p ? p.value + "/" + p.max : "none")(document.querySelector("`+heldRow+` progress"))`); got != "12345/100000" {
			t.Fatalf("held export's bar: %s", got)
		}
		if got := b.text("rows", heldRow+" .export-rows"); got != "12,345 of 100,000 rows" {
			t.Fatalf("held export's figures: %q", got)
		}
		if got := b.eval("polling", `document.getElementById("exports-list").getAttribute("hx-trigger") || ""`); got != "every 1s" {
			t.Fatalf("the list does not poll while an export runs: %q", got)
		}
		// The new export (first row, newest) gets its link through the polling.
		b.do("wait for the download link at "+w+" px",
			chromedp.WaitVisible(chromedp.CSS(`#exports tbody tr:first-child a.export-download`)),
			b.idle,
		)
		if got := b.text("state", "#exports tbody tr:first-child .badge"); got != "Ready" {
			t.Fatalf("state %q", got)
		}
		if width == 390 {
			if got := b.eval("overflow", `String(document.documentElement.scrollWidth)`); got != "390" {
				t.Errorf("the Exports page is %s px wide on a 390 px screen", got)
			}
			// capture checks axe at the width it finds; check at the phone's too.
			for _, v := range b.axeCheck("exports at 390 px") {
				t.Errorf("accessibility at 390 px: %s", v)
			}
		}
		b.capture("exports-" + w)
		b.do("back to "+w+" px", chromedp.EmulateViewport(width, 800)) // capture ends at desktop width
		ctxDl, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		got, err := chromedp.Run(ctxDl, chromedp.Evaluate[string](
			`fetch(document.querySelector("#exports tbody tr:first-child a.export-download").href, {credentials: "same-origin"}).then(async r => r.headers.get("Content-Disposition") + "\n" + await r.text())`,
			chromedp.EvalAwaitPromise))
		cancel()
		if err != nil {
			t.Fatalf("download: %v", err)
		}
		disposition, body, _ := strings.Cut(got, "\n")
		if want := `attachment; filename="contacts-type-` + strconv.FormatInt(ct.ID, 10) + `.csv"`; disposition != want {
			t.Errorf("Content-Disposition %q, want %q", disposition, want)
		}
		recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
		if err != nil {
			t.Fatalf("the file: %v", err)
		}
		if len(recs) != contacts+1 || recs[0][0] != "email" || recs[1][0] != "c1@example.com" || recs[contacts][0] != "c3000@example.com" || recs[1][2] != "'=Last" {
			t.Fatalf("the file: %d rows, first %v", len(recs), recs[1])
		}
		// Keyboard: Tab from the top of the page reaches the download link.
		b.do("focus the page", chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)`))
		reached := false
		for range 80 {
			b.do("tab", chromedp.KeyEvent(kb.Tab))
			if b.eval("focused", `document.activeElement && document.activeElement.matches("#exports tbody tr:first-child a.export-download") ? "yes" : "no"`) == "yes" {
				reached = true
				break
			}
		}
		if !reached {
			t.Errorf("the download link is not reached with Tab at %s px", w)
		}
		// The held export keeps the list polling: the focus stays on the
		// link across a refresh of the list.
		b.do("wait for a refresh of the list",
			chromedp.Evaluate[chromedp.Void](`document.getElementById("exports-list").dataset.seen = "1"`),
			chromedp.WaitReady(chromedp.CSS(`#exports-list:not([data-seen])`)),
			b.idle,
		)
		if reached && b.eval("focus after refresh", `document.activeElement && document.activeElement.matches("#exports tbody tr:first-child a.export-download") ? "yes" : "no"`) != "yes" {
			t.Errorf("a refresh of the list took the focus off the download link at %s px", w)
		}
	}
	b.do("desktop again", chromedp.EmulateViewport(1280, 900))
	for _, p := range problems.take() {
		t.Errorf("console: %s", p)
	}
}
