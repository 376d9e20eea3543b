package api

import (
	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// classJSON is one mail client, device or country of a send's report.
type classJSON struct {
	Key     string `json:"key"`
	Opened  int64  `json:"opened"`
	Clicked int64  `json:"clicked"`
}

func classesJSON(cs []service.ClassCount) []classJSON {
	out := make([]classJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, classJSON{Key: c.Key, Opened: c.Opened, Clicked: c.Clicked})
	}
	return out
}

// singleSendReport answers who opened and clicked a send, where and on
// what (beyond the spec): people's first opens and clicks by mail client,
// device and country, machines' apart, and the cumulative first opens and
// clicks by people per hour after delivery.
func (a *API) singleSendReport(c *fiber.Ctx) error {
	ctx := c.UserContext()
	ss, err := a.svc.SingleSends.Get(ctx, account(c), c.Query("utr"))
	if err != nil {
		return fail(c, err, textRecordNotFoundLower)
	}
	au, err := a.svc.SingleSends.Audience(ctx, ss)
	if err != nil {
		return fail(c, err)
	}
	opened, clicked, err := a.svc.SingleSends.Hours(ctx, ss)
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"report": fiber.Map{
		"utr":                  ss.Utr,
		"clients":              classesJSON(au.Clients),
		"devices":              classesJSON(au.Devices),
		"countries":            classesJSON(au.Countries),
		"countries_known":      au.CountriesKnown,
		"machines":             classesJSON(au.Machines),
		"machine_opens":        au.MachineOpens,
		"machine_clicks":       au.MachineClicks,
		"opened_within_hours":  opened,
		"clicked_within_hours": clicked,
	}})
}
