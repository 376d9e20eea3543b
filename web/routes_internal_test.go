package web

import (
	"context"
	"testing"

	"github.com/gofiber/fiber/v2"

	"herald/dbtest"
	"herald/service"
)

// readOnlyPosts are the POST routes that change nothing (live counts,
// the checklist's verdict, a segment builder's conditions), open to
// viewers.
var readOnlyPosts = map[string]bool{
	"/segments/count":         true,
	"/segments/conditions":    true,
	"/single-sends/count":     true,
	"/single-sends/checklist": true,
	"/single-sends/validate":  true, // a dry run: SingleSends.Validate saves nothing
	// A background export writes only its own job row and file: it reads
	// what the streamed CSV routes (ActRead) read, so viewers may start it.
	"/exports/contacts":                    true,
	"/single-sends/:utr/recipients-export": true,
	"/forms/:id/preview":                   true, // the live preview of settings as typed: saves nothing
}

// TestRoutesDeclareActions walks every route mounted on the app: each is
// either open to anyone (declared so) or declares an action of the
// service's role table; a state-changing route never declares ActRead
// unless it is listed as read-only above. Then a table pins the actions
// of the routes that matter most.
func TestRoutesDeclareActions(t *testing.T) {
	t.Parallel()
	w, err := New(context.Background(), dbtest.Service(t), Options{BaseURL: "http://localhost:8080"})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	w.Mount(app)
	n := 0
	for _, rt := range app.GetRoutes(true) {
		if rt.Method == fiber.MethodHead {
			continue // Fiber adds HEAD beside each GET
		}
		key := rt.Method + " " + rt.Path
		if w.open[key] {
			continue
		}
		act, ok := w.actions[key]
		if !ok {
			t.Errorf("%s declares no action (mount it with router.get/post, or router.open)", key)
			continue
		}
		n++
		if !act.Known() {
			t.Errorf("%s declares %q, not in service's table", key, act)
		}
		if rt.Method != fiber.MethodGet && act == service.ActRead && !readOnlyPosts[rt.Path] {
			t.Errorf("%s changes state but declares %q", key, act)
		}
	}
	if n < 100 {
		t.Fatalf("only %d console routes checked", n)
	}

	for _, tc := range []struct {
		route  string
		action service.Action
	}{
		{"POST /single-sends", service.ActSend},
		{"POST /single-sends/:utr", service.ActSend},
		{"POST /single-sends/:utr/resume", service.ActSend},
		{"POST /single-sends/:utr/delete", service.ActSend},
		{"POST /single-sends/test", service.ActPrepare},
		{"GET /single-sends/new", service.ActRead},
		{"POST /automations/:utr/live", service.ActRunAutomation},
		{"POST /automations/:utr/pause", service.ActRunAutomation},
		{"POST /automations/:utr/emails/:email", service.ActPrepare},
		{"POST " + UploadPath, service.ActImport},
		{"POST /contacts", service.ActPrepare},
		{"POST /segments", service.ActPrepare},
		{"POST /contacts/types/:id/delete", service.ActDeleteList},
		{"POST /segments/:id/delete", service.ActDeleteList},
		{"POST /suppressions/global", service.ActSuppressions},
		{"POST /senders", service.ActSenders},
		{"POST /account/keys", service.ActKeys},
		{"POST /dashboard/welcome-keys", service.ActKeys},
		{"POST /account/api-keys", service.ActKeys},
		{"POST /account/api-keys/:id/revoke", service.ActKeys},
		{"POST /account/2fa/enable", service.ActOwnLogin},
		{"POST /account/2fa/recovery-codes", service.ActOwnLogin},
		{"POST /account/password", service.ActOwnLogin},
		{"POST /team/invitations", service.ActTeam},
		{"POST /team/members/:id/delete", service.ActTeam},
		{"GET /team", service.ActTeam},
		{"GET /audit-log", service.ActAudit},
	} {
		if got := w.actions[tc.route]; got != tc.action {
			t.Errorf("%s declares %q, want %q", tc.route, got, tc.action)
		}
	}
	for _, open := range []string{"POST /login", "POST /login/code", "POST /reset/:token", "GET /invitations/:token", "POST /invitations/:token", "POST /logout"} {
		if !w.open[open] {
			t.Errorf("%s is not open", open)
		}
	}
}
