package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"herald/service"
)

type singleSend struct {
	ID                         int64             `json:"id"`
	UserID                     int64             `json:"user_id"`
	TemplateID                 int64             `json:"template_id"`
	RecipientID                []map[string]any  `json:"recipient_id"`
	ExcludeSpecificRecipientID []map[string]any  `json:"exclude_specific_recipient_id"`
	SenderID                   int64             `json:"sender_id"`
	UnsubscribeGroupID         int64             `json:"unsubscribe_group_id"`
	SingleSendName             string            `json:"single_send_name"`
	FromSender                 string            `json:"from_sender"`
	ReplyTo                    string            `json:"reply_to"`
	SenderName                 *string           `json:"sender_name"`
	SenderAddress              *string           `json:"sender_address"`
	Subject                    string            `json:"subject"`
	Preheader                  string            `json:"preheader"`
	ScheduleType               int               `json:"schedule_type"`
	ScheduleDate               string            `json:"schedule_date"`
	ScheduleTime               string            `json:"schedule_time"`
	Status                     int               `json:"status"`
	Utr                        string            `json:"utr"`
	TemplateJSON               *string           `json:"template_json"`
	TemplateHTML               *string           `json:"template_html"`
	Triggered                  *int64            `json:"triggered"`
	Delivered                  *int64            `json:"delivered"`
	UniqueOpens                *int64            `json:"unique_opens"`
	TotalOpens                 *int64            `json:"total_opens"`
	Bounces                    *int64            `json:"bounces"`
	Unsubscribes               *int64            `json:"unsubscribes"`
	UniqueOpenToken            map[string]string `json:"unique_open_token"`
	SentAt                     *string           `json:"sent_at"`
	CreatedAt                  string            `json:"created_at"`
	UpdatedAt                  string            `json:"updated_at"`
}

var regexpUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
var regexpTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

// sendSetup gives account c a verified sender, a group and a contact type.
type sendSetup struct{ sender, group, ctype, segment int64 }

func newSendSetup(t *testing.T, e *env, c *client) sendSetup {
	t.Helper()
	ctx := context.Background()
	snd, err := e.svc.Senders.Create(ctx, c.id, service.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com", ReplyToEmail: "help@shop.example.com",
		CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
	g, err := e.svc.Groups.Create(ctx, c.id, service.GroupInput{GroupName: "News", Description: "Monthly", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	ct, err := e.svc.ContactTypes.Create(ctx, c.id, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	seg, err := e.svc.Segments.Create(ctx, c.id, service.SegmentInput{ContactTypeID: itoa(ct.ID), SegmentName: "All", SelectField: []string{"email"},
		SelectOperator: []string{"is_not_empty"}, Value: []string{""}})
	if err != nil {
		t.Fatal(err)
	}
	return sendSetup{snd.ID, g.ID, ct.ID, seg.ID}
}

func (s sendSetup) body(kv ...string) map[string]any {
	m := map[string]any{
		"template_id": "1", "template_html": "<p>Hello ((first_name))</p>", "sender_id": itoa(s.sender),
		"unsubscribe_group_id": itoa(s.group), "single_send_name": "Spring", "subject": "Hi", "preheader": "News",
		"recipient_id": []string{"contacts_" + itoa(s.ctype)}, "exclude_specific_recipient_id": []string{"segments_" + itoa(s.segment)},
		"schedule_type": "1", "schedule_date": time.Now().UTC().AddDate(0, 0, 2).Format("2006-01-02"), "schedule_time": "10:30",
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<delete>" {
			delete(m, kv[i])
		} else {
			m[kv[i]] = kv[i+1]
		}
	}
	return m
}

func jsonBody(t *testing.T, m map[string]any) string {
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func utrOfReply(t *testing.T, r reply) string {
	t.Helper()
	var m struct {
		Utr string `json:"utr"`
	}
	if r.Code != http.StatusOK || json.Unmarshal(r.Message, &m) != nil || !regexpUUID.MatchString(m.Utr) {
		t.Fatalf("want message.utr, got %d %s", r.Code, r.raw)
	}
	return m.Utr
}

func details(t *testing.T, c *client, utr string) singleSend {
	t.Helper()
	items := list[singleSend](t, c.send("GET", "/api/single-send/details?utr="+utr, nil), "singleSend")
	if len(items) != 1 {
		t.Fatalf("details: %d items", len(items))
	}
	return items[0]
}

func TestSingleSends(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	utr := utrOfReply(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body())))

	got := details(t, e.a, utr)
	if got.Utr != utr || got.UserID != e.a.id || got.Status != 1 || got.ScheduleType != 1 || got.ScheduleTime != "10:30:00" ||
		got.SingleSendName != "Spring" || got.FromSender != "news@shop.example.com" || got.ReplyTo != "help@shop.example.com" ||
		got.SenderName == nil || *got.SenderName != "Shop" || got.SenderAddress == nil || !strings.Contains(*got.SenderAddress, "France") ||
		got.TemplateHTML == nil || *got.TemplateHTML != "<p>Hello ((first_name))</p>" || got.TemplateJSON != nil ||
		got.Triggered == nil || *got.Triggered != 0 || got.Delivered == nil || got.UniqueOpens == nil || got.TotalOpens == nil ||
		got.Bounces == nil || got.Unsubscribes == nil || got.UniqueOpenToken == nil || got.SentAt != nil {
		t.Fatalf("details: %+v", got)
	}
	if len(got.RecipientID) != 1 || got.RecipientID[0]["id"] != itoa(s.ctype) || got.RecipientID[0]["table"] != "contacts_" ||
		len(got.ExcludeSpecificRecipientID) != 1 || got.ExcludeSpecificRecipientID[0]["table"] != "segments_" {
		t.Fatalf("targets: %+v / %+v", got.RecipientID, got.ExcludeSpecificRecipientID)
	}
	if !regexpTimestamp.MatchString(got.CreatedAt) {
		t.Fatalf("created_at %q", got.CreatedAt)
	}

	// Update: an immediate send now, form-encoded with name[] arrays.
	f := form("utr", utr, "template_id", "2", "sender_id", itoa(s.sender), "unsubscribe_group_id", itoa(s.group),
		"single_send_name", "Spring 2", "subject", "Hello", "preheader", "P", "recipient_id[]", "segments_"+itoa(s.segment), "schedule_type", "0")
	if u := utrOfReply(t, e.a.send("POST", "/api/single/send/update", f)); u != utr {
		t.Fatalf("update answered utr %s", u)
	}
	got = details(t, e.a, utr)
	if got.Status != 0 || got.ScheduleType != 0 || got.ScheduleDate != "0000-00-00" || got.ScheduleTime != "00:00:00" || got.TemplateID != 2 ||
		got.TemplateHTML == nil || !strings.Contains(*got.TemplateHTML, "<table") || len(got.ExcludeSpecificRecipientID) != 0 {
		t.Fatalf("after update: %+v", got)
	}

	// Duplicate by POST and by GET: copies in status 0.
	expectOK(t, e.a.send("POST", "/api/single/send/duplicate?utr="+utr, nil), "Duplicated Successfully")
	expectOK(t, e.a.send("GET", "/api/single/send/duplicate?utr="+utr, nil), "Duplicated Successfully")
	all := list[singleSend](t, e.a.send("GET", "/api/single-send/list", nil), "singleSends")
	if len(all) != 3 || all[1].SingleSendName != "Copy of Spring 2" || all[1].Status != 0 || all[1].Utr == utr {
		t.Fatalf("list after duplicates: %+v", all)
	}
	if n := list[singleSend](t, e.b.send("GET", "/api/single-send/list", nil), "singleSends"); len(n) != 0 {
		t.Fatalf("account b sees %d sends", len(n))
	}

	// Isolation: b gets NF for a's send everywhere.
	expectNF(t, e.b.send("GET", "/api/single-send/details?utr="+utr, nil), "Record not found")
	expectNF(t, e.b.send("POST", "/api/single/send/duplicate?utr="+utr, nil), "Record not found")
	expectNF(t, e.b.send("DELETE", "/api/single/send/delete?utr="+utr, nil), "Record not found")
	expectNF(t, e.b.send("POST", "/api/single/send/bulk-delete", form("strIds[]", utr)), "Record not found")
	bs := newSendSetup(t, e, e.b)
	// Update is not among api.md's lower-case NF operations.
	expectNF(t, e.b.send("POST", "/api/single/send/update", jsonBody(t, bs.body("utr", utr))), "Record Not Found")
	// b cannot use a's sender, group or contact type.
	expectVAL(t, e.b.send("POST", "/api/single/send/create", jsonBody(t, s.body())), map[string][]string{
		"sender_id":                     {"The selected sender id is invalid."},
		"unsubscribe_group_id":          {"The selected unsubscribe group id is invalid."},
		"recipient_id":                  {"The selected recipient id is invalid."},
		"exclude_specific_recipient_id": {"The selected exclude specific recipient id is invalid."},
	})

	// NF forms.
	for _, q := range []string{"", "?utr=", "?utr=nope", "?utr=999999"} {
		expectNF(t, e.a.send("GET", "/api/single-send/details"+q, nil), "Record not found")
		expectNF(t, e.a.send("DELETE", "/api/single/send/delete"+q, nil), "Record not found")
	}

	// Bulk delete is all-or-nothing; utrs and ids both work.
	expectNF(t, e.a.send("POST", "/api/single/send/bulk-delete", form("strIds[0]", all[1].Utr, "strIds[1]", "missing")), "Record not found")
	if n := len(list[singleSend](t, e.a.send("GET", "/api/single-send/list", nil), "singleSends")); n != 3 {
		t.Fatalf("partial bulk delete removed some: %d left", n)
	}
	expectOK(t, e.a.send("POST", "/api/single/send/bulk-delete", form("strIds[0]", all[1].Utr, "strIds[1]", itoa(all[2].ID))), "Deleted Successfully")
	expectOK(t, e.a.send("DELETE", "/api/single/send/delete?utr="+utr, nil), "Deleted Successfully")
	if n := len(list[singleSend](t, e.a.send("GET", "/api/single-send/list", nil), "singleSends")); n != 0 {
		t.Fatalf("%d left after deletes", n)
	}
}

func TestSingleSendValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	expectVAL(t, e.a.send("POST", "/api/single/send/create", "{}"), map[string][]string{
		"template_id": {"The template id field is required."}, "sender_id": {"The sender id field is required."},
		"unsubscribe_group_id": {"The unsubscribe group id field is required."}, "single_send_name": {"The single send name field is required."},
		"subject": {"The subject field is required."}, "preheader": {"The preheader field is required."},
		"recipient_id": {"The recipient id field is required."}, "schedule_type": {"The schedule type field is required."},
	})
	for name, tc := range map[string]struct {
		kv   []string
		want map[string][]string
	}{
		"custom template without code": {[]string{"template_html", "<delete>"}, map[string][]string{"template_html": {"The template html field is required when template id is 1."}}},
		"unknown template":             {[]string{"template_id", "999"}, map[string][]string{"template_id": {"The selected template id is invalid."}}},
		"template id not a number":     {[]string{"template_id", "x"}, map[string][]string{"template_id": {"The template id must be an integer."}}},
		"bad item form":                {[]string{"recipient_id", "lists_1"}, map[string][]string{"recipient_id": {"The selected recipient id is invalid."}}},
		"missing segment":              {[]string{"exclude_specific_recipient_id", "segments_99999"}, map[string][]string{"exclude_specific_recipient_id": {"The selected exclude specific recipient id is invalid."}}},
		"bad schedule type":            {[]string{"schedule_type", "maybe"}, map[string][]string{"schedule_type": {"The schedule type field must be true or false."}}},
		"no date":                      {[]string{"schedule_date", "<delete>"}, map[string][]string{"schedule_date": {"The schedule date field is required."}}},
		"no time":                      {[]string{"schedule_time", ""}, map[string][]string{"schedule_time": {"The schedule time field is required."}}},
		"bad date":                     {[]string{"schedule_date", "24/12/2030"}, map[string][]string{"schedule_date": {"The schedule date does not match the format Y-m-d."}}},
		"bad time":                     {[]string{"schedule_time", "25:99"}, map[string][]string{"schedule_time": {"The schedule time does not match the format H:i:s."}}},
		"in the past":                  {[]string{"schedule_date", "2020-01-01"}, map[string][]string{"schedule_date": {"The schedule date and time must be in the future."}}},
		"long subject":                 {[]string{"subject", strings.Repeat("s", 256)}, map[string][]string{"subject": {"The subject may not be greater than 255 characters."}}},
		"unknown sender":               {[]string{"sender_id", "abc"}, map[string][]string{"sender_id": {"The selected sender id is invalid."}}},
	} {
		t.Run(name, func(t *testing.T) {
			expectVAL(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body(tc.kv...))), tc.want)
		})
	}
	// A sender that is not verified.
	snd, err := e.svc.Senders.Create(context.Background(), e.a.id, service.SenderInput{FromName: "New", FromEmail: "new@shop.example.com",
		ReplyToEmail: "new@shop.example.com", CountryID: "250", CompanyAddress: "x", Nickname: "n"})
	if err != nil {
		t.Fatal(err)
	}
	expectVAL(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body("sender_id", itoa(snd.ID)))),
		map[string][]string{"sender_id": {"The selected sender is not verified."}})
	// Update needs a utr.
	expectVAL(t, e.a.send("POST", "/api/single/send/update", jsonBody(t, s.body())), map[string][]string{"utr": {"The utr field is required."}})
	// template_json alone works when it carries the HTML.
	utr := utrOfReply(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body("template_html", "<delete>", "template_json", `{"html":"<p>J</p>"}`))))
	if got := details(t, e.a, utr); got.TemplateJSON == nil || got.TemplateHTML == nil || *got.TemplateHTML != "<p>J</p>" {
		t.Fatalf("template_json: %+v", got)
	}
	// A running or completed send cannot be updated.
	if err := e.svc.DB.W.Exec("UPDATE single_sends SET status = 3 WHERE utr = ?", utr).Error; err != nil {
		t.Fatal(err)
	}
	r := e.a.send("POST", "/api/single/send/update", jsonBody(t, s.body("utr", utr)))
	if r.Code != http.StatusUnprocessableEntity || r.text(r.Errors) != "A running or completed single send cannot be updated." {
		t.Fatalf("update of a completed send: %d %s", r.Code, r.raw)
	}
}
