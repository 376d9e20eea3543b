package web

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/auth"
)

// root sends a logged-in person to the dashboard, anyone else to login.
func (w *Web) root(c *fiber.Ctx) error {
	if sess(c).accountID() != 0 {
		return c.Redirect("/dashboard", fiber.StatusSeeOther)
	}
	return c.Redirect("/login", fiber.StatusSeeOther)
}

// requireLogin lets through a request of a logged-in account (whose
// record it puts in Locals) and sends anyone else to the login page:
// htmx with HX-Redirect, a browser with a redirect that comes back here.
func (w *Web) requireLogin(c *fiber.Ctx) error {
	s := sess(c)
	if id := s.accountID(); id != 0 {
		if _, done := c.Locals(localActor).(service.Actor); done {
			return c.Next() // checked already on this request
		}
		u, err := w.svc.Accounts.Get(c.UserContext(), id)
		var m *models.Member
		if err == nil && s.live.MemberID != 0 {
			// The member's row is read on every request: a removal or a
			// role change takes effect at once on every process.
			m, err = w.svc.Team.Member(c.UserContext(), id, s.live.MemberID)
		}
		if err == nil {
			a := actorOf(u, m)
			c.Locals(localUser, u)
			c.Locals(localMember, m)
			c.Locals(localActor, a)
			c.Locals("account", u.ID) // logged by the request log
			c.SetUserContext(views.WithPermissions(service.WithActor(c.UserContext(), a), permissionsOf(a.Role)))
			return c.Next()
		}
		if !service.IsNotFound(err) {
			return err
		}
		// The account or the member is gone.
		if err := w.svc.Sessions.End(c.UserContext(), s.str(keySession)); err != nil {
			return err
		}
		s.logout()
	}
	to := "/login"
	if c.Method() == fiber.MethodGet && c.Path() != "/dashboard" {
		to += "?next=" + url.QueryEscape(c.OriginalURL())
	}
	if c.Get("HX-Request") == "true" {
		c.Set("HX-Redirect", to)
		return c.SendStatus(fiber.StatusUnauthorized)
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}

// safeNext keeps a return address only when it is a path of this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") ||
		strings.ContainsAny(next, "\r\n\t") {
		return ""
	}
	return next
}

// formValue reads a form field (or query parameter) as a string of its
// own: Fiber reuses the bytes after the handler.
func formValue(c *fiber.Ctx, name string) string { return strings.Clone(c.FormValue(name)) }

// startSession logs a login (the account's owner or a member) in on a
// fresh session: a new server-side session (so a session id planted
// before login is worthless), a new cookie session and CSRF token. The
// session the browser had is ended.
func (w *Web) startSession(c *fiber.Ctx, id service.Who) (*session, error) {
	s := sess(c)
	if err := w.svc.Sessions.End(c.UserContext(), s.str(keySession)); err != nil {
		return nil, err
	}
	token, err := w.svc.Sessions.StartMember(c.UserContext(), id.AccountID, id.MemberID)
	if err != nil {
		return nil, err
	}
	s.login(token)
	csrfToken(c, s)
	return s, nil
}

func (w *Web) loginPage(c *fiber.Ctx) error {
	if sess(c).accountID() != 0 {
		return c.Redirect("/dashboard", fiber.StatusSeeOther)
	}
	f := auth.LoginForm{Next: safeNext(c.Query("next")), CSRF: csrf(c), SignupOpen: w.svc.Accounts.SignupOpen()}
	return page(c, fiber.StatusOK, "Log in", "", auth.Login(f))
}

// login checks the password; a login (the owner's or a member's) with
// two-factor login on goes on
// to the code step (loginCode) before any session starts. The service slows failures down per address
// and per client IP (429 with Retry-After while a delay runs); authLimit
// caps the tries of one IP a minute.
func (w *Web) login(c *fiber.Ctx) error {
	f := auth.LoginForm{Email: formValue(c, "email"), Next: safeNext(formValue(c, "next")), CSRF: csrf(c), SignupOpen: w.svc.Accounts.SignupOpen()}
	u, m, err := w.svc.Accounts.SignIn(c.UserContext(), service.LoginInput{
		Email: f.Email, Password: c.FormValue("password"), IP: w.clientIP(c), Known: sess(c).knows(f.Email),
	})
	if err != nil {
		switch {
		case isValidation(err):
			f.Errors = fieldErrors(err)
		case service.ErrorCode(err) == service.CodeRateLimited:
			_, f.Alert = describe(fiber.StatusTooManyRequests, err)
			setRetryAfter(c, err)
		default:
			return err
		}
		return page(c, statusOf(err), "Log in", "", auth.Login(f))
	}
	email := u.Email
	if m != nil {
		email = m.Email
	}
	if service.TwoFactorOn(u, m) {
		return w.askCode(c, service.WhoOf(u, m), email, f.Next)
	}
	s, err := w.startSession(c, service.WhoOf(u, m))
	if err != nil {
		return err
	}
	s.remember(email)
	to := f.Next
	if to == "" {
		to = "/dashboard"
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}

// setRetryAfter tells a refused client when to come back.
func setRetryAfter(c *fiber.Ctx, err error) {
	if d := service.RetryAfter(err); d > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(d/time.Second)))
	}
}

func (w *Web) signupPage(c *fiber.Ctx) error {
	if sess(c).accountID() != 0 {
		return c.Redirect("/dashboard", fiber.StatusSeeOther)
	}
	return page(c, fiber.StatusOK, "Sign up", "", auth.Signup(auth.SignupForm{CSRF: csrf(c)}))
}

// signup opens the first account of a new server at once (logs it in and
// shows its keys once); any later sign-up answers "check your inbox",
// the same for a free and a taken address (service.Accounts.SignUp).
func (w *Web) signup(c *fiber.Ctx) error {
	in := service.AccountInput{Name: formValue(c, "name"), Email: formValue(c, "email"), Password: formValue(c, "password")}
	res, err := w.svc.Accounts.SignUp(c.UserContext(), in)
	if isValidation(err) {
		f := auth.SignupForm{Name: in.Name, Email: in.Email, Errors: fieldErrors(err), CSRF: csrf(c)}
		return page(c, fiber.StatusUnprocessableEntity, "Sign up", "", auth.Signup(f))
	}
	if err != nil {
		return err
	}
	if res.User == nil {
		return page(c, fiber.StatusOK, "Check your inbox", "", auth.SignupSent(res.Email))
	}
	return w.welcome(c, res.User, res.Keys)
}

// welcome logs a new account in and starts it on the dashboard, whose
// first screen shows its keys until the person says they are saved.
func (w *Web) welcome(c *fiber.Ctx, u *models.User, keys service.Keys) error {
	s, err := w.startSession(c, service.Owner(u.ID))
	if err != nil {
		return err
	}
	s.remember(u.Email)
	s.set(keyPublicKey, keys.PublicKey)
	s.set(keySecretKey, keys.SecretKey)
	s.set(keyKeysNew, true)
	return c.Redirect("/dashboard", fiber.StatusSeeOther)
}

// confirmSignupPage is the mailed link: a page with a button, since mail
// gateways open (GET) links to scan them. Nothing changes here.
func (w *Web) confirmSignupPage(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	p, err := w.svc.Accounts.PendingSignUp(c.UserContext(), token)
	if service.IsNotFound(err) {
		return w.signupLinkGone(c, fiber.StatusNotFound, err)
	}
	if err != nil {
		return err
	}
	f := auth.ConfirmForm{Name: p.Name, Email: p.Email, Action: "/signup/confirm/" + url.PathEscape(token), CSRF: csrf(c)}
	return page(c, fiber.StatusOK, "Finish signing up", "", auth.SignupConfirm(f))
}

// confirmSignup opens the pending account, logs it in and starts it on
// the dashboard with its keys, as the immediate sign-up does.
func (w *Web) confirmSignup(c *fiber.Ctx) error {
	u, keys, err := w.svc.Accounts.FinishSignUp(c.UserContext(), strings.Clone(c.Params("token")))
	switch service.ErrorCode(err) {
	case service.CodeNotFound:
		return w.signupLinkGone(c, fiber.StatusNotFound, err)
	case service.CodeConflict:
		return w.signupLinkGone(c, fiber.StatusConflict, err)
	}
	if err != nil {
		return err
	}
	return w.welcome(c, u, keys)
}

// signupLinkGone says why a sign-up link no longer works.
func (w *Web) signupLinkGone(c *fiber.Ctx, status int, err error) error {
	_, msg := describe(status, err)
	if status == fiber.StatusNotFound {
		msg = service.ErrSignupLink.Message
	}
	return page(c, status, "Sign-up link", "", auth.SignupLinkGone(msg, status == fiber.StatusConflict))
}

// logout ends the session, here and on every process, and its CSRF token.
func (w *Web) logout(c *fiber.Ctx) error {
	s := sess(c)
	if err := w.svc.Sessions.End(c.UserContext(), s.str(keySession)); err != nil {
		return err
	}
	s.logout()
	csrfToken(c, s)
	w.flash(c, views.FlashInfo, "You have logged out.")
	return c.Redirect("/login", fiber.StatusSeeOther)
}
