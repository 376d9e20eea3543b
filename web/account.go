package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/views"
	"herald/views/account"
)

func (w *Web) account(c *fiber.Ctx) error {
	u := user(c)
	d := account.Data{User: u, CSRF: csrf(c), TimeZone: account.ZoneForm{Value: u.TimeZone, CSRF: csrf(c)}}
	return page(c, fiber.StatusOK, "Account", views.NavAccount, account.Page(d))
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
		return page(c, fiber.StatusUnprocessableEntity, "Account", views.NavAccount, account.Page(account.Data{User: user(c), CSRF: csrf(c), TimeZone: f}))
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

// showKeys shows the keys made by sign-up or rotation, once: they leave
// the (encrypted) session cookie as they are shown. Another visit finds
// nothing and goes to the account page.
func (w *Web) showKeys(c *fiber.Ctx) error {
	s := sess(c)
	k := account.Keys{PublicKey: s.str(keyPublicKey), SecretKey: s.str(keySecretKey)}
	k.New, _ = s.s.Values[keyKeysNew].(bool)
	if k.SecretKey == "" {
		return c.Redirect("/account", fiber.StatusSeeOther)
	}
	s.del(keyPublicKey, keySecretKey, keyKeysNew)
	return page(c, fiber.StatusOK, "API keys", views.NavAccount, account.KeysPage(k))
}
