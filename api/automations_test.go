package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"herald/service"
)

type automation struct {
	ID                      int64   `json:"id"`
	UserID                  int64   `json:"user_id"`
	AutomationFor           int64   `json:"automation_for"`
	AutomationForTable      string  `json:"automation_for_table"`
	AutomationName          string  `json:"automation_name"`
	ExitCriteria            *int    `json:"exit_criteria"`
	UnsubscribeGroupID      string  `json:"unsubscribe_group_id"`
	AutomationType          int     `json:"automation_type"`
	Utr                     string  `json:"utr"`
	Status                  int     `json:"status"`
	LiveAt                  *string `json:"live_at"`
	TotalTriggered          *int64  `json:"total_triggered"`
	TotalDelivered          *int64  `json:"total_delivered"`
	TotalUniqueOpens        *int64  `json:"total_unique_opens"`
	TotalOpens              *int64  `json:"total_opens"`
	TotalBounces            *int64  `json:"total_bounces"`
	TotalUnsubscribe        *int64  `json:"total_unsubscribe"`
	DeletedAt               *string `json:"deleted_at"`
	CreatedAt               string  `json:"created_at"`
	UpdatedAt               string  `json:"updated_at"`
	AutomationScheduleCount *int64  `json:"automation_schedule_count"`
}

type schedule struct {
	ID            int64   `json:"id"`
	UserID        int64   `json:"user_id"`
	AutomationID  int64   `json:"automation_id"`
	SenderID      int64   `json:"sender_id"`
	Subject       string  `json:"subject"`
	WaitingPeriod int     `json:"waiting_period"`
	WaitingType   string  `json:"waiting_type"`
	Utr           string  `json:"utr"`
	TemplateID    int64   `json:"template_id"`
	PreviewImg    string  `json:"preview_img"`
	TemplateJSON  *string `json:"template_json"`
	TemplateHTML  *string `json:"template_html"`
	CreatedAt     string  `json:"created_at"`
	DesignURL     string  `json:"design_url"`
	Image         string  `json:"image"`
}

func automationOf(t *testing.T, r reply) automation {
	t.Helper()
	var m struct {
		Automation *automation `json:"automation"`
	}
	if r.Code != http.StatusOK || json.Unmarshal(r.Message, &m) != nil || m.Automation == nil {
		t.Fatalf("details: %d %s", r.Code, r.raw)
	}
	return *m.Automation
}

func TestAutomations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	// No automation yet: the spec's NF.
	expectNF(t, e.a.send("GET", "/api/automations", nil), "Record Not Found")

	utr := utrOfReply(t, e.a.send("POST", "/api/automations/create", form("type", "custom", "automation_for", "contacts_"+itoa(s.ctype),
		"automation_name", "Onboarding", "unsubscribe_group_id", "0")))
	a := automationOf(t, e.a.send("GET", "/api/automations/details?utr="+utr, nil))
	if a.Utr != utr || a.UserID != e.a.id || a.AutomationFor != s.ctype || a.AutomationForTable != "contacts_" || a.AutomationName != "Onboarding" ||
		a.UnsubscribeGroupID != "0" || a.AutomationType != 1 || a.Status != 0 || a.LiveAt != nil || a.ExitCriteria == nil || *a.ExitCriteria != 0 ||
		a.TotalTriggered == nil || *a.TotalTriggered != 0 || a.TotalUnsubscribe == nil || a.DeletedAt != nil || a.AutomationScheduleCount != nil ||
		!regexpTimestamp.MatchString(a.CreatedAt) {
		t.Fatalf("details: %+v", a)
	}

	// Set live: refused without a group (string error, 422).
	r := e.a.send("GET", "/api/automations/set-live?utr="+utr, nil)
	if r.Code != http.StatusUnprocessableEntity || r.text(r.Errors) != "An unsubscribe group is required to make an automation live." {
		t.Fatalf("set live without group: %d %s", r.Code, r.raw)
	}
	// Pause of a draft is refused.
	if r := e.a.send("GET", "/api/automations/pause?utr="+utr, nil); r.Code != http.StatusUnprocessableEntity {
		t.Fatalf("pause of a draft: %d %s", r.Code, r.raw)
	}

	// Schedules.
	sf := func(kv ...string) map[string]any {
		m := map[string]any{"utr": utr, "sender_id": itoa(s.sender), "subject": "Welcome", "waiting_period": "1", "waiting_type": "instantly",
			"template_id": "2", "preview_img": "02-newsletter.png"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	sutr := utrOfReply(t, e.a.send("POST", "/api/automations/schedule/create", jsonBody(t, sf())))
	utrOfReply(t, e.a.send("POST", "/api/automations/schedule/create", form("utr", utr, "sender_id", itoa(s.sender), "subject", "Day 2",
		"waiting_period", "2", "waiting_type", "days", "template_id", "1", "preview_img", "01-blank.png", "template_html", "<p>two</p>")))
	var m struct {
		Schedules []schedule `json:"automation_schedules"`
	}
	r = e.a.send("GET", "/api/automations/schedule?utr="+utr, nil)
	if err := json.Unmarshal(r.Message, &m); err != nil || len(m.Schedules) != 2 {
		t.Fatalf("schedules: %s", r.raw)
	}
	s0, s1 := m.Schedules[0], m.Schedules[1]
	if s0.Utr != sutr || s0.WaitingPeriod != 1 || s0.WaitingType != "instantly" || s0.TemplateHTML == nil || !strings.Contains(*s0.TemplateHTML, "<table") ||
		s0.TemplateJSON == nil || *s0.TemplateJSON != "" ||
		s0.AutomationID != a.ID || s0.UserID != e.a.id || !strings.HasSuffix(s0.Image, "/static/img/templates/02-newsletter.png") ||
		!strings.Contains(s0.DesignURL, "/automations/"+utr+"/emails/"+sutr) {
		t.Fatalf("schedule 0: %+v", s0)
	}
	if s1.WaitingPeriod != 2 || s1.WaitingType != "days" || *s1.TemplateHTML != "<p>two</p>" {
		t.Fatalf("schedule 1: %+v", s1)
	}
	expectVAL(t, e.a.send("POST", "/api/automations/schedule/create", "{}"), map[string][]string{"utr": {"The utr field is required."},
		"sender_id": {"The sender id field is required."}, "subject": {"The subject field is required."},
		"waiting_period": {"The waiting period field is required."}, "waiting_type": {"The waiting type field is required."},
		"template_id": {"The template id field is required."}, "preview_img": {"The preview img field is required."},
	})
	expectNF(t, e.a.send("POST", "/api/automations/schedule/create", jsonBody(t, sf("utr", "nope"))), "Record not found")
	expectVAL(t, e.a.send("POST", "/api/automations/schedule/create", jsonBody(t, map[string]any{"utr": utr})), map[string][]string{
		"sender_id": {"The sender id field is required."}, "subject": {"The subject field is required."},
		"waiting_period": {"The waiting period field is required."}, "waiting_type": {"The waiting type field is required."},
		"template_id": {"The template id field is required."}, "preview_img": {"The preview img field is required."},
	})
	expectVAL(t, e.a.send("POST", "/api/automations/schedule/create", jsonBody(t, sf("waiting_type", "weeks", "waiting_period", "x"))), map[string][]string{
		"waiting_type": {"The selected waiting type is invalid."}, "waiting_period": {"The waiting period must be an integer."},
	})

	// With a group (a new automation), set live and pause.
	utr2 := utrOfReply(t, e.a.send("POST", "/api/automations/create", jsonBody(t, map[string]any{"type": "welcome",
		"automation_for": "segments_" + itoa(s.segment), "unsubscribe_group_id": itoa(s.group)})))
	// It has no emails (decisions.md 6): set live is refused until it has one.
	if r := e.a.send("GET", "/api/automations/set-live?utr="+utr2, nil); r.Code != http.StatusUnprocessableEntity {
		t.Fatalf("set live without emails: %d %s", r.Code, r.raw)
	}
	utrOfReply(t, e.a.send("POST", "/api/automations/schedule/create", jsonBody(t, sf("utr", utr2))))
	expectOK(t, e.a.send("GET", "/api/automations/set-live?utr="+utr2, nil), "Automation has been set live")
	live := automationOf(t, e.a.send("GET", "/api/automations/details?utr="+utr2, nil))
	if live.Status != 1 || live.LiveAt == nil || !regexpDateTime.MatchString(*live.LiveAt) || live.AutomationType != 0 || live.AutomationName != "Welcome series" ||
		live.UnsubscribeGroupID != itoa(s.group) {
		t.Fatalf("live: %+v", live)
	}
	expectOK(t, e.a.send("GET", "/api/automations/pause?utr="+utr2, nil), "Automation Paused Successfully")
	if got := automationOf(t, e.a.send("GET", "/api/automations/details?utr="+utr2, nil)); got.Status != 0 {
		t.Fatalf("after pause: %+v", got)
	}

	// List with schedule counts.
	all := list[automation](t, e.a.send("GET", "/api/automations", nil), "automations")
	if len(all) != 2 || all[0].AutomationScheduleCount == nil || *all[0].AutomationScheduleCount != 2 || *all[1].AutomationScheduleCount != 1 {
		t.Fatalf("list: %+v", all)
	}

	// Duplicate: a draft copy with its emails.
	dup := utrOfReply(t, e.a.send("GET", "/api/automations/duplicate?utr="+utr2, nil))
	if got := automationOf(t, e.a.send("GET", "/api/automations/details?utr="+dup, nil)); got.Status != 0 || got.AutomationName != "Copy of Welcome series" {
		t.Fatalf("duplicate: %+v", got)
	}

	// Isolation and NF.
	expectNF(t, e.b.send("GET", "/api/automations", nil), "Record Not Found")
	expectNF(t, e.b.send("GET", "/api/automations/details?utr="+utr, nil), "Record Not Found")
	expectNF(t, e.b.send("GET", "/api/automations/pause?utr="+utr2, nil), "Record not found")
	expectNF(t, e.b.send("GET", "/api/automations/set-live?utr="+utr2, nil), "Record Not Found")
	expectNF(t, e.b.send("DELETE", "/api/automations/delete?utr="+utr, nil), "Record not found")
	expectNF(t, e.b.send("GET", "/api/automations/schedule?utr="+utr, nil), "Record not found")
	expectNF(t, e.b.send("GET", "/api/automations/duplicate?utr="+utr, nil), "Record Not Found")
	expectNF(t, e.b.send("POST", "/api/automations/bulk-delete", form("strIds[]", utr)), "Record not found")
	// b's own complete body for a's automation: not found; with a's
	// sender, that sender is invalid first (the body is checked first).
	bs := newSendSetup(t, e, e.b)
	expectNF(t, e.b.send("POST", "/api/automations/schedule/create", jsonBody(t, sf("sender_id", itoa(bs.sender)))), "Record not found")
	expectVAL(t, e.b.send("POST", "/api/automations/schedule/create", jsonBody(t, sf())), map[string][]string{"sender_id": {"The selected sender id is invalid."}})
	expectVAL(t, e.b.send("POST", "/api/automations/create", form("type", "custom", "automation_for", "contacts_"+itoa(s.ctype), "unsubscribe_group_id", itoa(s.group))),
		map[string][]string{"automation_for": {"The selected automation for is invalid."}, "unsubscribe_group_id": {"The selected unsubscribe group id is invalid."}})

	// Create validation.
	expectVAL(t, e.a.send("POST", "/api/automations/create", "{}"), map[string][]string{
		"type": {"The type field is required."}, "unsubscribe_group_id": {"The unsubscribe group id field is required."}})
	expectVAL(t, e.a.send("POST", "/api/automations/create", form("type", "drip", "unsubscribe_group_id", "0", "automation_for", "lists_1")),
		map[string][]string{"type": {"The selected type is invalid."}, "automation_for": {"The selected automation for is invalid."}})

	// Delete and bulk delete (all or nothing).
	expectNF(t, e.a.send("POST", "/api/automations/bulk-delete", form("strIds[0]", utr, "strIds[1]", "missing")), "Record not found")
	expectOK(t, e.a.send("POST", "/api/automations/bulk-delete", form("strIds[0]", utr, "strIds[1]", itoa(live.ID))), "Deleted Successfully")
	expectOK(t, e.a.send("DELETE", "/api/automations/delete?utr="+dup, nil), "Deleted Successfully")
	expectNF(t, e.a.send("DELETE", "/api/automations/delete?utr="+dup, nil), "Record not found")
	expectNF(t, e.a.send("GET", "/api/automations", nil), "Record Not Found")
}

// TestAutomationTrigger: POST automations/trigger (beyond the spec)
// enrols one contact of an automation started from the API, once.
func TestAutomationTrigger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	if _, err := e.svc.Contacts.Create(context.Background(), e.a.id, service.ContactInput{ContactTypeID: itoa(s.ctype), FirstName: "Ann",
		Email: "ann@example.com", Country: "250"}); err != nil {
		t.Fatal(err)
	}
	utr := utrOfReply(t, e.a.send("POST", "/api/automations/create", form("type", "custom", "automation_for", "contacts_"+itoa(s.ctype),
		"unsubscribe_group_id", itoa(s.group), "trigger", "api")))
	utrOfReply(t, e.a.send("POST", "/api/automations/schedule/create", form("utr", utr, "sender_id", itoa(s.sender), "subject", "Your ((data.plan)) plan",
		"waiting_period", "1", "waiting_type", "instantly", "template_id", "1", "preview_img", "01-blank.png", "template_html", "<p>((data.plan))</p>")))

	body := func(kv ...any) string { // JSON: data is an object
		m := map[string]any{"automation": utr, "email": "ann@example.com"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return jsonBody(t, m)
	}
	r := e.a.send("POST", "/api/automations/trigger", body())
	if r.Code != http.StatusUnprocessableEntity || r.text(r.Errors) != "The automation is not live." {
		t.Fatalf("trigger of a draft: %d %s", r.Code, r.raw)
	}
	expectOK(t, e.a.send("GET", "/api/automations/set-live?utr="+utr, nil), "Automation has been set live")

	expectVAL(t, e.a.send("POST", "/api/automations/trigger", "{}"), map[string][]string{
		"automation": {"The automation field is required."}, "email": {"The email field is required."}})
	expectVAL(t, e.a.send("POST", "/api/automations/trigger", body("email", "nobody@example.com", "data", "plain")), map[string][]string{
		"data": {"The data must be an object."}})
	expectVAL(t, e.a.send("POST", "/api/automations/trigger", body("email", "nobody@example.com")), map[string][]string{
		"email": {"The email is not a contact of the automation's contact type."}})
	expectNF(t, e.a.send("POST", "/api/automations/trigger", body("automation", "missing")), "Record not found")
	expectNF(t, e.b.send("POST", "/api/automations/trigger", body()), "Record not found")

	expectOK(t, e.a.send("POST", "/api/automations/trigger", body("data", map[string]any{"plan": "Gold"})), "Contact enrolled")
	expectOK(t, e.a.send("POST", "/api/automations/trigger", form("automation", utr, "email", "ANN@example.com", "data[plan]", "Silver")), "Contact already enrolled")
}

// TestAutomationDateTriggerAPI: automations/create with trigger date
// (beyond the spec) and its fields; details answer them.
func TestAutomationDateTriggerAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	if _, err := e.svc.Fields.Create(context.Background(), e.a.id, service.FieldInput{FieldName: "birthday", FieldType: "datetime-local"}); err != nil {
		t.Fatal(err)
	}
	expectVAL(t, e.a.send("POST", "/api/automations/create", form("type", "custom", "automation_for", "contacts_"+itoa(s.ctype),
		"unsubscribe_group_id", itoa(s.group), "trigger", "date", "date_field", "nickname", "date_offset_days", "400")), map[string][]string{
		"date_field":       {"The date field must be one of your custom fields."},
		"date_offset_days": {"The date offset must be a whole number of days from -365 to 365."}})
	utr := utrOfReply(t, e.a.send("POST", "/api/automations/create", form("type", "custom", "automation_for", "contacts_"+itoa(s.ctype),
		"unsubscribe_group_id", itoa(s.group), "trigger", "date", "date_field", "birthday", "date_offset_days", "-7", "date_yearly", "true")))
	r := e.a.send("GET", "/api/automations/details?utr="+utr, nil)
	var got struct {
		Message struct {
			Automation struct {
				TriggerKind    string `json:"trigger_kind"`
				DateField      string `json:"date_field"`
				DateOffsetDays int    `json:"date_offset_days"`
				DateYearly     int    `json:"date_yearly"`
			} `json:"automation"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(r.raw), &got); err != nil {
		t.Fatal(err)
	}
	if a := got.Message.Automation; a.TriggerKind != "date" || a.DateField != "birthday" || a.DateOffsetDays != -7 || a.DateYearly != 1 {
		t.Fatalf("details: %s", r.raw)
	}
}
