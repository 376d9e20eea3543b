package service_test

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"

	"herald/models"
	"herald/service"
)

// Every campaign message names its list (List-Id: the send's first
// contact type or segment) and its campaign for Gmail's feedback loop
// (Feedback-ID: campaign:account:herald), both under the DKIM signature.
func TestSendIdentityHeaders(t *testing.T) {
	f := newSendFixture(t, true)
	rec, err := f.svc.Senders.DKIM(f.ctx, f.acct, "shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	typeID := f.contactType(`Café "regulars"`, "ann@example.com")
	ss := f.create(f.input("October", []string{"contacts_" + strconv.FormatInt(typeID, 10)}, nil))
	f.waitStatus(ss.Utr, models.SendCompleted, 10*time.Second)
	got := f.sent(ss.Utr)
	if len(got) != 1 {
		t.Fatalf("%d messages", len(got))
	}
	h := got[0].Header()
	wantList := fmt.Sprintf(`=?utf-8?q?Caf=C3=A9_"regulars"?= <contacts-%d.a%d.shop.example.com>`, typeID, f.acct)
	if h.Get("List-Id") != wantList {
		t.Errorf("List-Id %q, want %q", h.Get("List-Id"), wantList)
	}
	if want := ss.Utr + ":" + strconv.FormatInt(f.acct, 10) + ":herald"; h.Get("Feedback-ID") != want {
		t.Errorf("Feedback-ID %q, want %q", h.Get("Feedback-ID"), want)
	}
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(got[0].Data), &dkim.VerifyOptions{LookupTXT: func(domain string) ([]string, error) {
		if domain != rec.Selector+"._domainkey."+rec.Domain {
			return nil, fmt.Errorf("no record %s", domain)
		}
		return []string{rec.Record}, nil
	}})
	if err != nil || len(vs) != 1 || vs[0].Err != nil {
		t.Fatalf("DKIM: %v %+v", err, vs)
	}
	signed := strings.Join(vs[0].HeaderKeys, ":")
	if !strings.Contains(strings.ToLower(signed), "list-id") || !strings.Contains(strings.ToLower(signed), "feedback-id") {
		t.Errorf("signed headers %s", signed)
	}

	// An automation's email: the automation is the campaign, its target the list.
	seg, err := f.svc.Segments.Create(f.ctx, f.acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(typeID, 10), SegmentName: "Regulars",
		SelectField: []string{"email"}, SelectOperator: []string{"is_not_empty"}, Value: []string{""}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.svc.Automations.Create(f.ctx, f.acct, service.AutomationInput{Type: "custom", AutomationFor: "segments_" + strconv.FormatInt(seg.ID, 10),
		AutomationName: "Welcome", UnsubscribeGroupID: strconv.FormatInt(f.group, 10)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Automations.AddSchedule(f.ctx, f.acct, service.ScheduleInput{Utr: a.Utr, SenderID: strconv.FormatInt(f.sender, 10),
		Subject: "Welcome aboard", WaitingPeriod: "1", WaitingType: "instantly", TemplateID: "1", PreviewImg: "01-blank.png", TemplateHTML: `<p>Hi</p>`}); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Automations.SetLive(f.ctx, f.acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	f.addContact(typeID, "bob@example.com")
	deadline := time.Now().Add(10 * time.Second)
	for f.stepsOf("bob@example.com", "Welcome aboard") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the automation's email never came")
		}
		if err := f.sg.Tick(f.ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, m := range f.srv.Messages() {
		if m.To != "bob@example.com" {
			continue
		}
		h := m.Header()
		if want := fmt.Sprintf(`"Regulars" <segments-%d.a%d.shop.example.com>`, seg.ID, f.acct); h.Get("List-Id") != want {
			t.Errorf("automation List-Id %q, want %q", h.Get("List-Id"), want)
		}
		if want := a.Utr + ":" + strconv.FormatInt(f.acct, 10) + ":herald"; h.Get("Feedback-ID") != want {
			t.Errorf("automation Feedback-ID %q, want %q", h.Get("Feedback-ID"), want)
		}
	}
}
