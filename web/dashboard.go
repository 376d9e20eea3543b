package web

import (
	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
	"herald/views/dashboard"
)

// dashboard shows the account's overview: the last 30 days' figures,
// health, last sends, audience and the getting-started steps, read by
// service.Dashboard from pre-aggregated rows (no scan of contacts or of
// the ledger).
func (w *Web) dashboard(c *fiber.Ctx) error {
	o, err := w.svc.Dashboard.Overview(c.UserContext(), accountID(c))
	if err != nil {
		return err
	}
	loc, _ := accountZone(c)
	d := dashboard.Data{Name: user(c).Name, Overview: o, Loc: loc, NewKeys: signupKeys(c)}
	if m := member(c); m != nil {
		d.Name = m.Name
		d.May = map[string]bool{
			"step-sender":        can(c, service.ActSenders),
			"step-contacts":      can(c, service.ActPrepare),
			"step-group":         can(c, service.ActSuppressions),
			"step-send":          can(c, service.ActSend),
			"step-notifications": can(c, service.ActSettings),
		}
	}
	return page(c, fiber.StatusOK, "Dashboard", views.NavDashboard, dashboard.Page(d))
}

// signupKeys are the keys sign-up made, while they wait in the
// (encrypted) session cookie for the person to say they are saved; nil
// when none do. Only the owner who signed up has them.
func signupKeys(c *fiber.Ctx) *dashboard.NewKeys {
	s := sess(c)
	isNew, _ := s.s.Values[keyKeysNew].(bool)
	if !isNew || s.str(keySecretKey) == "" {
		return nil
	}
	return &dashboard.NewKeys{PublicKey: s.str(keyPublicKey), SecretKey: s.str(keySecretKey), CSRF: csrf(c)}
}

// welcomeKeysSaved forgets the keys sign-up made: the person says the
// secret is saved, and it is never shown again.
func (w *Web) welcomeKeysSaved(c *fiber.Ctx) error {
	s := sess(c)
	if isNew, _ := s.s.Values[keyKeysNew].(bool); isNew {
		s.del(keyPublicKey, keySecretKey, keyKeysNew)
	}
	return c.Redirect("/dashboard", fiber.StatusSeeOther)
}

// restartSession starts a fresh session of the same login (after its
// password changed or two-factor login turned on) and carries over the
// sign-up keys still waiting to be saved: a fresh cookie session would
// lose the one-time secret.
func (w *Web) restartSession(c *fiber.Ctx) (*session, error) {
	keys := signupKeys(c)
	s, err := w.startSession(c, who(c))
	if err != nil {
		return nil, err
	}
	if keys != nil {
		s.set(keyPublicKey, keys.PublicKey)
		s.set(keySecretKey, keys.SecretKey)
		s.set(keyKeysNew, true)
	}
	return s, nil
}
