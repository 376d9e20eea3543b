package api

import (
	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// Warm-up plans of sending domains (decisions.md 11).

// startWarmup is POST api/senders/warmup: domain, start, growth, until;
// it starts the domain's plan (replacing one it has) from today.
func (a *API) startWarmup(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := service.WarmupInput{Domain: f.Get("domain"), Start: f.Get("start"), Growth: f.Get("growth"), Until: f.Get("until")}
	if _, err := a.svc.Warmups.Start(c.UserContext(), account(c), in); err != nil {
		return fail(c, err)
	}
	return success(c, "Saved Successfully")
}

// endWarmup is DELETE api/senders/warmup?domain=: the domain's waiting
// mail goes at once.
func (a *API) endWarmup(c *fiber.Ctx) error {
	domain := c.Query("domain")
	if domain == "" {
		if f, err := parseForm(c); err == nil {
			domain = f.Get("domain")
		}
	}
	if err := a.svc.Warmups.End(c.UserContext(), account(c), domain); err != nil {
		return fail(c, err, textNoWarmup)
	}
	return success(c, "Deleted Successfully")
}

// textNoWarmup answers an end of a plan the domain does not have.
const textNoWarmup = "The domain has no warm-up plan."

// listWarmups is GET api/senders/warmup: the account's plans with today's
// cap and use, in message.warmups.
func (a *API) listWarmups(c *fiber.Ctx) error {
	plans, err := a.svc.Warmups.List(c.UserContext(), account(c))
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"warmups": plans})
}
