package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
	"herald/views/account"
)

func (w *Web) account(c *fiber.Ctx) error {
	d, err := w.accountData(c)
	if err != nil {
		return err
	}
	return page(c, fiber.StatusOK, "Account", views.NavAccount, account.Page(d))
}

// accountData is the account page with empty forms and the account's
// live sessions, the request's own marked.
func (w *Web) accountData(c *fiber.Ctx) (account.Data, error) {
	u := user(c)
	d := account.Data{
		User: u, CSRF: csrf(c), Member: member(c), Role: actor(c).Role.Label(),
		TimeZone:  account.ZoneForm{Value: u.TimeZone, CSRF: csrf(c)},
		Password:  account.PasswordForm{CSRF: csrf(c)},
		TwoFactor: account.TwoFactorForm{On: service.TwoFactorOn(u, member(c)), Available: w.svc.Accounts.TwoFactorAvailable(), CSRF: csrf(c)},
	}
	blocks, err := w.svc.Checklist.Blocks(c.UserContext(), u.ID)
	if err != nil {
		return d, err
	}
	d.Checklist = account.ChecklistSetting{Blocks: blocks, CSRF: csrf(c)}
	if d.TwoFactor.On {
		if d.TwoFactor.CodesLeft, err = w.svc.Accounts.RecoveryCodesLeft(c.UserContext(), who(c)); err != nil {
			return d, err
		}
		d.TwoFactor.NewCodes = newRecoveryCodes(c)
	}
	rows, err := w.svc.Sessions.ListOf(c.UserContext(), u.ID, actor(c).MemberID)
	if err != nil {
		return d, err
	}
	current := int64(0)
	if live := sess(c).live; live != nil {
		current = live.ID
	}
	for _, r := range rows {
		d.Sessions = append(d.Sessions, account.Session{Started: r.Started(), LastUsed: r.LastUsed(), Current: r.ID == current})
	}
	if d.Profile, err = w.profileForm(c); err != nil {
		return d, err
	}
	if d.ArchiveURL, err = w.svc.Archive.URL(c.UserContext(), u.ID); err != nil {
		return d, err
	}
	d.APIKeys, err = w.apiKeysCard(c)
	return d, err
}

// changePassword sets a new password of the person (the owner or a
// member); every session of that login ends (service.Accounts.ChangePassword) and this browser goes on in a fresh
// one. Errors of the form are shown in it (422).
func (w *Web) changePassword(c *fiber.Ctx) error {
	in := service.PasswordChange{
		Current: formValue(c, "current_password"), Password: formValue(c, "password"),
		Confirmation: formValue(c, "password_confirmation"), IP: w.clientIP(c),
	}
	err := w.svc.Accounts.ChangePassword(c.UserContext(), who(c), in)
	if isValidation(err) || service.ErrorCode(err) == service.CodeRateLimited {
		d, derr := w.accountData(c)
		if derr != nil {
			return derr
		}
		d.Password.Errors = fieldErrors(err)
		status := statusOf(err)
		if status == fiber.StatusTooManyRequests {
			_, d.Password.Alert = describe(status, err)
			setRetryAfter(c, err)
		}
		return page(c, status, "Account", views.NavAccount, account.Page(d))
	}
	if err != nil {
		return err
	}
	if _, err := w.restartSession(c); err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Your password has been changed. Every other session has been logged out.")
	return c.Redirect("/account", fiber.StatusSeeOther)
}

// logoutEverywhere ends every session of the person (the owner or a
// member), this one included.
func (w *Web) logoutEverywhere(c *fiber.Ctx) error {
	if err := w.svc.Sessions.EndAllOf(c.UserContext(), accountID(c), actor(c).MemberID); err != nil {
		return err
	}
	s := sess(c)
	s.logout()
	csrfToken(c, s)
	w.flash(c, views.FlashInfo, "You have logged out everywhere.")
	return c.Redirect("/login", fiber.StatusSeeOther)
}

// saveTimeZone sets the account's time zone. To htmx it answers the form
// (422 with the message beside the select when the zone is unknown); to
// a browser a redirect to the account page.
func (w *Web) saveTimeZone(c *fiber.Ctx) error {
	tz := strings.TrimSpace(formValue(c, "time_zone"))
	err := w.svc.Accounts.SetTimeZone(c.UserContext(), accountID(c), tz)
	f := account.ZoneForm{Value: tz, CSRF: csrf(c)}
	if isValidation(err) {
		for _, msgs := range fieldErrors(err) {
			f.Errors = append(f.Errors, msgs...)
		}
		if partial(c) {
			return render(c, fiber.StatusUnprocessableEntity, account.TimeZoneForm(f))
		}
		d, err := w.accountData(c)
		if err != nil {
			return err
		}
		d.TimeZone = f
		return page(c, fiber.StatusUnprocessableEntity, "Account", views.NavAccount, account.Page(d))
	}
	if err != nil {
		return err
	}
	msg := "Time zone set to " + tz + "."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect("/account", fiber.StatusSeeOther)
	}
	f.Saved = true
	return render(c, fiber.StatusOK, account.TimeZoneForm(f), flashOOB(views.FlashSuccess, msg))
}

// rotateKeys replaces the account's keys and shows the new ones once.
func (w *Web) rotateKeys(c *fiber.Ctx) error {
	keys, err := w.svc.Accounts.RotateKeys(c.UserContext(), accountID(c))
	if err != nil {
		return err
	}
	s := sess(c)
	s.set(keyPublicKey, keys.PublicKey)
	s.set(keySecretKey, keys.SecretKey)
	s.del(keyKeysNew)
	return c.Redirect("/account/keys", fiber.StatusSeeOther)
}

// showKeys shows the keys made by a rotation, once: they leave the
// (encrypted) session cookie as they are shown. Another visit finds
// nothing and goes to the account page. Sign-up's keys are the
// dashboard's to show (signupKeys).
func (w *Web) showKeys(c *fiber.Ctx) error {
	s := sess(c)
	k := account.Keys{PublicKey: s.str(keyPublicKey), SecretKey: s.str(keySecretKey)}
	if isNew, _ := s.s.Values[keyKeysNew].(bool); isNew {
		return c.Redirect("/dashboard", fiber.StatusSeeOther)
	}
	if k.SecretKey == "" {
		return c.Redirect("/account", fiber.StatusSeeOther)
	}
	s.del(keyPublicKey, keySecretKey)
	return page(c, fiber.StatusOK, "API keys", views.NavAccount, account.KeysPage(k))
}
