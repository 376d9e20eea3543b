package service_test

import (
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/service/servicetest"
	"herald/smtptest"
)

func recipients(ms []smtptest.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.To)
	}
	sort.Strings(out)
	return out
}

func TestSendDeliversExactlyToTheAudience(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	if _, err := f.Svc.Fields.Create(f.Ctx, f.Acct, service.FieldInput{FieldName: "code", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	var a []string
	for i := range 30 {
		a = append(a, fmt.Sprintf("a%02d@example.com", i))
	}
	typeA := f.ContactType("Customers", a...)
	// B overlaps A on three addresses (one message each) and adds two.
	typeB := f.ContactType("Leads", "a00@example.com", "A01@Example.com", "a02@example.com", "b1@example.com", "b2@example.com")
	// C is excluded: two of A.
	typeC := f.ContactType("Staff", "a03@example.com", "a04@example.com")
	// A segment of A (first_name Name5) excluded too, and one address added to it by hand.
	seg, err := f.Svc.Segments.Create(f.Ctx, f.Acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(typeA, 10), SegmentName: "Fives",
		SelectField: []string{"first_name"}, SelectOperator: []string{"equals"}, Value: []string{"Name5"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Segments.AddEmail(f.Ctx, f.Acct, service.SegmentEmailInput{SegmentID: strconv.FormatInt(seg.ID, 10), FirstName: "Bea", LastName: "Hand", Email: "b1@example.com"}); err != nil {
		t.Fatal(err)
	}
	// Global unsubscriber, group recipient and a suppressed address.
	if _, err := f.Svc.Unsubscribers.Add(f.Ctx, f.Acct, "a06@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Groups.AddRecipients(f.Ctx, f.Acct, service.RecipientsInput{GroupID: strconv.FormatInt(f.Group, 10), EmailAddress: "a07@example.com"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.DB.W.Create(&models.Suppression{UserID: f.Acct, Email: "a08@example.com", Reason: "550", CreatedAt: models.NewTimestamp(models.Now())}).Error; err != nil {
		t.Fatal(err)
	}
	// The contact of A with a custom value.
	var c models.Contact
	f.Svc.DB.R.Where("email = ? AND contact_type_id = ?", "a09@example.com", typeA).First(&c)
	if _, err := f.Svc.Contacts.Update(f.Ctx, f.Acct, service.ContactInput{ContactID: strconv.FormatInt(c.ID, 10), ContactTypeID: strconv.FormatInt(typeA, 10),
		Email: "a09@example.com", FirstName: "Zoé", Country: "250", Custom: map[string]string{"code": "X<9>"}}); err != nil {
		t.Fatal(err)
	}

	in := f.Input("Spring sale", []string{"contacts_" + strconv.FormatInt(typeA, 10), "contacts_" + strconv.FormatInt(typeB, 10)},
		[]string{"contacts_" + strconv.FormatInt(typeC, 10), "segments_" + strconv.FormatInt(seg.ID, 10)})
	if n, err := f.Svc.SingleSends.AudienceCount(f.Ctx, f.Acct, in.RecipientID, in.ExcludeRecipientID, f.Group); err != nil || n != 25 {
		t.Fatalf("audience count = %d, %v; want 25", n, err)
	}
	ss := f.Create(in)
	if ss.Status != models.SendInitiate {
		t.Fatalf("status after create = %d, want 0", ss.Status)
	}
	done := f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)

	var want []string
	skip := map[string]bool{"a03@example.com": true, "a04@example.com": true, "a05@example.com": true, "b1@example.com": true,
		"a06@example.com": true, "a07@example.com": true, "a08@example.com": true}
	for _, e := range append(a, "b2@example.com", "b1@example.com") {
		if !skip[e] {
			want = append(want, e)
		}
	}
	sort.Strings(want)
	msgs := f.Sent(ss.Utr)
	if got := recipients(msgs); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("recipients:\n got %v\nwant %v", got, want)
	}
	if done.Triggered != int64(len(want)) || done.Delivered != int64(len(want)) || done.Bounces != 0 || done.SentAt.IsZero() {
		t.Fatalf("counters: triggered %d delivered %d bounces %d sent_at %v; want %d", done.Triggered, done.Delivered, done.Bounces, done.SentAt, len(want))
	}

	ids := map[string]bool{}
	for _, m := range msgs {
		h := m.Header()
		if ids[h.Get("Message-Id")] {
			t.Fatalf("Message-ID %s twice", h.Get("Message-Id"))
		}
		ids[h.Get("Message-Id")] = true
		from, _ := mail.ParseAddress(h.Get("From"))
		if from == nil || from.Address != "news@shop.example.com" || from.Name != "Shop" || h.Get("Reply-To") != "<help@shop.example.com>" {
			t.Fatalf("From %q Reply-To %q", h.Get("From"), h.Get("Reply-To"))
		}
		lu := h.Get("List-Unsubscribe")
		if !strings.HasPrefix(lu, "<http://herald.test/u/") || !strings.Contains(lu, ">, <mailto:bounces+u") ||
			!strings.HasSuffix(lu, "@herald.test?subject=unsubscribe>") || h.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
			t.Fatalf("List-Unsubscribe %q / %q", lu, h.Get("List-Unsubscribe-Post"))
		}
		// VERP (decisions.md 7): the return path and the Message-ID name the
		// message's ledger row.
		if !strings.HasPrefix(m.From, "bounces+b") || !strings.HasSuffix(m.From, "@herald.test") ||
			!strings.HasPrefix(h.Get("Message-Id"), "<b") || !strings.HasSuffix(h.Get("Message-Id"), "@shop.example.com>") {
			t.Fatalf("envelope sender %q, Message-ID %q", m.From, h.Get("Message-Id"))
		}
		subject, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
		htmlPart, textPart := parts(t, m.Data)
		if m.To == "a09@example.com" {
			if subject != "Hi Zoé" || !strings.Contains(htmlPart, "Your code: X&lt;9&gt;") || !strings.Contains(textPart, "Your code: X<9>") {
				t.Fatalf("placeholders of a09: subject %q\n%s\n%s", subject, htmlPart, textPart)
			}
		}
		if m.To == "a10@example.com" && (subject != "Hi Name10" || !strings.Contains(htmlPart, "Hello Name10 Last!")) {
			t.Fatalf("placeholders of a10: %q %s", subject, htmlPart)
		}
		if !strings.Contains(htmlPart, "Shop, 1 rue de Rivoli, France") || !strings.Contains(htmlPart, "News for") {
			t.Fatalf("sender placeholders or preheader missing: %s", htmlPart)
		}
		// Links go through the redirect, once per distinct link; mailto stays.
		if strings.Count(htmlPart, "http://herald.test/t/c/") != 2 || !strings.Contains(htmlPart, "/t/c/") || !strings.Contains(htmlPart, `href="mailto:x@y.z"`) ||
			strings.Contains(htmlPart, `href="https://shop.example.com/sale"`) || !strings.Contains(htmlPart, "http://herald.test/t/o/") ||
			!strings.Contains(htmlPart, `href="http://herald.test/u/`) {
			t.Fatalf("tracking: %s", htmlPart)
		}
	}
}

// parts returns the decoded HTML and text parts of a message.
func parts(t *testing.T, data []byte) (htmlPart, textPart string) {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p) // multipart decodes quoted-printable
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			htmlPart = string(b)
		} else {
			textPart = string(b)
		}
	}
}

func tokenOf(t *testing.T, m smtptest.Message) string {
	t.Helper()
	lu, _, _ := strings.Cut(m.Header().Get("List-Unsubscribe"), ",") // the https link comes first
	lu = strings.Trim(lu, "<>")
	u, err := url.Parse(lu)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/u/")
}

func TestOneClickUnsubscribeSkipsTheAddressInTheNextSend(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com", "cy@example.com")
	to := []string{"contacts_" + strconv.FormatInt(typeA, 10)}
	first := f.Create(f.Input("First", to, nil))
	f.WaitStatus(first.Utr, models.SendCompleted, 20*time.Second)
	var bob smtptest.Message
	for _, m := range f.Sent(first.Utr) {
		if m.To == "bob@example.com" {
			bob = m
		}
	}
	tok := tokenOf(t, bob)
	if err := f.Svc.Tracking.OneClick(f.Ctx, tok); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Tracking.OneClick(f.Ctx, tok); err != nil { // twice: counted once
		t.Fatal(err)
	}
	if err := f.Svc.Tracking.OneClick(f.Ctx, tok[:len(tok)-2]+"xx"); !service.IsNotFound(err) {
		t.Fatalf("forged token: %v", err)
	}
	got, _ := f.Svc.SingleSends.Get(f.Ctx, f.Acct, first.Utr)
	if got.Unsubscribes != 1 {
		t.Fatalf("unsubscribes = %d, want 1", got.Unsubscribes)
	}
	second := f.Create(f.Input("Second", to, nil))
	done := f.WaitStatus(second.Utr, models.SendCompleted, 20*time.Second)
	if r := recipients(f.Sent(second.Utr)); strings.Join(r, ",") != "ann@example.com,cy@example.com" || done.Triggered != 2 {
		t.Fatalf("second send went to %v (triggered %d)", r, done.Triggered)
	}
}

// TestPermanentFailureBouncesOnceAndSuppresses: the relay's "550 5.1.1
// User unknown" at RCPT is a hard bounce: counted once, the address
// suppressed with the verdict's reason, status and the relay's words,
// source smtp, and a feedback row the console lists. A bare "550" with
// nothing that says the mailbox is gone is a soft bounce: counted as a
// bounce of the message, logged, never suppressed.
func TestPermanentFailureBouncesOnceAndSuppresses(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	f.SMTP.Refuse(smtptest.AtRcpt, "bad@example.com", 550, "5.1.1", "User unknown")
	f.SMTP.Always("vague@example.com", 550)
	typeA := f.ContactType("Customers", "ann@example.com", "bad@example.com", "cy@example.com", "vague@example.com")
	to := []string{"contacts_" + strconv.FormatInt(typeA, 10)}
	ss := f.Create(f.Input("First", to, nil))
	done := f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	if done.Bounces != 2 || done.Delivered != 2 || done.Triggered != 4 {
		t.Fatalf("triggered %d delivered %d bounces %d", done.Triggered, done.Delivered, done.Bounces)
	}
	var sup []*models.Suppression
	_ = f.Svc.Suppressions.Each(f.Ctx, f.Acct, service.ListFilter{}, func(s *models.Suppression) error { sup = append(sup, s); return nil })
	if len(sup) != 1 || sup[0].Email != "bad@example.com" || sup[0].ReasonCode != "userunknown" || sup[0].StatusCode != "5.1.1" ||
		sup[0].Source != service.SourceSMTP || sup[0].Diagnostic != "550 User unknown" || sup[0].Reason != "userunknown: 5.1.1 550 User unknown (smtp)" {
		t.Fatalf("suppressions: %+v", sup)
	}
	var logged []models.Feedback
	if err := f.Svc.DB.R.Where("user_id = ?", f.Acct).Order("email").Find(&logged).Error; err != nil {
		t.Fatal(err)
	}
	if len(logged) != 2 || logged[0].Email != "bad@example.com" || logged[0].Kind != service.FeedbackHardBounce || logged[0].ReasonCode != "userunknown" ||
		logged[1].Email != "vague@example.com" || logged[1].Kind != service.FeedbackSoftBounce || logged[1].ReasonCode != "onhold" || logged[1].Source != service.SourceSMTP {
		t.Fatalf("feedback rows: %+v", logged)
	}
	// The vague address stays in; lift the suppressed one further down.
	typeB := f.ContactType("Only the vague one", "vague@example.com")
	if d := f.WaitStatus(f.Create(f.Input("Vague again", []string{"contacts_" + strconv.FormatInt(typeB, 10)}, nil)).Utr, models.SendCompleted, 20*time.Second); d.Triggered != 1 {
		t.Fatalf("the soft-bounced address was left out: triggered %d", d.Triggered)
	}
	// A later send leaves the suppressed one out (the vague one bounces
	// again); lifted, it is in again.
	second := f.Create(f.Input("Second", to, nil))
	if d := f.WaitStatus(second.Utr, models.SendCompleted, 20*time.Second); d.Triggered != 3 || d.Bounces != 1 {
		t.Fatalf("second: triggered %d bounces %d", d.Triggered, d.Bounces)
	}
	if err := f.Svc.Suppressions.Lift(f.Ctx, f.Acct, sup[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Suppressions.Lift(f.Ctx, f.Acct+1, sup[0].ID); !service.IsNotFound(err) {
		t.Fatalf("lift of another account: %v", err)
	}
	// The vague address's third soft bounce within 30 days reached the
	// soft-bounce limit (3): suppressed now, for that reason.
	var vague models.Suppression
	if err := f.Svc.DB.R.Where("user_id = ? AND email = ?", f.Acct, "vague@example.com").First(&vague).Error; err != nil ||
		!strings.HasPrefix(vague.Reason, "3 soft bounces within 30 days") || vague.ReasonCode != "onhold" {
		t.Fatalf("the soft-bounce limit: %+v (%v)", vague, err)
	}
	third := f.Create(f.Input("Third", to, nil))
	if d := f.WaitStatus(third.Utr, models.SendCompleted, 20*time.Second); d.Triggered != 3 {
		t.Fatalf("third: triggered %d", d.Triggered)
	}
}

func TestTemporaryFailureIsRetriedAndDeliveredOnce(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	f.SMTP.Fail("slow@example.com", 451, 421)
	typeA := f.ContactType("Customers", "ann@example.com", "slow@example.com")
	ss := f.Create(f.Input("First", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	// Retries wait for the injected clock: move it past each backoff.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := f.Svc.SingleSends.Get(f.Ctx, f.Acct, ss.Utr)
		if got.Status == models.SendCompleted {
			if got.Delivered != 2 || got.Bounces != 0 {
				t.Fatalf("delivered %d bounces %d", got.Delivered, got.Bounces)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not completed: %+v", got)
		}
		f.Advance(50 * time.Millisecond)
		f.Sending.Wake()
		time.Sleep(20 * time.Millisecond)
	}
	if n := f.SMTP.PerRecipient()["slow@example.com"]; n != 1 {
		t.Fatalf("slow@example.com got %d messages, want 1", n)
	}
}

// TestRetryWindowEndsInABounce: a temporary failure still failing at the
// end of the retry window counts as a bounce (decisions.md 5), a soft
// one: a temporary answer never says the mailbox is gone, so the address
// is not suppressed.
func TestRetryWindowEndsInABounce(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	f.SMTP.Always("down@example.com", 451)
	typeA := f.ContactType("Customers", "down@example.com")
	ss := f.Create(f.Input("First", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := f.Svc.SingleSends.Get(f.Ctx, f.Acct, ss.Utr)
		if got.Status == models.SendCompleted {
			if got.Bounces != 1 || got.Delivered != 0 {
				t.Fatalf("delivered %d bounces %d", got.Delivered, got.Bounces)
			}
			if n, err := f.Svc.Suppressions.Count(f.Ctx, f.Acct); err != nil || n != 0 {
				t.Fatalf("suppressed %d (%v): an expired retry suppresses nothing", n, err)
			}
			var row models.Feedback
			if err := f.Svc.DB.R.Where("user_id = ? AND email = ?", f.Acct, "down@example.com").First(&row).Error; err != nil ||
				row.Kind != service.FeedbackSoftBounce || row.Source != service.SourceSMTP || !strings.HasPrefix(row.Diagnostic, "451") {
				t.Fatalf("feedback row %+v (%v)", row, err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not completed: %+v", got)
		}
		f.Advance(10 * time.Minute) // the window is an hour
		f.Sending.Wake()
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOpensAndClicksAreCounted(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com")
	ss := f.Create(f.Input("First", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	msgs := f.Sent(ss.Utr)
	var wg sync.WaitGroup
	for _, m := range msgs {
		tok := tokenOf(t, m)
		for range 5 { // concurrent replays within a minute: one counts
			wg.Add(2)
			go func() { defer wg.Done(); _ = f.Svc.Tracking.Open(f.Ctx, tok) }()
			go func() {
				defer wg.Done()
				to, err := f.Svc.Tracking.Click(f.Ctx, tok, 0)
				if err != nil || to != "https://shop.example.com/sale" {
					t.Errorf("click: %q %v", to, err)
				}
			}()
		}
	}
	wg.Wait()
	tok := tokenOf(t, msgs[0])
	if _, err := f.Svc.Tracking.Click(f.Ctx, tok, 1); !service.IsNotFound(err) {
		t.Fatalf("a link that was not in the message: %v", err)
	}
	// Opens and clicks of one message count once a minute per kind in the
	// totals (decisions.md 8; before, every replay counted).
	counts := func(stage string, opens, uniqueOpens, clicks, uniqueClicks int64) *models.SingleSend {
		t.Helper()
		got, _ := f.Svc.SingleSends.Get(f.Ctx, f.Acct, ss.Utr)
		if got.TotalOpens != opens || got.UniqueOpens != uniqueOpens || got.TotalClicks != clicks || got.UniqueClicks != uniqueClicks {
			t.Fatalf("%s: opens %d/%d clicks %d/%d, want %d/%d %d/%d", stage, got.TotalOpens, got.UniqueOpens, got.TotalClicks, got.UniqueClicks,
				opens, uniqueOpens, clicks, uniqueClicks)
		}
		return got
	}
	got := counts("five replays of each", 2, 2, 2, 2)
	buckets, links, err := f.Svc.SingleSends.Activity(f.Ctx, got)
	if err != nil || len(links) != 1 || links[0].Clicks != 2 || len(buckets) == 0 {
		t.Fatalf("activity: %v %+v %v", buckets, links, err)
	}
	var opens int64
	for _, b := range buckets {
		opens += b.Opens
	}
	if opens != 2 {
		t.Fatalf("opens in buckets = %d", opens)
	}
	f.Advance(59 * time.Second)
	_ = f.Svc.Tracking.Open(f.Ctx, tok)
	_, _ = f.Svc.Tracking.Click(f.Ctx, tok, 0)
	counts("59 s later", 2, 2, 2, 2)
	f.Advance(2 * time.Second)
	_ = f.Svc.Tracking.Open(f.Ctx, tok)
	_ = f.Svc.Tracking.Open(f.Ctx, tok)
	_, _ = f.Svc.Tracking.Click(f.Ctx, tok, 0)
	counts("a minute later", 3, 2, 3, 2)
	// Preferences: leave the group, then everything; join again.
	p, err := f.Svc.Tracking.Preferences(f.Ctx, tok)
	if err != nil || len(p.Groups) != 1 || p.Groups[0].Unsubscribed || p.All {
		t.Fatalf("preferences: %+v %v", p, err)
	}
	if err := f.Svc.Tracking.SavePreferences(f.Ctx, tok, []int64{f.Group}, true); err != nil {
		t.Fatal(err)
	}
	if p, _ = f.Svc.Tracking.Preferences(f.Ctx, tok); !p.Groups[0].Unsubscribed || !p.All {
		t.Fatalf("after leaving: %+v", p)
	}
	if err := f.Svc.Tracking.SavePreferences(f.Ctx, tok, nil, false); err != nil {
		t.Fatal(err)
	}
	if p, _ = f.Svc.Tracking.Preferences(f.Ctx, tok); p.Groups[0].Unsubscribed || p.All {
		t.Fatalf("after joining again: %+v", p)
	}
	subject, html, err := f.Svc.Tracking.View(f.Ctx, tok)
	if err != nil || !strings.HasPrefix(subject, "Hi Name") || !strings.Contains(html, "Hello Name") {
		t.Fatalf("view: %q %v", subject, err)
	}
}

func TestScheduledSendFiresAtItsTimeInTheAccountTimeZone(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	if err := f.Svc.Accounts.SetTimeZone(f.Ctx, f.Acct, "Asia/Tokyo"); err != nil {
		t.Fatal(err)
	}
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	f.Set(time.Date(2030, 5, 1, 8, 0, 0, 0, tokyo)) // 08:00 in Tokyo
	typeA := f.ContactType("Customers", "ann@example.com")
	in := f.Input("Later", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.ScheduleType, in.ScheduleDate, in.ScheduleTime = "1", "2030-05-01", "09:30"
	ss := f.Create(in)
	if ss.Status != models.SendReady || ss.ScheduleTime != "09:30:00" || ss.ScheduleDate != "2030-05-01" {
		t.Fatalf("scheduled send: status %d %s %s", ss.Status, ss.ScheduleDate, ss.ScheduleTime)
	}
	// In the past (07:00 Tokyo) it is refused.
	in.ScheduleTime = "07:00"
	if _, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, in); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("a time in the past: %v", err)
	}
	tick := func() {
		if err := f.Sending.Tick(f.Ctx); err != nil {
			t.Fatal(err)
		}
	}
	tick()
	f.Advance(89 * time.Minute) // 09:29
	tick()
	if got, _ := f.Svc.SingleSends.Get(f.Ctx, f.Acct, ss.Utr); got.Status != models.SendReady {
		t.Fatalf("fired early: status %d", got.Status)
	}
	f.Advance(2 * time.Minute) // 09:31: the process "was down" at 09:30; it fires once now
	tick()
	tick()
	got, _ := f.Svc.SingleSends.Get(f.Ctx, f.Acct, ss.Utr)
	if got.Status != models.SendRunning {
		t.Fatalf("status %d after its time, want 2", got.Status)
	}
	// The engine (started now) sends it; the scheduler completes it.
	ctx, cancel := context.WithCancel(f.Ctx)
	done := make(chan struct{})
	go func() { defer close(done); f.Sending.Run(ctx) }()
	f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	cancel()
	<-done
	if n := f.SMTP.PerRecipient()["ann@example.com"]; n != 1 {
		t.Fatalf("ann got %d", n)
	}
}

func TestDeletingARunningSendStopsIt(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	var emails []string
	for i := range 300 {
		emails = append(emails, fmt.Sprintf("r%03d@example.com", i))
	}
	typeA := f.ContactType("Customers", emails...)
	if _, err := f.Svc.Notifications.Save(f.Ctx, f.Acct, service.NotificationInput{EmailAddress: "boss@example.com", EmailOwner: "Boss"}); err != nil {
		t.Fatal(err)
	}
	ss := f.Create(f.Input("Big", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	slow, err := f.Svc.NewSending(f.Ctx, service.SendingConfig{Conns: 2, Rate: 50, Tick: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.Ctx)
	done := make(chan struct{})
	go func() { defer close(done); slow.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if !f.SMTP.WaitCount(1+20, 20*time.Second) {
		t.Fatal("the send did not start")
	}
	if err := f.Svc.SingleSends.Delete(f.Ctx, f.Acct, ss.Utr); err != nil {
		t.Fatal(err)
	}
	at := f.SMTP.Count()
	time.Sleep(500 * time.Millisecond)
	if after := f.SMTP.Count(); after > at+4 { // at most what was on the wire
		t.Fatalf("still sending after delete: %d then %d", at, after)
	}
	if f.SMTP.Count() > 1+150 {
		t.Fatalf("rate limit of 50/s not applied: %d messages", f.SMTP.Count())
	}
	// Its queued messages are gone (the sent ones stay for their links),
	// and no summary of it was mailed.
	var queued int64
	if err := f.Svc.DB.R.Model(&models.SendMessage{}).Where("send_id = ? AND state = ?", ss.ID, models.MessageQueued).Count(&queued).Error; err != nil || queued != 0 {
		t.Fatalf("queued messages left: %d %v", queued, err)
	}
	if n := f.SMTP.PerRecipient()["boss@example.com"]; n != 0 {
		t.Fatalf("a summary of the deleted send was mailed (%d)", n)
	}
}

func TestSendTestMailsOneAddress(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	in := f.Input("", nil, nil)
	if err := f.Svc.SingleSends.SendTest(f.Ctx, f.Acct, in, "not-an-address", f.Svc.Mail); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("bad address: %v", err)
	}
	in.Subject = ""
	if err := f.Svc.SingleSends.SendTest(f.Ctx, f.Acct, in, "me@example.com", f.Svc.Mail); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("no subject: %v", err)
	}
	in.Subject = "Hi ((first_name))"
	before := f.SMTP.Count()
	if err := f.Svc.SingleSends.SendTest(f.Ctx, f.Acct, in, "Me@Example.com", f.Svc.Mail); err != nil {
		t.Fatal(err)
	}
	if !f.SMTP.WaitCount(before+1, 5*time.Second) {
		t.Fatal("no test message")
	}
	m := f.SMTP.Messages()[before]
	subject, _ := new(mime.WordDecoder).DecodeHeader(m.Header().Get("Subject"))
	if m.To != "me@example.com" || !strings.HasPrefix(subject, "[Test] Hi ") {
		t.Fatalf("test message to %s: %q", m.To, subject)
	}
}

func TestAudienceCountIgnoresAnotherAccountsLists(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	if _, err := f.Svc.Groups.AddRecipients(f.Ctx, f.Acct, service.RecipientsInput{GroupID: strconv.FormatInt(f.Group, 10), EmailAddress: "x@example.com"}); err != nil {
		t.Fatal(err)
	}
	other := servicetest.NewAccount(t, f.Svc, "other@herald.test")
	ct, err := f.Svc.ContactTypes.Create(f.Ctx, other, "Theirs")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"x@example.com", "y@example.com"} {
		if _, err := f.Svc.Contacts.Create(f.Ctx, other, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), FirstName: "A", LastName: "B", Email: e, Country: "250"}); err != nil {
			t.Fatal(err)
		}
	}
	// The other account names this account's group: its recipients must not count.
	n, err := f.Svc.SingleSends.AudienceCount(f.Ctx, other, []string{"contacts_" + strconv.FormatInt(ct.ID, 10)}, nil, f.Group)
	if err != nil || n != 2 {
		t.Fatalf("count = %d, %v; want 2", n, err)
	}
}
