package web

import (
	"github.com/gofiber/fiber/v2"

	"herald/views"
	"herald/views/account"
)

func (w *Web) account(c *fiber.Ctx) error {
	return page(c, fiber.StatusOK, "Account", views.NavAccount, account.Page(account.Data{User: user(c), CSRF: csrf(c)}))
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
