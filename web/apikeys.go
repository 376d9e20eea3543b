package web

import (
	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
	"herald/views/account"
)

// apiKeysCard is the card of named keys with an empty form.
func (w *Web) apiKeysCard(c *fiber.Ctx) (account.APIKeys, error) {
	keys, err := w.svc.APIKeys.List(c.UserContext(), accountID(c))
	if err != nil {
		return account.APIKeys{}, err
	}
	return account.APIKeys{Keys: keys, TZ: user(c).TimeZone, CSRF: csrf(c)}, nil
}

// renderAPIKeys answers the card to htmx, the account page with it to a
// browser without JavaScript.
func (w *Web) renderAPIKeys(c *fiber.Ctx, status int, k account.APIKeys, flash string) error {
	if partial(c) {
		if flash != "" {
			return render(c, status, account.APIKeysCard(k), flashOOB(views.FlashSuccess, flash))
		}
		return render(c, status, account.APIKeysCard(k))
	}
	d, err := w.accountData(c)
	if err != nil {
		return err
	}
	d.APIKeys = k
	return page(c, status, "Account", views.NavAccount, account.Page(d))
}

// createAPIKey makes a named key and shows its secret this once, in the
// answer itself (never kept, never in a redirect). A refused form comes
// back with its errors (422).
func (w *Web) createAPIKey(c *fiber.Ctx) error {
	in := service.APIKeyInput{Name: formValue(c, "name"), Scope: formValue(c, "scope"), Areas: formList(c, "areas")}
	// Each area's access ("area_<name>": "", "read" or "write").
	for _, a := range service.Areas {
		switch formValue(c, "area_"+a.Name) {
		case "write":
			in.Areas = append(in.Areas, a.Name)
		case "read":
			in.ReadAreas = append(in.ReadAreas, a.Name)
		}
	}
	key, pair, err := w.svc.APIKeys.Create(c.UserContext(), accountID(c), in)
	if err != nil && !isValidation(err) {
		return err
	}
	k, lerr := w.apiKeysCard(c)
	if lerr != nil {
		return lerr
	}
	if err != nil {
		k.Form = account.APIKeyForm{Name: in.Name, Scope: in.Scope, Areas: in.Areas, ReadAreas: in.ReadAreas, Errors: fieldErrors(err)}
		return w.renderAPIKeys(c, fiber.StatusUnprocessableEntity, k, "")
	}
	// The secret must not stay in a cache on the way.
	c.Set(fiber.HeaderCacheControl, "no-store")
	k.New = &account.NewAPIKey{Name: key.Name, PublicKey: pair.PublicKey, SecretKey: pair.SecretKey}
	return w.renderAPIKeys(c, fiber.StatusOK, k, "Key “"+key.Name+"” created.")
}

// revokeAPIKey revokes a named key: its next request is refused, on every
// process.
func (w *Web) revokeAPIKey(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	if err := w.svc.APIKeys.Revoke(c.UserContext(), accountID(c), id); err != nil {
		return err
	}
	const msg = "Key revoked. Programs using it are refused from now on."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect("/account#api-keys", fiber.StatusSeeOther)
	}
	k, err := w.apiKeysCard(c)
	if err != nil {
		return err
	}
	k.Notice = msg
	return render(c, fiber.StatusOK, account.APIKeysCard(k))
}
