package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
)

// This file is the console's route table with roles: every route behind
// the login declares the action it does (service/identity/roles.go), and allow
// checks the logged-in person's role against it before the handler runs.
// Routes open to anyone (login, sign-up, invitations, public pages) are
// declared open. TestRoutesDeclareActions walks the mounted app and fails
// on a route that is neither.

const localActor = "web.actor"

// router registers console routes and remembers what each declares.
type router struct {
	w   *Web
	app *fiber.App
}

func (r router) add(method, path string, action service.Action, handlers ...fiber.Handler) {
	r.w.actions[method+" "+path] = action
	chain := append([]fiber.Handler{r.w.requireLogin, r.w.allow(action)}, handlers...)
	r.app.Add(method, path, chain...)
}

// get mounts a page behind the login; its action is most often ActRead.
func (r router) get(path string, action service.Action, handlers ...fiber.Handler) {
	r.add(fiber.MethodGet, path, action, handlers...)
}

// post mounts a form's target behind the login.
func (r router) post(path string, action service.Action, handlers ...fiber.Handler) {
	r.add(fiber.MethodPost, path, action, handlers...)
}

// open mounts a route anyone may reach (the handler checks what it needs).
func (r router) open(method, path string, handlers ...fiber.Handler) {
	r.w.open[method+" "+path] = true
	r.app.Add(method, path, handlers...)
}

// markOpen declares open every route mounted so far (the recipients'
// pages and webhooks, mounted before the console's middleware).
func (w *Web) markOpen(app *fiber.App) {
	for _, rt := range app.GetRoutes(true) {
		w.open[rt.Method+" "+rt.Path] = true
	}
}

// allow lets a request through when the person's role may do action
// (service.Team.Authorize, which logs a refusal in the audit log), and
// answers 403 with the reason otherwise.
func (w *Web) allow(action service.Action) fiber.Handler {
	return func(c *fiber.Ctx) error {
		a := actor(c)
		if err := w.svc.Team.Authorize(c.UserContext(), a, action, c.Method()+" "+c.Path()); err != nil {
			return err
		}
		return c.Next()
	}
}

// actor is the logged-in person (set by requireLogin).
func actor(c *fiber.Ctx) service.Actor {
	a, _ := c.Locals(localActor).(service.Actor)
	return a
}

// actorOf is who acts: the owner of u, or the member m of u's account.
func actorOf(u *models.User, m *models.Member) service.Actor {
	if m == nil {
		return service.Actor{AccountID: u.ID, Role: service.RoleOwner, Name: u.Name + " <" + u.Email + ">"}
	}
	return service.Actor{AccountID: u.ID, MemberID: m.ID, Role: service.Role(m.Role), Name: m.Name + " <" + m.Email + ">"}
}

// can reports whether the logged-in person may do action (pages hide what
// it may not).
func can(c *fiber.Ctx, action service.Action) bool { return service.Can(actor(c).Role, action) }

// permissionsOf is what the pages of role may show: the same answer
// allow gives (service.Can), and the reason its refusal would say.
func permissionsOf(role service.Role) views.Permissions {
	return views.Permissions{
		Can: func(a service.Action) bool { return service.Can(role, a) },
		Why: func(a service.Action) string { return service.Forbidden(role, a).Message },
	}
}

// RouteAction says what the console route that serves method and path (a
// concrete address, such as /contacts/7/delete) declares: its action, or
// "" for a route open to anyone; found is false when no route serves it.
// Where patterns overlap (/single-sends/draft and /single-sends/:utr),
// the one with fewer parameters wins, as Fiber's order of mounting has it.
// Tests check with it that every button a page shows a role points at a
// route that role may use.
func (w *Web) RouteAction(method, path string) (action service.Action, found bool) {
	best := -1
	consider := func(key string, act service.Action) {
		if n := routeMatches(key, method, path); n >= 0 && (best < 0 || n < best) {
			best, action, found = n, act, true
		}
	}
	for key := range w.open {
		consider(key, "")
	}
	for key, act := range w.actions {
		consider(key, act)
	}
	return action, found
}

// routeMatches reports how many parameters of key ("METHOD /pattern",
// Fiber's syntax with :params) it takes to serve method and path, or -1
// when key does not serve them.
func routeMatches(key, method, path string) int {
	m, pattern, ok := strings.Cut(key, " ")
	if !ok || m != method {
		return -1
	}
	ps, xs := strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) != len(xs) {
		return -1
	}
	n := 0
	for i, p := range ps {
		switch {
		case strings.HasPrefix(p, ":"):
			if xs[i] == "" {
				return -1
			}
			n++
		case p != xs[i]:
			return -1
		}
	}
	return n
}
