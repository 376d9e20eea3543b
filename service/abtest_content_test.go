package service_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// TestABContentVariantRendersItsOwnDesign: an A/B test of content on half
// of 20 contacts. Variant A is the send as it is; variant B keeps the
// subject and has its own design, with a link the send's design lacks.
// Each test message carries its variant's design (HTML and text), the
// same subject; a click on B's own link leads to it; the statistics list
// both variants with B's design. Two identical variants are refused.
func TestABContentVariantRendersItsOwnDesign(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	var emails []string
	for i := range 20 {
		emails = append(emails, "v"+strconv.Itoa(i)+"@example.com")
	}
	typeA := f.ContactType("Customers", emails...)
	in := f.Input("Content", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.TemplateHTML = `<html><body><p>Design A for ((first_name))</p><a href="https://shop.example.com/a">Shop</a>` +
		`<p>((sender_name)), ((sender_address))</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`
	designB := `<html><body><h1>Design B for ((first_name))</h1><a href="https://shop.example.com/b">See the new range</a>` +
		`<p>((sender_name)), ((sender_address))</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`

	same := in
	same.AB = &service.ABTestInput{On: true, Subjects: []string{"", "", ""}, Designs: []string{"", designB, designB}, Share: "50", Metric: service.ABClicks, Wait: "30"}
	if _, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, same); !hasField(err, "ab_subjects") {
		t.Fatalf("two identical variants: %v", err)
	}

	in.AB = &service.ABTestInput{On: true, Subjects: []string{"", ""}, Designs: []string{"", designB}, Share: "50", Metric: service.ABClicks, Wait: "30"}
	ss, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss.ABSubjects) != 2 || ss.ABSubjects[0] != in.Subject || ss.ABSubjects[1] != in.Subject || len(ss.ABDesigns) != 2 || ss.ABDesigns[1] != designB {
		t.Fatalf("saved variants %q designs %d", ss.ABSubjects, len(ss.ABDesigns))
	}
	variant := map[string]int{}
	eventually.NoError(t, 20*time.Second, func() error {
		var rows []struct {
			Email   string
			Variant int
		}
		if err := f.Svc.DB.R.Raw("SELECT email, variant FROM send_messages WHERE send_id = ? AND variant > 0", ss.ID).Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			variant[r.Email] = r.Variant
		}
		if n := len(f.Sent(ss.Utr)); n == 0 || n != len(rows) {
			return fmt.Errorf("test share: %d rows, %d sent", len(rows), n)
		}
		return nil
	})
	seen := map[int]int{}
	clickedB := false
	for _, m := range f.Sent(ss.Utr) {
		v := variant[m.To]
		seen[v]++
		html := htmlPart(t, m)
		first := "Name" + strconv.Itoa(indexOf(emails, m.To))
		want, not := "Design A for "+first, "Design B"
		if v == 2 {
			want, not = "Design B for "+first, "Design A"
		}
		if !strings.Contains(html, want) || strings.Contains(html, not) {
			t.Errorf("%s (variant %d): html lacks %q or has %q", m.To, v, want, not)
		}
		if !strings.Contains(string(m.Data), want) {
			t.Errorf("%s (variant %d): the message lacks %q", m.To, v, want)
		}
		if s := servicetest.DecodeSubject(t, m); s != "Hi "+first {
			t.Errorf("%s: subject %q", m.To, s)
		}
		if v == 2 && !clickedB {
			ss2 := f.Get(ss.Utr)
			idx := indexOf(ss2.Links, "https://shop.example.com/b")
			if idx < 0 || !strings.Contains(html, "/t/c/") || !strings.Contains(html, "/"+strconv.Itoa(idx)+`"`) {
				t.Fatalf("B's link %d of %q not tracked in %s", idx, ss2.Links, html)
			}
			to, err := f.Svc.Tracking.ClickHit(f.Ctx, tokenOf(t, m), idx, personHit)
			if err != nil || to != "https://shop.example.com/b" {
				t.Fatalf("B's click leads to %q (%v)", to, err)
			}
			clickedB = true
		}
	}
	if seen[1] == 0 || seen[2] == 0 {
		t.Fatalf("variants sent: %v", seen)
	}
	ab, err := f.Svc.SingleSends.ABTest(f.Ctx, f.Acct, f.Get(ss.Utr))
	if err != nil {
		t.Fatal(err)
	}
	if len(ab.Variants) != 2 || ab.Variants[0].Design != "" || ab.Variants[1].Design != designB {
		t.Fatalf("statistics' variants %+v", ab.Variants)
	}

	// The pre-send checklist reads each variant's own design.
	bare := f.Get(ss.Utr)
	bare.ABDesigns = []string{"", `<html><body><p>No way out</p></body></html>`}
	items, err := f.Svc.Checklist.ForSend(f.Ctx, f.Acct, bare)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range items {
		found = found || strings.HasPrefix(it.Message, "Variant B: ") && strings.Contains(strings.ToLower(it.Message), "unsubscribe")
	}
	if !found {
		t.Fatalf("no checklist item for variant B's design: %+v", items)
	}

	// After the wait B (clicked by a person) wins, the rest gets its
	// design, and a resend carries it.
	f.Advance(31 * time.Minute)
	done := f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	if done.ABWinner != 2 {
		t.Fatalf("winner %d, want B", done.ABWinner)
	}
	rs, err := f.Svc.SingleSends.ScheduleResend(f.Ctx, f.Acct, ss.Utr, service.ResendInput{Subject: "Again", When: "days", Days: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if rs.TemplateHTML == nil || *rs.TemplateHTML != designB || len(rs.ABDesigns) != 0 || rs.ABShare != 0 {
		t.Fatalf("the resend's design is not B's")
	}
}

func indexOf(xs []string, x string) int {
	for i, s := range xs {
		if s == x {
			return i
		}
	}
	return -1
}
