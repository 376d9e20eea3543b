package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"herald/models"
	"herald/service"
)

// framesDesign is a design easy to find in a screenshot: a dark blue
// band (framesBlue) with a yellow heading, then text in the same blue.
const framesDesign = `<html><body style="margin:0;background:#ffffff">` +
	`<div style="padding:32px 24px;background:#0b3d91"><h1 style="margin:0;color:#ffd400;font:bold 40px sans-serif">Autumn letter</h1></div>` +
	`<p style="color:#0b3d91;font:18px sans-serif;padding:16px">Hello ((first_name)), our sale starts on Monday.</p>` +
	`<div style="height:240px;background:#0b3d91"></div>` +
	`<p>((sender_address))</p><a href="((unsubscribe_preferences))">Unsubscribe</a></body></html>`

// framesBlue is the colour of framesDesign's band, as RGB.
var framesBlue = [3]uint8{0x0b, 0x3d, 0x91}

// kbFixture is an account with one record of each kind, made through the
// service on the server's database, for the tests that walk every page.
type kbFixture struct {
	db        *service.DB
	svc       *service.Service
	acct      int64
	ct        *models.ContactType
	contact   *models.ContactView
	segment   *models.Segment
	sender    *models.Sender
	group     *models.UnsubscribeGroup
	design    *models.Design
	scheduled *models.SingleSend // scheduled next year, with framesDesign
	completed *models.SingleSend // sent to the fixture's contacts, with framesDesign
	auto      *models.Automation
	email     *models.AutomationSchedule
}

// signUp creates the account Ada Lovelace through the sign-up form.
func (b *browserSession) signUp() {
	b.t.Helper()
	b.do("sign up",
		chromedp.Navigate(b.base+"/signup"),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("signup-name")),
		chromedp.SendKeys(chromedp.ID("signup-name"), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.ID("signup-email"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("signup-password"), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`#signup-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("secret-key")),
	)
}

// ownerService opens the database of a console server (dsn) with a
// service of the test's own and finds the account Ada Lovelace signed up
// in the browser (signUp); the database closes when the test ends.
func ownerService(t *testing.T, dsn string, cfg service.Config) (*service.Service, *service.DB, models.User) {
	t.Helper()
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc := newService(t, db, cfg)
	var acct models.User
	if err := db.R.Where("email = ?", "ada@example.com").First(&acct).Error; err != nil {
		t.Fatal(err)
	}
	return svc, db, acct
}

// seedAccount signs up in the browser and gives the account a contact
// type with three contacts, a segment, a verified sender, a group, a
// design, a scheduled send and a completed one (its mail in the outbox),
// an automation with one email, an invitation and a named API key.
func seedAccount(t *testing.T, b *browserSession, dsn string) *kbFixture {
	t.Helper()
	b.signUp()
	ctx := context.Background()
	svc, db, acct := ownerService(t, dsn, service.Config{BaseURL: b.base, SystemFrom: "no-reply@localhost"})
	f := &kbFixture{db: db, svc: svc, acct: acct.ID}
	var err error
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	f.ct, err = svc.ContactTypes.Create(ctx, f.acct, "Customers")
	must(err)
	for i, e := range []string{"ann@example.com", "bob@example.org", "cy@example.net"} {
		c, err := svc.Contacts.Create(ctx, f.acct, service.ContactInput{ContactTypeID: itoa(f.ct.ID),
			FirstName: "Person" + strconv.Itoa(i), LastName: "Tester", Email: e, Country: "250"})
		must(err)
		if f.contact == nil {
			f.contact = c
		}
	}
	f.segment, err = svc.Segments.Create(ctx, f.acct, service.SegmentInput{ContactTypeID: itoa(f.ct.ID), SegmentName: "Dot org",
		SelectField: []string{"email"}, SelectOperator: []string{"ends_with"}, Value: []string{"example.org"}})
	must(err)
	f.sender, err = svc.Senders.Create(ctx, f.acct, service.SenderInput{FromName: "Ada at Example", FromEmail: "news@example.com",
		ReplyToEmail: "ada@example.com", CountryID: "250", CompanyAddress: "1 Main Street", Nickname: "News"})
	must(err)
	_, err = svc.Senders.Verify(ctx, f.sender.VerifyToken)
	must(err)
	f.group, err = svc.Groups.Create(ctx, f.acct, service.GroupInput{GroupName: "Newsletter", Description: "The monthly letter", IsDisplay: "1"})
	must(err)
	f.design, err = svc.Designs.Create(ctx, f.acct, service.DesignInput{Name: "Autumn letter", TemplateID: "1", TemplateHTML: framesDesign})
	must(err)
	send := func(name, schedule, date string) *models.SingleSend {
		ss, err := svc.SingleSends.Create(ctx, f.acct, service.SingleSendInput{TemplateID: "1", TemplateHTML: framesDesign,
			SenderID: itoa(f.sender.ID), UnsubscribeGroupID: itoa(f.group.ID), SingleSendName: name, Subject: "Autumn news",
			Preheader: "What is new", RecipientID: []string{"contacts_" + itoa(f.ct.ID)}, ScheduleType: schedule,
			ScheduleDate: date, ScheduleTime: "09:30"})
		must(err)
		return ss
	}
	f.scheduled = send("Winter news", "1", strconv.Itoa(time.Now().Year()+1)+"-01-15")
	f.completed = send("Autumn news", "0", "")
	f.auto, err = svc.Automations.Create(ctx, f.acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + itoa(f.ct.ID),
		AutomationName: "Onboarding", UnsubscribeGroupID: itoa(f.group.ID)})
	must(err)
	f.email, err = svc.Automations.AddSchedule(ctx, f.acct, service.ScheduleInput{Utr: f.auto.Utr, SenderID: itoa(f.sender.ID), Subject: "Welcome",
		WaitingPeriod: "0", WaitingType: "instantly", TemplateID: "5", PreviewImg: "05-welcome.png"})
	must(err)
	_, err = svc.Team.Invite(ctx, f.acct, "grace@example.com", service.RoleEditor)
	must(err)
	_, _, err = svc.APIKeys.Create(ctx, f.acct, service.APIKeyInput{Name: "Reports", Scope: "read", Areas: []string{"contacts"}})
	must(err)

	// The completed send's page shows its statistics once the server's
	// engine has mailed the three contacts (into the outbox).
	b.do("the send completes",
		chromedp.Navigate(b.base+"/single-sends/"+f.completed.Utr),
		b.idle,
		chromedp.Poll[chromedp.Void](`(document.getElementById("send-status") || {}).dataset.status === "Completed"`, chromedp.WithPollingInterval(100*time.Millisecond)),
		chromedp.WaitVisible(chromedp.ID("send-statistics")),
		b.idle,
	)
	return f
}

// countNear counts the pixels of img close to the colour c (RGB).
func countNear(img image.Image, c [3]uint8) (n, total int) {
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			total++
			if near(cr>>8, c[0]) && near(cg>>8, c[1]) && near(cb>>8, c[2]) {
				n++
			}
		}
	}
	return n, total
}

func near(c uint32, want uint8) bool {
	d := int(c) - int(want)
	return d > -12 && d < 12
}

// uniform reports whether every pixel of img has one colour (a frame
// nothing was painted in).
func uniform(img image.Image) bool {
	r := img.Bounds()
	if r.Empty() {
		return true
	}
	first := img.At(r.Min.X, r.Min.Y)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if img.At(x, y) != first {
				return false
			}
		}
	}
	return true
}

// showFrame scrolls the i-th iframe of the page into view, as a person
// scrolling to it would, and returns what the viewport shows of its
// content box once the frame has painted. A frame still blank after
// frameWait is returned blank (a design may be blank); nil if the frame
// is not displayed.
//
// Why the wait: a sandboxed frame (no allow-same-origin) has an opaque
// origin, so Chromium treats it as a cross-origin frame and, with site
// isolation, renders it in a process of its own. Cross-origin frames
// outside the viewport are render-throttled: they are loaded but not
// painted until they come into view, and a capture beyond the viewport
// (chromedp.FullScreenshot) does not unthrottle them. That is why the
// previews of a send's page (below the fold) showed blank in full-page
// screenshots while a person scrolling there sees the design.
func (b *browserSession) showFrame(step string, i int) (image.Image, image.Point) {
	b.t.Helper()
	box := b.eval(step, fmt.Sprintf(`(() => {
		const f = document.querySelectorAll("iframe")[%d];
		if (!f || !f.checkVisibility() || f.clientWidth === 0 || f.clientHeight === 0) return "";
		f.scrollIntoView({block: "center"}); // clear of the phone's sticky top bar
		const r = f.getBoundingClientRect();
		const x = Math.max(0, r.left + f.clientLeft), y = Math.max(0, r.top + f.clientTop);
		const w = Math.min(innerWidth, r.left + f.clientLeft + f.clientWidth) - x;
		const h = Math.min(innerHeight, r.top + f.clientTop + f.clientHeight) - y;
		// The clip is in the page's coordinates, not the viewport's.
		return [x + scrollX, y + scrollY, w, h].map(Math.floor).join(",");
	})()`, i))
	if box == "" {
		return nil, image.Point{}
	}
	var x, y, w, h float64
	if _, err := fmt.Sscanf(box, "%g,%g,%g,%g", &x, &y, &w, &h); err != nil {
		b.t.Fatalf("%s: %q: %v", step, box, err)
	}
	clip := &page.Viewport{X: x, Y: y, Width: w, Height: h, Scale: 1}
	var img image.Image
	for deadline := time.Now().Add(frameWait); ; {
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		shot, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Clip: clip, FromSurface: ptrTo(true)})
		cancel()
		if err != nil {
			b.t.Fatalf("%s: %v", step, err)
		}
		if img, err = png.Decode(bytes.NewReader(shot.Data)); err != nil {
			b.t.Fatalf("%s: %v", step, err)
		}
		if !uniform(img) || time.Now().After(deadline) {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	return img, image.Pt(int(x), int(y))
}

// frameWait is how long showFrame waits for a frame scrolled into view
// to paint. The frame renders in a process of its own; on a loaded
// machine under -race a second was not enough (a CI run captured a
// completed send's preview blank at 1280 px), so the bound is generous:
// it only costs time when a frame stays blank.
const frameWait = 15 * time.Second

func ptrTo[T any](v T) *T { return &v }

// fullPageShot is a screenshot of the whole page at the viewport's
// width, with its frames as a person sees them.
//
// chromedp.FullScreenshot alone leaves blank every sandboxed frame that
// lies outside the viewport (see showFrame): Chromium does not paint such
// a frame, and capturing beyond the viewport does not make it paint, even
// when it was painted once and scrolled away. So each displayed frame is
// scrolled into view and captured there (showFrame), and its picture is
// laid over the full-page capture at the frame's place; the page is then
// scrolled back to where it was.
func (b *browserSession) fullPageShot(step string) image.Image {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	cancel()
	if err != nil {
		b.t.Fatalf("%s: full screenshot: %v", step, err)
	}
	src, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
	n, _ := strconv.Atoi(b.eval("count frames", `String(document.querySelectorAll("iframe").length)`))
	if n == 0 {
		return src
	}
	out := image.NewRGBA(src.Bounds())
	draw.Draw(out, out.Bounds(), src, src.Bounds().Min, draw.Src)
	at := b.eval("scroll position", `scrollX + "," + scrollY`)
	for i := range n {
		img, p := b.showFrame(step+": frame", i)
		if img == nil {
			continue
		}
		draw.Draw(out, img.Bounds().Sub(img.Bounds().Min).Add(p), img, img.Bounds().Min, draw.Src)
	}
	b.eval("scroll back", `(() => { const [x, y] = "`+at+`".split(",").map(Number); scrollTo(x, y); return ""; })()`)
	return out
}

// frameIndex is the position of the iframe css among the page's iframes.
func (b *browserSession) frameIndex(css string) int {
	b.t.Helper()
	i, err := strconv.Atoi(b.eval("frame index", fmt.Sprintf(`String([...document.querySelectorAll("iframe")].indexOf(document.querySelector(%q)))`, css)))
	if err != nil || i < 0 {
		b.t.Fatalf("no frame %s", css)
	}
	return i
}

// pageRect is where the element css lies on the whole page, in CSS pixels.
func (b *browserSession) pageRect(step, css string) image.Rectangle {
	b.t.Helper()
	s := b.eval(step, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect();
		return [r.left + scrollX, r.top + scrollY, r.right + scrollX, r.bottom + scrollY].map(Math.round).join(","); })()`, css))
	var x0, y0, x1, y1 int
	if _, err := fmt.Sscanf(s, "%d,%d,%d,%d", &x0, &y0, &x1, &y1); err != nil {
		b.t.Fatalf("%s: %q: %v", step, s, err)
	}
	return image.Rect(x0, y0, x1, y1)
}

// framesYellow is the colour of framesDesign's heading.
var framesYellow = [3]uint8{0xff, 0xd4, 0x00}

// TestBrowserPreviewFrames checks that the design previews of the compose
// form and of a completed send's page (its statistics) show the design to
// a person, at 390 and 1280 px: scrolled into view, the frame holds the
// design's blue band and its yellow heading. The full-page screenshot the
// tests save (fullPageShot) must hold them too; a plain
// chromedp.FullScreenshot leaves a frame outside the viewport blank (see
// showFrame), which the test logs.
func TestBrowserPreviewFrames(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	f := seedAccount(t, b, dsn)

	pages := []struct {
		name, frame string
		open        func()
	}{
		{"compose", "#send-preview-frame", func() {
			b.do("compose with the design",
				chromedp.Navigate(base+"/single-sends/new"),
				b.idle,
				choose("#send-template", "design-"+strconv.FormatInt(f.design.ID, 10)),
				chromedp.WaitVisible(chromedp.ID("send-preview-frame")),
				b.idle,
			)
		}},
		{"compose-saved", "#send-preview-frame", func() {
			b.do("a scheduled send's form", chromedp.Navigate(base+"/single-sends/"+f.scheduled.Utr+"/edit"), b.idle, chromedp.WaitVisible(chromedp.ID("send-preview-frame")))
		}},
		{"statistics", "#send-design-frame", func() {
			b.do("the completed send", chromedp.Navigate(base+"/single-sends/"+f.completed.Utr), b.idle, chromedp.WaitVisible(chromedp.ID("send-statistics")))
		}},
	}
	for _, width := range []int64{390, 1280} {
		for _, p := range pages {
			b.do("viewport", chromedp.EmulateViewport(width, 800))
			p.open()
			// The plain full-page capture, for the record.
			ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
			raw, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			if img, err := png.Decode(bytes.NewReader(raw)); err == nil {
				sub := img.(subImager).SubImage(b.pageRect("frame", p.frame).Intersect(img.Bounds()))
				n, total := countNear(sub, framesBlue)
				t.Logf("%s at %d px, frame at %v: a plain full-page capture shows %d of %d pixels of the design's blue", p.name, width, b.pageRect("frame", p.frame), n, total)
			}

			// The whole page as the tests save it.
			full := b.fullPageShot(p.name)
			sub := full.(subImager).SubImage(b.pageRect(p.name+" frame", p.frame).Intersect(full.Bounds()))
			if n, total := countNear(sub, framesBlue); n < total/10 {
				t.Errorf("%s at %d px: in the full-page screenshot the frame shows %d of %d pixels in the design's blue", p.name, width, n, total)
			}
			if b.shots != "" {
				var buf bytes.Buffer
				if err := png.Encode(&buf, full); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(b.shots, fmt.Sprintf("frame-%s-%d.png", p.name, width)), buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}

			// What a person sees: the frame scrolled into view.
			img, _ := b.showFrame(p.name, b.frameIndex(p.frame))
			if img == nil {
				t.Fatalf("%s at %d px: the frame is not displayed", p.name, width)
			}
			if n, total := countNear(img, framesBlue); n < total/10 {
				t.Errorf("%s at %d px: scrolled into view, the frame shows %d of %d pixels in the design's blue: the design is not drawn", p.name, width, n, total)
			}
			if n, _ := countNear(img, framesYellow); n < 50 {
				t.Errorf("%s at %d px: scrolled into view, the frame shows %d pixels of the heading's yellow", p.name, width, n)
			}
		}
	}
	b.do("desktop", chromedp.EmulateViewport(1280, 900))
}

type subImager interface {
	SubImage(image.Rectangle) image.Image
}
