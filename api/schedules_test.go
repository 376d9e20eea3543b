package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"herald/service"
)

// TestAutomationCreateMakesNoSchedules: decisions.md 6 (changed). An API
// caller's welcome automation holds exactly the emails it created: none
// at first, one after one schedule/create.
func TestAutomationCreateMakesNoSchedules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	for _, typ := range []string{"welcome", "custom"} {
		utr := utrOfReply(t, e.a.send("POST", "/api/automations/create", form("type", typ, "automation_for", "contacts_"+itoa(s.ctype), "unsubscribe_group_id", itoa(s.group))))
		if got := schedulesOf(t, e.a, utr); len(got) != 0 {
			t.Fatalf("%s: created with %d schedules", typ, len(got))
		}
		utrOfReply(t, e.a.send("POST", "/api/automations/schedule/create", form("utr", utr, "sender_id", itoa(s.sender), "subject", "Only mine",
			"waiting_period", "0", "waiting_type", "instantly", "template_id", "2", "preview_img", "02-newsletter.png")))
		got := schedulesOf(t, e.a, utr)
		if len(got) != 1 || got[0]["subject"] != "Only mine" {
			t.Fatalf("%s: schedules after one create: %v", typ, got)
		}
		all := list[automation](t, e.a.send("GET", "/api/automations", nil), "automations")
		for _, a := range all {
			if a.Utr == utr && (a.AutomationScheduleCount == nil || *a.AutomationScheduleCount != 1) {
				t.Fatalf("%s: automation_schedule_count %v", typ, a.AutomationScheduleCount)
			}
		}
	}
}

func schedulesOf(t *testing.T, c *client, utr string) []map[string]any {
	t.Helper()
	r := c.send("GET", "/api/automations/schedule?utr="+utr, nil)
	var m struct {
		Schedules []map[string]any `json:"automation_schedules"`
	}
	if r.Code != http.StatusOK || json.Unmarshal(r.Message, &m) != nil || m.Schedules == nil {
		t.Fatalf("schedules: %d %s", r.Code, r.raw)
	}
	return m.Schedules
}

// TestScheduleTemplateCodeIsAString: template_json and template_html of a
// schedule record are strings, empty when unused, never null.
func TestScheduleTemplateCodeIsAString(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	utr := utrOfReply(t, e.a.send("POST", "/api/automations/create", form("type", "custom", "unsubscribe_group_id", "0")))
	base := []string{"utr", utr, "sender_id", itoa(s.sender), "subject", "S", "waiting_period", "0", "waiting_type", "instantly", "preview_img", "x.png"}
	for _, kv := range [][]string{
		{"template_id", "2"}, // the library design: no JSON
		{"template_id", "1", "template_html", "<p>h</p>"},
		{"template_id", "1", "template_json", `{"html":"<p>j</p>"}`},
	} {
		utrOfReply(t, e.a.send("POST", "/api/automations/schedule/create", form(append(append([]string{}, base...), kv...)...)))
	}
	got := schedulesOf(t, e.a, utr)
	if len(got) != 3 {
		t.Fatalf("%d schedules", len(got))
	}
	want := []struct{ js, html string }{{"", "<table"}, {"", "<p>h</p>"}, {`{"html":"<p>j</p>"}`, "<p>j</p>"}}
	for i, sc := range got {
		js, okJ := sc["template_json"].(string)
		html, okH := sc["template_html"].(string)
		if !okJ || !okH || js != want[i].js || !strings.Contains(html, want[i].html) {
			t.Fatalf("schedule %d: template_json %#v, template_html %#v", i, sc["template_json"], sc["template_html"])
		}
		for _, k := range []string{"id", "user_id", "automation_id", "sender_id", "subject", "waiting_period", "waiting_type", "utr", "template_id",
			"preview_img", "template_json", "template_html", "created_at", "updated_at", "design_url", "image"} {
			if _, ok := sc[k]; !ok {
				t.Fatalf("schedule %d lacks %s: %v", i, k, sc)
			}
		}
		if len(sc) != 16 {
			t.Fatalf("schedule %d has %d fields: %v", i, len(sc), sc)
		}
	}
}

// An email sent at once keeps the waiting_period it was created with
// (api.md: "use 1 for an instant email"): the create answers the
// schedule's utr, the list answers the period as sent, the row stores it,
// and the email still waits for nothing.
func TestScheduleInstantlyKeepsItsPeriod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	utr := utrOfReply(t, e.a.send("POST", "/api/automations/create", form("type", "custom", "automation_for", "contacts_"+itoa(s.ctype), "unsubscribe_group_id", itoa(s.group))))
	body := func(period string) map[string]any {
		return map[string]any{"utr": utr, "sender_id": itoa(s.sender), "subject": "At once " + period, "waiting_period": period, "waiting_type": "instantly",
			"template_id": "2", "preview_img": "02-newsletter.png"}
	}
	sent := map[string]string{} // schedule utr → waiting_period sent
	for _, period := range []string{"1", "0"} {
		r := e.a.send("POST", "/api/automations/schedule/create", jsonBody(t, body(period)))
		if r.Code != http.StatusOK || r.Status != "success" {
			t.Fatalf("create with waiting_period %s: %d %s", period, r.Code, r.raw)
		}
		sent[utrOfReply(t, r)] = period
	}
	r := e.a.send("POST", "/api/automations/schedule/create", form("utr", utr, "sender_id", itoa(s.sender), "subject", "Form", "waiting_period", "1",
		"waiting_type", "instantly", "template_id", "2", "preview_img", "02-newsletter.png"))
	sent[utrOfReply(t, r)] = "1"

	listed := map[string]any{}
	for _, m := range schedulesOf(t, e.a, utr) {
		listed[m["utr"].(string)] = m["waiting_period"]
	}
	rows, err := e.svc.Automations.Schedules(context.Background(), e.a.id, utr)
	if err != nil || len(rows) != len(sent) {
		t.Fatalf("stored schedules: %d, %v", len(rows), err)
	}
	for _, row := range rows {
		want := sent[row.Utr]
		if got := listed[row.Utr]; fmt.Sprint(got) != want {
			t.Errorf("schedule %s: listed waiting_period %v, sent %s", row.Utr, got, want)
		}
		var stored int
		if err := e.svc.DB.R.Raw("SELECT waiting_period FROM automation_schedules WHERE utr = ?", row.Utr).Scan(&stored).Error; err != nil {
			t.Fatal(err)
		}
		if strconv.Itoa(stored) != want || row.WaitingType != "instantly" {
			t.Errorf("schedule %s: stored %d %s, sent %s instantly", row.Utr, stored, row.WaitingType, want)
		}
		if w := service.StepWait(&row); w != 0 {
			t.Errorf("schedule %s sent with waiting_period %s waits %v, want no wait", row.Utr, want, w)
		}
	}
}
