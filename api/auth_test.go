package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"

	"herald/api"
	"herald/dbtest"
)

// routes are every endpoint of this API, for the checks that apply to all.
var routes = []struct{ method, path string }{
	{"GET", "/api/global-unsubscribes"},
	{"POST", "/api/global-unsubscribes/save"},
	{"DELETE", "/api/global-unsubscribes/delete?id=1"},
	{"POST", "/api/global-unsubscribes/bulk-delete"},
	{"GET", "/api/unsubscribes-groups"},
	{"POST", "/api/unsubscribes-groups/save"},
	{"GET", "/api/unsubscribes-groups/details?id=1"},
	{"POST", "/api/unsubscribes-groups/update?id=1"},
	{"POST", "/api/unsubscribes-groups/manually-add"},
	{"GET", "/api/unsubscribes-groups/recipients-list?groupId=1"},
	{"DELETE", "/api/unsubscribes-groups/recipients-delete?id=1"},
	{"POST", "/api/unsubscribes-groups/recipients-bulk-delete"},
	{"GET", "/api/notification-recipients"},
	{"POST", "/api/notification-recipient/save"},
	{"DELETE", "/api/notification-recipient/delete?id=1"},
	{"POST", "/api/notification-recipient/bulk-delete"},
	{"GET", "/api/contacts-type"},
	{"POST", "/api/contacts-type/add"},
	{"GET", "/api/contacts-type/view?contact_type_id=1"},
	{"POST", "/api/contacts-type/update"},
	{"DELETE", "/api/contacts-type/delete?contact_type_id=1"},
	{"GET", "/api/reserve-fields"},
	{"GET", "/api/custom-fields"},
	{"POST", "/api/custom-fields/save"},
	{"DELETE", "/api/custom-fields/delete?id=1"},
	{"GET", "/api/contacts/list"},
	{"POST", "/api/contacts/add"},
	{"GET", "/api/contacts/csv-sample/download"},
	{"POST", "/api/contacts/upload-csv"},
	{"GET", "/api/contacts/details?contact_id=1"},
	{"POST", "/api/contacts/update"},
	{"DELETE", "/api/contacts/delete?contact_id=1"},
	{"POST", "/api/contacts/bulk-delete"},
	{"GET", "/api/segment/list"},
	{"POST", "/api/segment/store"},
	{"POST", "/api/segment/update"},
	{"DELETE", "/api/segment/delete?segment_id=1"},
	{"GET", "/api/segment/email/list?segment_id=1"},
	{"POST", "/api/segment/email/store"},
	{"DELETE", "/api/segment/email/delete?segment_recipient_id=1"},
	{"GET", "/api/get/country-state-city"},
	{"GET", "/api/senders"},
	{"POST", "/api/senders"},
	{"POST", "/api/sender/save"},
	{"GET", "/api/sender/details?sender_id=1"},
	{"POST", "/api/sender/update"},
	{"DELETE", "/api/sender/delete?sender_id=1"},
	{"GET", "/api/sender/resend-mail?sender_id=1"},
	{"GET", "/api/get-dynamic/content"},
	{"GET", "/api/get-design/template"},
	{"GET", "/api/single-send/list"},
	{"POST", "/api/single/send/create"},
	{"POST", "/api/single/send/duplicate?utr=x"},
	{"GET", "/api/single/send/duplicate?utr=x"},
	{"GET", "/api/single-send/details?utr=x"},
	{"POST", "/api/single/send/update"},
	{"DELETE", "/api/single/send/delete?utr=x"},
	{"POST", "/api/single/send/bulk-delete"},
	{"POST", "/api/single/send/resend"},
	{"GET", "/api/automations"},
	{"POST", "/api/automations/create"},
	{"GET", "/api/automations/duplicate?utr=x"},
	{"GET", "/api/automations/details?utr=x"},
	{"GET", "/api/automations/pause?utr=x"},
	{"GET", "/api/automations/set-live?utr=x"},
	{"DELETE", "/api/automations/delete?utr=x"},
	{"POST", "/api/automations/bulk-delete"},
	{"GET", "/api/automations/schedule?utr=x"},
	{"POST", "/api/automations/schedule/create"},
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			r := do(t, e.app, rt.method, rt.path, nil, nil)
			if r.Code != http.StatusUnauthorized {
				t.Fatalf("no keys: want 401, got %d %s", r.Code, r.raw)
			}
			want := map[string][]string{
				"PublicKey": {"The public key field is required."},
				"SecretKey": {"The secret key field is required."},
			}
			got := r.fieldErrors()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("no keys: want %v, got %s", want, r.Errors)
			}

			r = do(t, e.app, rt.method, rt.path, nil, map[string]string{"PublicKey": e.a.keys.PublicKey})
			if got := r.fieldErrors(); r.Code != 401 || len(got) != 1 || got["SecretKey"][0] != "The secret key field is required." {
				t.Fatalf("no secret key: got %d %s", r.Code, r.raw)
			}
			r = do(t, e.app, rt.method, rt.path, nil, map[string]string{"SecretKey": e.a.keys.SecretKey})
			if got := r.fieldErrors(); r.Code != 401 || len(got) != 1 || got["PublicKey"][0] != "The public key field is required." {
				t.Fatalf("no public key: got %d %s", r.Code, r.raw)
			}

			for name, h := range map[string]map[string]string{
				"wrong secret":        {"PublicKey": e.a.keys.PublicKey, "SecretKey": e.a.keys.SecretKey + "x"},
				"wrong public":        {"PublicKey": "pk_nobody", "SecretKey": e.a.keys.SecretKey},
				"another's secret":    {"PublicKey": e.a.keys.PublicKey, "SecretKey": e.b.keys.SecretKey},
				"secret of the other": {"PublicKey": e.b.keys.PublicKey, "SecretKey": e.a.keys.SecretKey},
			} {
				r = do(t, e.app, rt.method, rt.path, nil, h)
				if r.Code != http.StatusUnauthorized || r.text(r.Errors) != "Invalid PublicKey or SecretKey." {
					t.Fatalf("%s: want 401 Invalid PublicKey or SecretKey., got %d %s", name, r.Code, r.raw)
				}
			}
		})
	}
}

func TestKeyCacheStillChecksSecret(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// First call caches the key; a wrong secret must still fail after it.
	expectList := e.a.send("GET", "/api/global-unsubscribes", nil)
	if expectList.Code != 200 {
		t.Fatal(expectList.raw)
	}
	r := do(t, e.app, "GET", "/api/global-unsubscribes", nil, map[string]string{"PublicKey": e.a.keys.PublicKey, "SecretKey": "sk_wrong"})
	if r.Code != 401 {
		t.Fatalf("cached key accepted a wrong secret: %d", r.Code)
	}
}

func TestRotatedKeysStopWorking(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if r := e.a.send("GET", "/api/global-unsubscribes", nil); r.Code != 200 {
		t.Fatal(r.raw)
	}
	newKeys, err := e.svc.Accounts.RotateKeys(t.Context(), e.a.id)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.a.send("GET", "/api/global-unsubscribes", nil); r.Code != 401 {
		t.Fatalf("old keys still work after rotation: %d", r.Code)
	}
	e.a.keys = newKeys
	if r := e.a.send("GET", "/api/global-unsubscribes", nil); r.Code != 200 {
		t.Fatalf("new keys refused: %d %s", r.Code, r.raw)
	}
}

func TestRateLimitPerKey(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	app := fiber.New(fiber.Config{ErrorHandler: api.ErrorHandler})
	api.New(svc, api.Options{RatePerSecond: 1}).Mount(app.Group("/api"))
	e := &env{app: app, svc: svc}
	e.a = e.account(t, "a@example.com")
	e.b = e.account(t, "b@example.com")
	// Burst is 2: the third request within the second is refused.
	var last reply
	for i := 0; i < 3; i++ {
		last = e.a.send("GET", "/api/global-unsubscribes", nil)
	}
	if last.Code != http.StatusTooManyRequests || last.Status != "failed" || last.text(last.Errors) != "Too Many Requests" {
		t.Fatalf("want 429 envelope, got %d %s", last.Code, last.raw)
	}
	// Another key has its own budget.
	if r := e.b.send("GET", "/api/global-unsubscribes", nil); r.Code != 200 {
		t.Fatalf("other key limited too: %d", r.Code)
	}
}

func TestUnknownRouteAndMethod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.a.send("GET", "/api/no-such-thing", nil)
	if r.Code != 404 || r.text(r.Errors) != "Not Found" {
		t.Fatalf("unknown route: %d %s", r.Code, r.raw)
	}
	r = e.a.send("PUT", "/api/global-unsubscribes", nil)
	if r.Code != 405 || r.text(r.Errors) != "Method Not Allowed" {
		t.Fatalf("wrong method: %d %s", r.Code, r.raw)
	}
}

func TestMalformedBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, rt := range routes {
		if rt.method != "POST" || rt.path == "/api/contacts/upload-csv" || rt.path == "/api/senders" { // upload: its own tests; the sender list reads no body
			continue
		}
		for name, body := range map[string]rawBody{
			"broken json":                {"application/json", `{"email_address": `},
			"json array":                 {"application/json", `[1,2,3]`},
			"two json values":            {"application/json", `{} {}`},
			"multipart without boundary": {"multipart/form-data", "--x\r\n"},
			"unknown type":               {"text/plain", "hello"},
		} {
			t.Run(rt.path+" "+name, func(t *testing.T) {
				r := e.a.send(rt.method, rt.path, body)
				if r.Code != http.StatusBadRequest || r.Status != "failed" || r.text(r.Errors) == "" {
					t.Fatalf("want 400 failure, got %d %s", r.Code, r.raw)
				}
			})
		}
	}
}

func TestPanicIsEnvelope(t *testing.T) {
	t.Parallel()
	// The recover middleware is wired in cmd/herald; here the error handler
	// alone must turn an unexpected error into a 500 envelope without detail.
	app := fiber.New(fiber.Config{ErrorHandler: api.ErrorHandler})
	app.Get("/api/boom", func(c *fiber.Ctx) error { return fmt.Errorf("secret detail: %s", "stack") })
	req := httptest.NewRequest("GET", "/api/boom", nil)
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	body := string(buf[:n])
	if resp.StatusCode != 500 || body != `{"status":"failed","errors":"Internal Server Error"}` {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
}
