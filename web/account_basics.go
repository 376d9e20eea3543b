package web

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
	"herald/views/account"
	"herald/views/auth"
)

// This file holds the account basics beside login and the password
// change: closed sign-up, the password reset by mail, and two-factor
// login (its second login step and its set-up on the account page).

// Keys of the cookie session between a login's password and its code.
const (
	keyCodeUser   = "code_uid"   // the account whose password was right
	keyCodeMember = "code_mid"   // and the member of it (absent: its owner)
	keyCodeUntil  = "code_until" // Unix seconds after which the step expires
	keyCodeNext   = "code_next"  // where to go after login
	keyCodeEmail  = "code_email"

	// codeStep is how long the code step waits after the password.
	codeStep = 5 * time.Minute
)

// signupGate answers every sign-up route with a 403 page when
// HERALD_SIGNUP=off.
func (w *Web) signupGate(c *fiber.Ctx) error {
	if !w.svc.Accounts.SignupOpen() {
		return service.ErrSignupClosed
	}
	return c.Next()
}

// askCode keeps, in the signed and encrypted cookie, that the login's
// password was right (the owner's or a member's), and sends the browser
// to the code step. No server-side session exists until the code checks.
func (w *Web) askCode(c *fiber.Ctx, id service.Who, email, next string) error {
	s := sess(c)
	s.set(keyCodeUser, strconv.FormatInt(id.AccountID, 10))
	s.set(keyCodeMember, strconv.FormatInt(id.MemberID, 10))
	s.set(keyCodeUntil, strconv.FormatInt(time.Now().Add(codeStep).Unix(), 10))
	s.set(keyCodeNext, next)
	s.set(keyCodeEmail, email)
	return c.Redirect("/login/code", fiber.StatusSeeOther)
}

// codePending returns the login waiting for its code; its AccountID is 0
// when none is or the step expired.
func codePending(s *session) service.Who {
	id, _ := strconv.ParseInt(s.str(keyCodeUser), 10, 64)
	mid, _ := strconv.ParseInt(s.str(keyCodeMember), 10, 64)
	until, _ := strconv.ParseInt(s.str(keyCodeUntil), 10, 64)
	if id == 0 || time.Now().Unix() > until {
		return service.Who{}
	}
	return service.Who{AccountID: id, MemberID: mid}
}

func (w *Web) loginCodePage(c *fiber.Ctx) error {
	if codePending(sess(c)).AccountID == 0 {
		return c.Redirect("/login", fiber.StatusSeeOther)
	}
	return page(c, fiber.StatusOK, "Log in", "", auth.LoginCode(auth.CodeForm{CSRF: csrf(c)}))
}

// loginCode checks the second step's code (service.Accounts.LoginCode:
// once each, one step of drift, wrong codes throttled as failed logins)
// and logs the login in (the owner or a member).
func (w *Web) loginCode(c *fiber.Ctx) error {
	s := sess(c)
	id := codePending(s)
	if id.AccountID == 0 {
		w.flash(c, views.FlashError, "The login took too long. Enter your password again.")
		return c.Redirect("/login", fiber.StatusSeeOther)
	}
	email := s.str(keyCodeEmail)
	err := w.svc.Accounts.LoginCode(c.UserContext(), service.CodeInput{
		Who: id, Code: formValue(c, "code"), IP: w.clientIP(c), Known: s.knows(email),
	})
	if err != nil {
		f := auth.CodeForm{CSRF: csrf(c), Recovery: formValue(c, "recovery") != ""}
		switch {
		case isValidation(err):
			f.Errors = fieldErrors(err)
		case service.ErrorCode(err) == service.CodeRateLimited:
			_, f.Alert = describe(fiber.StatusTooManyRequests, err)
			setRetryAfter(c, err)
		case errors.Is(err, service.ErrNoSecretKey):
			f.Alert = service.ErrNoSecretKey.Message
		default:
			return err
		}
		return page(c, statusOf(err), "Log in", "", auth.LoginCode(f))
	}
	next := s.str(keyCodeNext)
	if _, err := w.startSession(c, id); err != nil { // forgets the code step
		return err
	}
	s.remember(email)
	if next == "" {
		next = "/dashboard"
	}
	return c.Redirect(next, fiber.StatusSeeOther)
}

func (w *Web) forgotPage(c *fiber.Ctx) error {
	return page(c, fiber.StatusOK, "Reset your password", "", auth.Forgot(auth.ForgotForm{CSRF: csrf(c)}))
}

// forgot mails a reset link when the address is a login (an account's
// owner or a member); the answer
// is the same page either way (service.Accounts.RequestPasswordReset).
func (w *Web) forgot(c *fiber.Ctx) error {
	email := strings.TrimSpace(formValue(c, "email"))
	err := w.svc.Accounts.RequestPasswordReset(c.UserContext(), email)
	if isValidation(err) {
		f := auth.ForgotForm{Email: email, Errors: fieldErrors(err), CSRF: csrf(c)}
		return page(c, fiber.StatusUnprocessableEntity, "Reset your password", "", auth.Forgot(f))
	}
	if err != nil {
		return err
	}
	e, _ := service.NormalizeEmail(email)
	return page(c, fiber.StatusOK, "Check your inbox", "", auth.ForgotSent(e))
}

// resetPage is the mailed link: a form, since mail gateways open (GET)
// links to scan them. Nothing changes here.
func (w *Web) resetPage(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	email, err := w.svc.Accounts.PasswordReset(c.UserContext(), token)
	if service.IsNotFound(err) {
		return page(c, fiber.StatusNotFound, "Password reset link", "", auth.ResetGone(service.ErrResetLink.Message))
	}
	if err != nil {
		return err
	}
	f := auth.ResetForm{Email: email, Action: "/reset/" + url.PathEscape(token), CSRF: csrf(c)}
	return page(c, fiber.StatusOK, "Choose a new password", "", auth.Reset(f))
}

// reset sets the new password; every session of that login ends (not the
// account's other logins'), this browser's too, and the person logs in with it (and their code, when
// two-factor login is on).
func (w *Web) reset(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	_, err := w.svc.Accounts.FinishPasswordReset(c.UserContext(), token, service.NewPassword{
		Password: formValue(c, "password"), Confirmation: formValue(c, "password_confirmation"),
	})
	if service.IsNotFound(err) {
		return page(c, fiber.StatusNotFound, "Password reset link", "", auth.ResetGone(service.ErrResetLink.Message))
	}
	if isValidation(err) {
		email, _ := w.svc.Accounts.PasswordReset(c.UserContext(), token)
		f := auth.ResetForm{Email: email, Action: "/reset/" + url.PathEscape(token), Errors: fieldErrors(err), CSRF: csrf(c)}
		return page(c, fiber.StatusUnprocessableEntity, "Choose a new password", "", auth.Reset(f))
	}
	if err != nil {
		return err
	}
	s := sess(c)
	s.logout()
	csrfToken(c, s)
	w.flash(c, views.FlashSuccess, "Your password has been set, and every session of this login has ended. Log in with the new password.")
	return c.Redirect("/login", fiber.StatusSeeOther)
}

// twoFactorSetup makes a new key of the person (the owner or a member)
// and shows it (two-factor login is on
// only once a code of it checks).
func (w *Web) twoFactorSetup(c *fiber.Ctx) error {
	_, err := w.svc.Accounts.BeginTOTP(c.UserContext(), who(c))
	if e := (*service.Error)(nil); (errors.Is(err, service.ErrTOTPOn) || errors.Is(err, service.ErrNoSecretKey)) && errors.As(err, &e) {
		w.flash(c, views.FlashError, e.Message)
		return c.Redirect("/account", fiber.StatusSeeOther)
	}
	if err != nil {
		return err
	}
	return c.Redirect(account.TwoFactorURL, fiber.StatusSeeOther)
}

// twoFactorPage shows the key being set up.
func (w *Web) twoFactorPage(c *fiber.Ctx) error {
	d, err := w.setupData(c)
	if err != nil {
		return err
	}
	if d == nil {
		return c.Redirect("/account", fiber.StatusSeeOther)
	}
	return page(c, fiber.StatusOK, "Two-factor login", views.NavAccount, account.SetupPage(*d))
}

// setupData is the set-up page of the pending key; nil when none is
// pending (or two-factor login is on already).
func (w *Web) setupData(c *fiber.Ctx) (*account.Setup, error) {
	st, err := w.svc.Accounts.PendingTOTP(c.UserContext(), who(c))
	if service.IsNotFound(err) || errors.Is(err, service.ErrTOTPOn) || errors.Is(err, service.ErrNoSecretKey) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &account.Setup{Key: st.Key, QR: "data:image/png;base64," + base64.StdEncoding.EncodeToString(st.PNG), CSRF: csrf(c)}, nil
}

// twoFactorEnable turns two-factor login on when the code checks; every
// session of the login ends and this browser goes on in a fresh one.
func (w *Web) twoFactorEnable(c *fiber.Ctx) error {
	codes, err := w.svc.Accounts.EnableTOTP(c.UserContext(), who(c), formValue(c, "code"), w.clientIP(c))
	if isValidation(err) || service.ErrorCode(err) == service.CodeRateLimited {
		d, derr := w.setupData(c)
		if derr != nil {
			return derr
		}
		if d == nil {
			return c.Redirect("/account", fiber.StatusSeeOther)
		}
		d.Errors = fieldErrors(err)
		status := statusOf(err)
		if status == fiber.StatusTooManyRequests {
			_, d.Alert = describe(status, err)
			setRetryAfter(c, err)
		}
		return page(c, status, "Two-factor login", views.NavAccount, account.SetupPage(*d))
	}
	if service.IsNotFound(err) || errors.Is(err, service.ErrTOTPOn) || errors.Is(err, service.ErrNoSecretKey) {
		return c.Redirect("/account", fiber.StatusSeeOther)
	}
	if err != nil {
		return err
	}
	s, err := w.restartSession(c)
	if err != nil {
		return err
	}
	s.set(keyRecoveryCodes, strings.Join(codes, " "))
	w.flash(c, views.FlashSuccess, "Two-factor login is on. From now on, logging in asks for a code of your authenticator app. Every other session has been logged out. Save your recovery codes below: they are shown only now.")
	return c.Redirect("/account#recovery", fiber.StatusSeeOther)
}

// twoFactorOff turns two-factor login off, given the password.
func (w *Web) twoFactorOff(c *fiber.Ctx) error {
	err := w.svc.Accounts.DisableTOTP(c.UserContext(), who(c), formValue(c, "current_password"), w.clientIP(c))
	if isValidation(err) || service.ErrorCode(err) == service.CodeRateLimited {
		d, derr := w.accountData(c)
		if derr != nil {
			return derr
		}
		d.TwoFactor.Errors = fieldErrors(err)
		status := statusOf(err)
		if status == fiber.StatusTooManyRequests {
			_, d.TwoFactor.Alert = describe(status, err)
			setRetryAfter(c, err)
		}
		return page(c, status, "Account", views.NavAccount, account.Page(d))
	}
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Two-factor login is off. Logging in asks for the password alone.")
	return c.Redirect("/account", fiber.StatusSeeOther)
}

// recoveryCodes replaces the person's recovery codes, given their password
// or a current code, and shows the new ones once on the account page.
func (w *Web) recoveryCodes(c *fiber.Ctx) error {
	codes, err := w.svc.Accounts.NewRecoveryCodes(c.UserContext(), who(c), formValue(c, "current_password"), w.clientIP(c))
	if isValidation(err) || service.ErrorCode(err) == service.CodeRateLimited {
		d, derr := w.accountData(c)
		if derr != nil {
			return derr
		}
		d.TwoFactor.RecoveryErrors = fieldErrors(err)
		status := statusOf(err)
		if status == fiber.StatusTooManyRequests {
			_, d.TwoFactor.RecoveryAlert = describe(status, err)
			setRetryAfter(c, err)
		}
		return page(c, status, "Account", views.NavAccount, account.Page(d))
	}
	if e := (*service.Error)(nil); (errors.Is(err, service.ErrTOTPOff) || errors.Is(err, service.ErrNoSecretKey)) && errors.As(err, &e) {
		w.flash(c, views.FlashError, e.Message)
		return c.Redirect("/account", fiber.StatusSeeOther)
	}
	if err != nil {
		return err
	}
	sess(c).set(keyRecoveryCodes, strings.Join(codes, " "))
	w.flash(c, views.FlashSuccess, "New recovery codes made; the earlier ones no longer work. Save them below: they are shown only now.")
	return c.Redirect("/account#recovery", fiber.StatusSeeOther)
}

// newRecoveryCodes takes the codes just made out of the (encrypted)
// session cookie: they are shown once.
func newRecoveryCodes(c *fiber.Ctx) []string {
	s := sess(c)
	v := s.str(keyRecoveryCodes)
	s.del(keyRecoveryCodes)
	return strings.Fields(v)
}
