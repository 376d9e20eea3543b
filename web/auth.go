package web

import (
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

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
		u, err := w.svc.Accounts.Get(c.UserContext(), id)
		if err == nil {
			c.Locals(localUser, u)
			c.Locals("account", u.ID) // logged by the request log
			return c.Next()
		}
		if !service.IsNotFound(err) {
			return err
		}
		s.logout() // the account is gone
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

// startSession logs the account in on a fresh session (new CSRF token).
func startSession(c *fiber.Ctx, accountID int64) *session {
	s := sess(c)
	s.login(accountID)
	csrfToken(c, s)
	return s
}

func (w *Web) loginPage(c *fiber.Ctx) error {
	if sess(c).accountID() != 0 {
		return c.Redirect("/dashboard", fiber.StatusSeeOther)
	}
	f := auth.LoginForm{Next: safeNext(c.Query("next")), CSRF: csrf(c)}
	return page(c, fiber.StatusOK, "Log in", "", auth.Login(f))
}

// login checks the password; the service refuses (429) an address after
// repeated failures, and authLimit an IP address sending too many tries.
func (w *Web) login(c *fiber.Ctx) error {
	f := auth.LoginForm{Email: formValue(c, "email"), Next: safeNext(formValue(c, "next")), CSRF: csrf(c)}
	u, err := w.svc.Accounts.Login(c.UserContext(), f.Email, c.FormValue("password"))
	if err != nil {
		switch {
		case isValidation(err):
			f.Errors = fieldErrors(err)
		case service.ErrorCode(err) == service.CodeRateLimited:
			_, f.Alert = describe(fiber.StatusTooManyRequests, err)
		default:
			return err
		}
		return page(c, statusOf(err), "Log in", "", auth.Login(f))
	}
	startSession(c, u.ID)
	to := f.Next
	if to == "" {
		to = "/dashboard"
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}

func (w *Web) signupPage(c *fiber.Ctx) error {
	if sess(c).accountID() != 0 {
		return c.Redirect("/dashboard", fiber.StatusSeeOther)
	}
	return page(c, fiber.StatusOK, "Sign up", "", auth.Signup(auth.SignupForm{CSRF: csrf(c)}))
}

// signup opens the account, logs it in and shows its keys once.
func (w *Web) signup(c *fiber.Ctx) error {
	in := service.AccountInput{Name: formValue(c, "name"), Email: formValue(c, "email"), Password: formValue(c, "password")}
	u, keys, err := w.svc.Accounts.Create(c.UserContext(), in)
	if isValidation(err) {
		f := auth.SignupForm{Name: in.Name, Email: in.Email, Errors: fieldErrors(err), CSRF: csrf(c)}
		return page(c, fiber.StatusUnprocessableEntity, "Sign up", "", auth.Signup(f))
	}
	if err != nil {
		return err
	}
	s := startSession(c, u.ID)
	s.set(keyPublicKey, keys.PublicKey)
	s.set(keySecretKey, keys.SecretKey)
	s.set(keyKeysNew, true)
	return c.Redirect("/account/keys", fiber.StatusSeeOther)
}

// logout ends the session (and its CSRF token).
func (w *Web) logout(c *fiber.Ctx) error {
	s := sess(c)
	s.logout()
	csrfToken(c, s)
	w.flash(c, views.FlashInfo, "You have logged out.")
	return c.Redirect("/login", fiber.StatusSeeOther)
}
