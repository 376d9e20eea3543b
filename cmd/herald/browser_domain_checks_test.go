package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"herald/dbtest"
	"herald/dnstest"
	"herald/eventually"
	"herald/service"
)

// TestBrowserDomainChecks: on a sender's page a person presses Check now,
// sees the missing DKIM record with its fix and mail going out unsigned,
// publishes the record, checks again and sees it pass and the domain
// signed; the sign-anyway switch turns in place (htmx).
func TestBrowserDomainChecks(t *testing.T) {
	t.Parallel()
	if findChromium() == "" {
		dbtest.SkipOrFail(t, "chromium not found: install Debian's chromium to run browser tests")
	}
	srv := dnstest.Start(t)
	srv.Add(t, `example.com. MX 10 mx.example.com.`, `_dmarc.example.com. TXT "v=DMARC1; p=quarantine"`)
	dsn := dbtest.DSN(t)
	base := startConsoleServerOn(t, dsn, map[string]string{"HERALD_DNS_SERVER": srv.Addr})
	b := newBrowserSessionOn(t, base)
	var problems consoleProblems
	problems.watch(b)

	b.signUp()
	ctx := context.Background()
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc, err := service.New(db, service.Config{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.Accounts.ByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	s, err := svc.Senders.Create(ctx, u.ID, service.SenderInput{FromName: "News", FromEmail: "news@example.com", ReplyToEmail: "ada@example.com",
		CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "news"})
	if err != nil {
		t.Fatal(err)
	}
	page := base + "/senders/" + strconv.FormatInt(s.ID, 10)

	b.do("open the sender and check now",
		chromedp.Navigate(page),
		b.idle,
		chromedp.WaitVisible(chromedp.CSS("#sender-checks button[data-check-now]")),
		chromedp.Click(chromedp.CSS("#sender-checks button[data-check-now]")),
		chromedp.WaitVisible(chromedp.CSS(`#sender-checks [data-check="DKIM"][data-status="fail"]`)),
		b.idle,
	)
	if fix := b.text("DKIM fix", `[data-check="DKIM"] [data-fix]`); !strings.Contains(fix, "Publish this TXT record at") {
		t.Fatalf("DKIM fix %q", fix)
	}
	if got := b.text("signing", "[data-signing]"); !strings.Contains(got, "goes out unsigned") {
		t.Fatalf("signing before publishing: %q", got)
	}
	if got := b.text("checked at", "[data-checked-at]"); !strings.Contains(got, "Last checked") {
		t.Fatalf("checked at: %q", got)
	}
	b.capture("sender-checks-failing")
	// On a phone each record's name and value is one line (the DKIM key
	// scrolls sideways and is copied whole), and no record is shown twice.
	b.do("phone", chromedp.EmulateViewport(390, 800))
	lines := b.eval("value lines", `(() => { const c = document.querySelector("#dns-DKIM-value").closest("pre"); const lh = parseFloat(getComputedStyle(c).lineHeight) || 16;
		return String(Math.round((c.clientHeight - parseFloat(getComputedStyle(c).paddingTop) - parseFloat(getComputedStyle(c).paddingBottom)) / lh)); })()`)
	height := b.eval("page height", `String(document.documentElement.scrollHeight)`)
	t.Logf("sender page at 390 px: %s px tall, the DKIM value %s line(s)", height, lines)
	if lines != "1" {
		t.Errorf("the DKIM value takes %s lines at 390 px, want 1", lines)
	}
	if h, _ := strconv.Atoi(height); h > 4500 {
		t.Errorf("the sender page is %d px tall at 390 px", h)
	}
	b.do("desktop", chromedp.EmulateViewport(1280, 900))

	key, err := svc.Mail.DomainKey(ctx, u.ID, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	name, value := key.DNSRecord()
	srv.TXT(t, name, value)
	b.do("check again after publishing",
		chromedp.Click(chromedp.CSS("#sender-checks button[data-check-now]")),
		chromedp.WaitVisible(chromedp.CSS(`#sender-checks [data-check="DKIM"][data-status="pass"]`)),
		b.idle,
	)
	if got := b.text("signing", "[data-signing]"); !strings.Contains(got, key.Selector) {
		t.Fatalf("signing after publishing: %q", got)
	}
	b.do("sign anyway",
		chromedp.Click(chromedp.CSS(`button[data-sign-anyway="off"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[data-sign-anyway="on"]`)),
		b.idle,
	)
	eventually.NoError(t, 5*time.Second, func() error {
		rep, err := svc.DomainChecks.Report(ctx, u.ID, "example.com")
		if err != nil {
			t.Fatal(err)
		}
		if rep.SignAnyway {
			return nil
		}
		return errors.New("sign anyway not stored")
	})
	if msgs := problems.take(); len(msgs) > 0 {
		t.Fatalf("the browser logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
