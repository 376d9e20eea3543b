package api_test

import (
	"encoding/json"
	"net/url"
	"testing"

	"herald/service"
)

type eventWebhookRow struct {
	ID      int64    `json:"id"`
	UserID  int64    `json:"user_id"`
	URL     string   `json:"url"`
	Events  []string `json:"events"`
	Enabled int      `json:"enabled"`
	Secret  *string  `json:"secret"`
}

func TestEventWebhooksAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	// Validation, in the envelope.
	expectVAL(t, e.a.send("POST", "/api/event-webhooks/save", url.Values{}), map[string][]string{"url": {"The url field is required."}})
	expectVAL(t, e.a.send("POST", "/api/event-webhooks/save", form("url", "ftp://hooks.example/in")),
		map[string][]string{"url": {"The url must start with http:// or https://."}})

	// Save: message.id and message.secret, the secret shown only here.
	r := e.a.send("POST", "/api/event-webhooks/save", form("url", "https://hooks.example/in", "events[0]", "delivered", "events[1]", "bounce"))
	var saved struct {
		ID     int64    `json:"id"`
		Secret string   `json:"secret"`
		Events []string `json:"events"`
	}
	if r.Code != 200 || r.Status != "success" || json.Unmarshal(r.Message, &saved) != nil || saved.ID == 0 || len(saved.Secret) != 64 ||
		len(saved.Events) != 2 || saved.Events[0] != "delivered" || saved.Events[1] != "bounce" {
		t.Fatalf("save: %d %s", r.Code, r.raw)
	}
	// A JSON body, all events by default, disabled.
	r = e.a.send("POST", "/api/event-webhooks/save", `{"url":"https://hooks.example/all","enabled":false}`)
	if r.Code != 200 {
		t.Fatalf("save JSON: %s", r.raw)
	}

	rows := list[eventWebhookRow](t, e.a.send("GET", "/api/event-webhooks", nil), "eventWebhooks")
	if len(rows) != 2 || rows[0].ID != saved.ID || rows[0].Secret != nil || rows[0].UserID != e.a.id || rows[1].Enabled != 0 || len(rows[1].Events) != len(service.EventNames) {
		t.Fatalf("list: %+v", rows)
	}
	if other := list[eventWebhookRow](t, e.b.send("GET", "/api/event-webhooks", nil), "eventWebhooks"); len(other) != 0 {
		t.Fatalf("b's list: %+v", other)
	}

	// Update: only the keys given.
	expectVAL(t, e.a.send("POST", "/api/event-webhooks/update", form("enabled", "0")), map[string][]string{"id": {"The id field is required."}})
	expectNF(t, e.b.send("POST", "/api/event-webhooks/update", form("id", itoa(saved.ID), "enabled", "0")), "Record Not Found")
	expectVAL(t, e.a.send("POST", "/api/event-webhooks/update", form("id", itoa(saved.ID), "events[0]", "opened")),
		map[string][]string{"events": {"The selected events are invalid (opened); each must be one of: processed, delivered, deferred, bounce, open, click, spam_report, unsubscribe, group_unsubscribe, subscribe, confirm."}})
	expectOK(t, e.a.send("POST", "/api/event-webhooks/update", form("id", itoa(saved.ID), "events[0]", "open", "enabled", "0")), "Updated Successfully")
	rows = list[eventWebhookRow](t, e.a.send("GET", "/api/event-webhooks", nil), "eventWebhooks")
	if rows[0].URL != "https://hooks.example/in" || rows[0].Enabled != 0 || len(rows[0].Events) != 1 || rows[0].Events[0] != "open" {
		t.Fatalf("after update: %+v", rows[0])
	}

	// Delete: another account's id is not found.
	expectNF(t, e.b.send("DELETE", "/api/event-webhooks/delete?id="+itoa(saved.ID), nil), "Record Not Found")
	expectNF(t, e.a.send("DELETE", "/api/event-webhooks/delete?id=x", nil), "Record Not Found")
	expectOK(t, e.a.send("DELETE", "/api/event-webhooks/delete?id="+itoa(saved.ID), nil), "Deleted Successfully")
	if rows = list[eventWebhookRow](t, e.a.send("GET", "/api/event-webhooks", nil), "eventWebhooks"); len(rows) != 1 {
		t.Fatalf("after delete: %+v", rows)
	}
}
