package api_test

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"herald/service"
)

// required is api.md's starred parameters of each POST endpoint (and the
// beyond-the-spec segment/store and segment/update of decisions.md 4);
// nil marks the POST routes that are not VAL endpoints.
var required = map[string][]string{
	"/api/global-unsubscribes/save":                   {"email_address"},
	"/api/global-unsubscribes/bulk-delete":            {"strIds"},
	"/api/unsubscribes-groups/save":                   {"group_name", "description", "is_display"},
	"/api/unsubscribes-groups/update":                 {"group_name", "description", "is_display"}, // its id is a query parameter, not starred
	"/api/unsubscribes-groups/manually-add":           {"unsubscribe_groups_id", "email_address"},
	"/api/unsubscribes-groups/recipients-bulk-delete": {"strIds"},
	"/api/notification-recipient/save":                {"email_address", "email_owner"},
	"/api/notification-recipient/bulk-delete":         {"strIds"},
	"/api/contacts-type/add":                          {"name"},
	"/api/contacts-type/update":                       {"id", "name"},
	"/api/custom-fields/save":                         {"field_name", "field_type"},
	"/api/contacts/add":                               {"contact_type_id", "email", "country"},
	"/api/contacts/upload-csv":                        {"contact_type_id", "file"},
	"/api/contacts/update":                            {"contact_id", "contact_type_id", "email", "country"},
	"/api/contacts/bulk-delete":                       {"strIds"},
	"/api/contacts/tags/add":                          {"emails", "tags"}, // emails, or ids
	"/api/contacts/tags/remove":                       {"emails", "tags"},
	"/api/senders":                                    nil, // the list, by POST too
	"/api/sender/save":                                {"from_name", "from_email", "reply_to_email", "country_id", "company_address", "nickname"},
	"/api/sender/update":                              {"sender_id", "from_name", "from_email", "reply_to_email", "country_id", "company_address", "nickname"},
	"/api/segment/store":                              {"contact_type_id", "segment_name"},
	"/api/segment/update":                             {"segment_id", "segment_name"},
	"/api/segment/email/store":                        {"segment_id", "first_name", "last_name", "email"},
	"/api/single/send/create":                         sendBody,
	"/api/single/send/duplicate":                      nil, // utr in the query: NF
	"/api/single/send/update":                         append([]string{"utr"}, sendBody...),
	"/api/single/send/bulk-delete":                    {"strIds"},
	"/api/single/send/resend":                         {"utr", "subject"},
	"/api/automations/create":                         {"type", "unsubscribe_group_id"},
	"/api/automations/bulk-delete":                    {"strIds"},
	"/api/automations/schedule/create":                {"utr", "sender_id", "subject", "waiting_period", "waiting_type", "template_id", "preview_img"},
	"/api/automations/trigger":                        {"automation", "email"},
	"/api/event-webhooks/save":                        {"url"},
	"/api/event-webhooks/update":                      {"id"},
	"/api/forms/save":                                 {"name", "contact_type_id"},
	"/api/forms/update":                               {"id", "name", "contact_type_id"},
	"/api/contacts/erase":                             {"email"},
	"/api/mail/send":                                  {"sender_id", "to", "subject"},
	"/api/senders/warmup":                             {"domain", "start", "growth", "until"},
	"/api/org-profile":                                nil, // every field optional: a save replaces the profile
	"/api/blocks":                                     {"name", "html"},
}

var sendBody = []string{"template_id", "sender_id", "unsubscribe_group_id", "single_send_name", "subject", "preheader", "recipient_id", "schedule_type"}

// requiredText is api.md's message for a missing parameter.
func requiredText(field string) string {
	if field == "email_owner" {
		return "The name field is required" // api.md, Errors: the documented text
	}
	return "The " + service.Label(field) + " field is required."
}

// TestEmptyBodyListsEveryRequiredParameter posts nothing, in each encoding,
// to every POST endpoint of the route table: a VAL endpoint answers 422
// with exactly its starred parameters, each with its message (api.md,
// Abbreviations: VAL), updates included.
func TestEmptyBodyListsEveryRequiredParameter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seen := map[string]bool{}
	for _, rt := range e.app.GetRoutes(true) {
		if rt.Method != http.MethodPost || !strings.HasPrefix(rt.Path, "/api/") {
			continue
		}
		want, ok := required[rt.Path]
		if !ok {
			t.Errorf("POST %s is not in the table of required parameters: add it", rt.Path)
			continue
		}
		seen[rt.Path] = true
		if want == nil {
			continue
		}
		for _, body := range []any{nil, "{}", form(), rawBody{"multipart/form-data; boundary=x", "--x--\r\n"}} {
			r := e.a.send(http.MethodPost, rt.Path, body)
			exp := map[string][]string{}
			for _, f := range want {
				exp[f] = []string{requiredText(f)}
			}
			if r.Code != http.StatusUnprocessableEntity {
				t.Errorf("POST %s (%T): %d %s, want 422", rt.Path, body, r.Code, r.raw)
				continue
			}
			got := r.fieldErrors()
			keys := func(m map[string][]string) string {
				var k []string
				for f := range m {
					k = append(k, f)
				}
				sort.Strings(k)
				return strings.Join(k, ",")
			}
			if keys(got) != keys(exp) {
				t.Errorf("POST %s (%T): errors keyed %s, want %s", rt.Path, body, keys(got), keys(exp))
				continue
			}
			for f, msgs := range exp {
				if strings.Join(got[f], "|") != msgs[0] {
					t.Errorf("POST %s: errors[%s] = %q, want %q", rt.Path, f, got[f], msgs[0])
				}
			}
		}
	}
	for path := range required {
		if !seen[path] {
			t.Errorf("%s is in the table but not a POST route", path)
		}
	}
}

// TestUpdateValidatesBeforeNotFound: an update naming no record, or an
// unknown one, answers VAL while required parameters are missing (the id
// among them when absent), and NF only once everything required is there.
func TestUpdateValidatesBeforeNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	utr := utrOfReply(t, e.a.send("POST", "/api/automations/create", form("type", "custom", "unsubscribe_group_id", "0")))
	schedule := map[string]any{"sender_id": itoa(s.sender), "subject": "Hi", "waiting_period": "0", "waiting_type": "instantly",
		"template_id": "2", "preview_img": "02-newsletter.png"}
	with := func(m map[string]any, kv ...any) string {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return jsonBody(t, out)
	}
	for _, tc := range []struct {
		name, path string
		body       string
		want       map[string][]string // nil: NF
		nf         string
	}{
		{"send: subject missing, unknown utr", "/api/single/send/update", jsonBody(t, s.body("utr", "no-such-utr", "subject", "<delete>")),
			map[string][]string{"subject": {"The subject field is required."}}, ""},
		{"send: utr and subject missing", "/api/single/send/update", jsonBody(t, s.body("subject", "")),
			map[string][]string{"utr": {"The utr field is required."}, "subject": {"The subject field is required."}}, ""},
		{"send: complete, unknown utr", "/api/single/send/update", jsonBody(t, s.body("utr", "no-such-utr")), nil, "Record Not Found"},
		{"schedule: subject missing, unknown automation", "/api/automations/schedule/create", with(schedule, "utr", "nope", "subject", ""),
			map[string][]string{"subject": {"The subject field is required."}}, ""},
		{"schedule: utr missing", "/api/automations/schedule/create", with(schedule),
			map[string][]string{"utr": {"The utr field is required."}}, ""},
		{"schedule: complete, unknown automation", "/api/automations/schedule/create", with(schedule, "utr", "nope"), nil, "Record not found"},
		{"contact type: name missing, unknown id", "/api/contacts-type/update", `{"id":"999999"}`,
			map[string][]string{"name": {"The name field is required."}}, ""},
		{"contact type: complete, unknown id", "/api/contacts-type/update", `{"id":"999999","name":"Buyers"}`, nil, "Record Not Found"},
		{"contact type: complete, malformed id", "/api/contacts-type/update", `{"id":"abc","name":"Buyers"}`, nil, "Record Not Found"},
		{"group: unknown id, fields missing", "/api/unsubscribes-groups/update?id=999999", `{"group_name":"G"}`,
			map[string][]string{"description": {"The description field is required."}, "is_display": {"The is display field is required."}}, ""},
		{"group: complete, unknown id", "/api/unsubscribes-groups/update?id=999999", `{"group_name":"G","description":"D","is_display":"1"}`, nil, "Record Not Found"},
		{"group: complete, no id", "/api/unsubscribes-groups/update", `{"group_name":"G","description":"D","is_display":"1"}`, nil, "Record Not Found"},
		{"segment: unknown id, name missing", "/api/segment/update", `{"segment_id":"999999"}`,
			map[string][]string{"segment_name": {"The segment name field is required."}}, ""},
		{"segment: complete, unknown id", "/api/segment/update", `{"segment_id":"999999","segment_name":"S"}`, nil, "Record Not Found"},
		{"contact: unknown id, email missing", "/api/contacts/update", `{"contact_id":"999999","contact_type_id":"` + itoa(s.ctype) + `","country":"840"}`,
			map[string][]string{"email": {"The email field is required."}}, ""},
		{"contact: complete, unknown id", "/api/contacts/update", `{"contact_id":"999999","contact_type_id":"` + itoa(s.ctype) + `","country":"840","email":"a@example.com"}`, nil, "Record Not Found"},
		{"sender: unknown id, name missing", "/api/sender/update", jsonBody(t, map[string]any{"sender_id": "999999", "from_email": "a@example.com",
			"reply_to_email": "a@example.com", "country_id": "840", "company_address": "x", "nickname": "n"}),
			map[string][]string{"from_name": {"The from name field is required."}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.a.send("POST", tc.path, tc.body)
			if tc.want == nil {
				expectNF(t, r, tc.nf)
				return
			}
			expectVAL(t, r, tc.want)
		})
	}
	_ = utr
}

// TestNotFoundTexts checks the NF text of every endpoint that addresses a
// record, against api.md's Errors table: `Record not found` for the
// segment recipient list, single send duplicate/details/delete/bulk
// delete, automation pause/delete/bulk delete/schedule (its list and its
// create); `Record Not Found` everywhere else, single send update
// included.
func TestNotFoundTexts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	const lower, upper = "Record not found", "Record Not Found"
	sendUpdate := jsonBody(t, s.body("utr", "00000000-0000-4000-8000-000000000000"))
	schedule := jsonBody(t, map[string]any{"utr": "00000000-0000-4000-8000-000000000000", "sender_id": itoa(s.sender), "subject": "Hi",
		"waiting_period": "0", "waiting_type": "instantly", "template_id": "2", "preview_img": "02-newsletter.png"})
	cases := []struct {
		method, path string
		body         any
		text         string
	}{
		{"DELETE", "/api/global-unsubscribes/delete?id=999999", nil, upper},
		{"POST", "/api/global-unsubscribes/bulk-delete", form("strIds[]", "999999"), upper},
		{"GET", "/api/unsubscribes-groups/details?id=999999", nil, upper},
		{"POST", "/api/unsubscribes-groups/update?id=999999", form("group_name", "G", "description", "D", "is_display", "1"), upper},
		{"POST", "/api/unsubscribes-groups/manually-add", form("unsubscribe_groups_id", "999999", "email_address", "a@example.com"), upper},
		{"GET", "/api/unsubscribes-groups/recipients-list?groupId=999999", nil, upper},
		{"DELETE", "/api/unsubscribes-groups/recipients-delete?id=999999", nil, upper},
		{"POST", "/api/unsubscribes-groups/recipients-bulk-delete", form("strIds[]", "999999"), upper},
		{"DELETE", "/api/notification-recipient/delete?id=999999", nil, upper},
		{"POST", "/api/notification-recipient/bulk-delete", form("strIds[]", "999999"), upper},
		{"GET", "/api/contacts-type/view?contact_type_id=999999", nil, upper},
		{"POST", "/api/contacts-type/update", form("id", "999999", "name", "Buyers"), upper},
		{"DELETE", "/api/contacts-type/delete?contact_type_id=999999", nil, upper},
		{"DELETE", "/api/custom-fields/delete?id=999999", nil, upper},
		{"GET", "/api/contacts/details?contact_id=999999", nil, upper},
		{"POST", "/api/contacts/update", form("contact_id", "999999", "contact_type_id", itoa(s.ctype), "email", "a@example.com", "country", "840"), upper},
		{"DELETE", "/api/contacts/delete?contact_id=999999", nil, upper},
		{"POST", "/api/contacts/bulk-delete", form("strIds[]", "999999"), upper},
		{"POST", "/api/contacts/tags/add", form("ids[]", "999999", "tags[]", "vip"), upper},
		{"POST", "/api/contacts/tags/remove", form("emails[]", "nobody@example.com", "tags[]", "vip"), upper},
		{"POST", "/api/contacts/upload-csv", rawBody{"multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"contact_type_id\"\r\n\r\n999999\r\n" +
			"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"c.csv\"\r\nContent-Type: text/csv\r\n\r\nemail\r\na@example.com\r\n--b--\r\n"}, upper},
		{"GET", "/api/sender/details?sender_id=999999", nil, upper},
		{"POST", "/api/sender/update", form("sender_id", "999999", "from_name", "A", "from_email", "a@example.com", "reply_to_email", "a@example.com",
			"country_id", "840", "company_address", "x", "nickname", "n"), upper},
		{"DELETE", "/api/sender/delete?sender_id=999999", nil, upper},
		{"GET", "/api/sender/resend-mail?sender_id=999999", nil, upper},
		{"POST", "/api/segment/update", form("segment_id", "999999", "segment_name", "S"), upper},
		{"DELETE", "/api/segment/delete?segment_id=999999", nil, upper},
		{"GET", "/api/segment/email/list?segment_id=999999", nil, lower},
		{"POST", "/api/segment/email/store", form("segment_id", "999999", "first_name", "A", "last_name", "B", "email", "a@example.com"), upper},
		{"DELETE", "/api/segment/email/delete?segment_recipient_id=999999", nil, upper},
		{"POST", "/api/single/send/duplicate?utr=nope", nil, lower},
		{"GET", "/api/single/send/duplicate?utr=nope", nil, lower},
		{"GET", "/api/single-send/details?utr=nope", nil, lower},
		{"GET", "/api/single-send/report?utr=nope", nil, lower},
		{"POST", "/api/single/send/update", sendUpdate, upper},
		{"DELETE", "/api/single/send/delete?utr=nope", nil, lower},
		{"POST", "/api/single/send/bulk-delete", form("strIds[]", "nope"), lower},
		{"POST", "/api/single/send/resend", form("utr", "nope", "subject", "Again", "wait_days", "3"), upper},
		{"GET", "/api/automations", nil, upper}, // an account without automations (api.md, Errors)
		{"GET", "/api/automations/duplicate?utr=nope", nil, upper},
		{"GET", "/api/automations/details?utr=nope", nil, upper},
		{"GET", "/api/automations/pause?utr=nope", nil, lower},
		{"GET", "/api/automations/set-live?utr=nope", nil, upper},
		{"DELETE", "/api/automations/delete?utr=nope", nil, lower},
		{"POST", "/api/automations/bulk-delete", form("strIds[]", "nope"), lower},
		{"GET", "/api/automations/schedule?utr=nope", nil, lower},
		{"POST", "/api/automations/schedule/create", schedule, lower},
		{"POST", "/api/automations/trigger", form("automation", "nope", "email", "a@example.com"), lower},
		{"POST", "/api/event-webhooks/update", form("id", "999999", "enabled", "0"), upper},
		{"DELETE", "/api/event-webhooks/delete?id=999999", nil, upper},
		{"GET", "/api/contacts/export?contact_type_id=999999", nil, upper},
		{"POST", "/api/forms/save", form("name", "F", "contact_type_id", "999999"), upper},
		{"POST", "/api/forms/update", form("id", "999999", "name", "F", "contact_type_id", itoa(s.ctype)), upper},
		{"DELETE", "/api/forms/delete?id=999999", nil, upper},
		{"DELETE", "/api/senders/warmup?domain=nope.example.com", nil, "The domain has no warm-up plan."},
		{"DELETE", "/api/blocks/delete?id=999999", nil, upper},
	}
	// Every route is either above or addresses no record.
	noRecord := map[string]bool{}
	for _, p := range []string{"global-unsubscribes", "global-unsubscribes/save", "unsubscribes-groups", "unsubscribes-groups/save",
		"notification-recipients", "notification-recipient/save", "contacts-type", "contacts-type/add", "reserve-fields", "custom-fields",
		"custom-fields/save", "contacts/list", "contacts/add", "contacts/csv-sample/download", "get/country-state-city", "senders", "sender/save",
		"get-dynamic/content", "get-design/template", "segment/list", "segment/store", "single-send/list", "single/send/create", "automations/create",
		"event-webhooks", "event-webhooks/save", "openapi.json", "archive",
		"contacts/privacy-export", "contacts/erase", "forms",
		"mail/send", "org-profile", "blocks",
		"senders/warmup"} { // privacy requests name an address, not a record; a plan is named by its domain (its DELETE is above)
		noRecord["/api/"+p] = true
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.method+" "+strings.SplitN(tc.path, "?", 2)[0]] = true
	}
	for _, rt := range e.app.GetRoutes(true) {
		if strings.HasPrefix(rt.Path, "/api/") && rt.Method != http.MethodHead && !noRecord[rt.Path] && !covered[rt.Method+" "+rt.Path] {
			t.Errorf("%s %s: no NF case", rt.Method, rt.Path)
		}
	}
	for _, tc := range cases {
		r := e.a.send(tc.method, tc.path, tc.body)
		if r.Code != http.StatusNotFound || r.text(r.Errors) != tc.text {
			t.Errorf("%s %s: %d %s, want 404 %q", tc.method, tc.path, r.Code, r.raw, tc.text)
		}
	}
}

// TestNULIsRefused: U+0000 is valid UTF-8, but PostgreSQL's text cannot
// hold it: a single send, automation or automation email with one in a
// text it stores, or a utr holding one, answered 500 there (found by
// FuzzAPI's seeds on PostgreSQL) while SQLite stored it. Such text is
// refused (422) on both databases, in every encoding, and a utr holding
// one is not found.
func TestNULIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	for field, value := range map[string]string{"single_send_name": "N\x00", "preheader": "P\x00", "template_html": "<p>\x00</p>"} {
		want := map[string][]string{field: {"The " + service.Label(field) + " must not contain a NUL character."}}
		expectVAL(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body(field, value))), want)
		b := url.Values{}
		for k, v := range s.body(field, value) {
			switch v := v.(type) {
			case string:
				b.Set(k, v)
			case []string:
				b[k+"[]"] = v
			}
		}
		expectVAL(t, e.a.send("POST", "/api/single/send/create", b), want)
	}
	expectVAL(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body("template_html", "", "template_json", `{"html":"<p>\u0000</p>"}`))),
		map[string][]string{"template_html": {"The template html must not contain a NUL character."}})
	expectVAL(t, e.a.send("POST", "/api/automations/create", form("type", "custom", "unsubscribe_group_id", "0", "automation_name", "A\x00")),
		map[string][]string{"automation_name": {"The automation name must not contain a NUL character."}})
	utr := utrOfReply(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body())))
	auto := utrOfReply(t, e.a.send("POST", "/api/automations/create", form("type", "custom", "unsubscribe_group_id", "0")))
	expectVAL(t, e.a.send("POST", "/api/automations/schedule/create", form("utr", auto, "sender_id", itoa(s.sender), "subject", "S",
		"waiting_period", "0", "waiting_type", "instantly", "template_id", "2", "preview_img", "x\x00.png")),
		map[string][]string{"preview_img": {"The preview img must not contain a NUL character."}})
	if got := schedulesOf(t, e.a, auto); len(got) != 0 {
		t.Fatalf("stored: %v", got)
	}
	expectNF(t, e.a.send("GET", "/api/single-send/details?utr="+utr+"%00", nil), "Record not found")
	expectNF(t, e.a.send("GET", "/api/automations/details?utr="+auto+"%00", nil), "Record Not Found")
	expectNF(t, e.a.send("POST", "/api/single/send/bulk-delete", `{"strIds":["`+utr+`\u0000"]}`), "Record not found")
	expectNF(t, e.a.send("POST", "/api/automations/bulk-delete", form("strIds[]", auto+"\x00")), "Record not found")
	expectNF(t, e.a.send("POST", "/api/single/send/update", jsonBody(t, s.body("utr", utr+"\x00"))), "Record Not Found")
	// A search holding one (every list: it answered 500 on PostgreSQL).
	for _, q := range []string{"/api/single-send/list", "/api/automations", "/api/contacts/list", "/api/unsubscribes-groups", "/api/segment/list",
		"/api/senders", "/api/contacts-type", "/api/global-unsubscribes", "/api/notification-recipients"} {
		if r := e.a.send("GET", q+"?search=%00", nil); r.Code != http.StatusOK {
			t.Fatalf("%s?search=%%00: %d %s", q, r.Code, r.raw)
		}
	}
}
