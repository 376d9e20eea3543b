package service_test

import (
	"fmt"
	"mime"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/service"
	"herald/service/servicetest"
)

// An automation's messages name the automation's contact type in List-Id
// and the automation in Feedback-ID; a send to a segment names the segment.
func TestMailIdentityAutomationAndSegment(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers")
	a := f.Automation(typeA, "0")
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	f.AddContact(typeA, "new@example.com")
	f.Settle()
	var got int
	for _, m := range f.SMTP.Messages() {
		if m.To != "new@example.com" {
			continue
		}
		got++
		h := m.Header()
		if want := fmt.Sprintf(`"Customers" <type%d.a%d.shop.example.com>`, typeA, f.Acct); h.Get("List-Id") != want {
			t.Errorf("automation List-Id %q, want %q", h.Get("List-Id"), want)
		}
		if want := fmt.Sprintf("a%d:%d:herald", a.ID, f.Acct); h.Get("Feedback-ID") != want {
			t.Errorf("automation Feedback-ID %q, want %q", h.Get("Feedback-ID"), want)
		}
	}
	if got != 1 {
		t.Fatalf("%d automation messages to new@example.com", got)
	}

	seg, err := f.Svc.Segments.Create(f.Ctx, f.Acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(typeA, 10), SegmentName: "Frères \"VIP\"",
		SelectField: []string{"email"}, SelectOperator: []string{"ends_with"}, Value: []string{"@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	ss := f.Create(f.Input("To the segment", []string{"segments_" + strconv.FormatInt(seg.ID, 10)}, nil))
	f.WaitStatus(ss.Utr, 3, 20*time.Second)
	ms := f.Sent(ss.Utr)
	if len(ms) != 1 {
		t.Fatalf("%d messages to the segment", len(ms))
	}
	raw := ms[0].Header().Get("List-Id")
	name, id := decodeListID(t, raw)
	if name != `Frères "VIP"` || id != fmt.Sprintf("segment%d.a%d.shop.example.com", seg.ID, f.Acct) {
		t.Errorf("segment List-Id %q reads %q <%s>", raw, name, id)
	}
	if want := fmt.Sprintf("s%d:%d:herald", ss.ID, f.Acct); ms[0].Header().Get("Feedback-ID") != want {
		t.Errorf("Feedback-ID %q, want %q", ms[0].Header().Get("Feedback-ID"), want)
	}
}

// decodeListID reads a List-Id header as a mail client would: its decoded
// name and its id.
func decodeListID(t *testing.T, v string) (name, id string) {
	t.Helper()
	i := strings.LastIndexByte(v, '<')
	if i < 0 || !strings.HasSuffix(v, ">") {
		t.Fatalf("List-Id %q has no <id>", v)
	}
	phrase := strings.TrimSpace(v[:i])
	if strings.HasPrefix(phrase, `"`) {
		u, err := strconv.Unquote(phrase)
		if err != nil {
			t.Fatalf("List-Id %q: %v", v, err)
		}
		return u, v[i+1 : len(v)-1]
	}
	name, err := new(mime.WordDecoder).DecodeHeader(phrase)
	if err != nil {
		t.Fatalf("List-Id %q: %v", v, err)
	}
	return name, v[i+1 : len(v)-1]
}
