package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/singlesends"
	"herald/world"
)

// reachOf lays a send's counts by class out for its page, with the
// classes named for people.
func reachOf(a *service.Audience) *singlesends.Reach {
	r := &singlesends.Reach{CountriesKnown: a.CountriesKnown, MachineOpens: a.MachineOpens, MachineClicks: a.MachineClicks}
	rows := func(cs []service.ClassCount, name func(string) string) []singlesends.ClassRow {
		out := make([]singlesends.ClassRow, 0, len(cs))
		for _, c := range cs {
			out = append(out, singlesends.ClassRow{Label: name(c.Key), Opened: c.Opened, Clicked: c.Clicked})
		}
		return out
	}
	r.Clients = rows(a.Clients, singlesends.ClientLabel)
	r.Devices = rows(a.Devices, singlesends.DeviceLabel)
	r.Countries = rows(a.Countries, countryName)
	r.Machines = rows(a.Machines, singlesends.ClientLabel)
	for _, c := range a.Clients {
		r.PeopleOpened += c.Opened
		r.PeopleClicked += c.Clicked
	}
	return r
}

// countryName names an ISO 3166-1 alpha-2 code ("" unknown).
func countryName(code string) string {
	if code != "" {
		if c, ok := world.LookupCountry(code); ok {
			return c.Name
		}
		return code
	}
	return singlesends.UnknownCountry()
}

// sendClickMap is a send's design with each link's clicks by people drawn
// at the start of the link, in the same sandboxed frame as its preview.
func (w *Web) sendClickMap(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	ss, err := w.svc.SingleSends.Get(ctx, acct, c.Params("utr"))
	if err != nil {
		return err
	}
	_, links, err := w.svc.SingleSends.Activity(ctx, ss)
	if err != nil {
		return err
	}
	m := singlesends.ClickMap{Send: *ss}
	for _, l := range links {
		m.Links = append(m.Links, singlesends.LinkRow{URL: l.URL, Clicks: l.Clicks, Human: l.Human})
	}
	if ss.TemplateHTML != nil && *ss.TemplateHTML != "" {
		if m.HTML, err = w.svc.Designs.PreviewMarked(ctx, acct, *ss.TemplateHTML, func(i int) string {
			var human int64
			if i >= 0 && i < len(links) {
				human = links[i].Human
			}
			return singlesends.LinkBadge(i, human)
		}); err != nil {
			return err
		}
	}
	c.Set(fiber.HeaderContentSecurityPolicy, previewCSP)
	return page(c, fiber.StatusOK, views.T("clickmap.title", "Name", ss.SingleSendName), views.NavSingleSends, singlesends.ClickMapPage(m))
}

// compareChoices is how many of the latest completed sends the compare
// page offers.
const compareChoices = 30

// compareSends sets 2 to 4 completed sends side by side (?utr=…, one per
// send); with fewer chosen it shows the choice only.
func (w *Web) compareSends(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	loc, _ := accountZone(c)
	d := singlesends.Compare{Max: service.CompareMax, Loc: loc}
	var err error
	if d.Choices, err = w.svc.SingleSends.Completed(ctx, acct, compareChoices); err != nil {
		return err
	}
	for _, v := range c.Context().QueryArgs().PeekMulti("utr") {
		if u := strings.TrimSpace(string(v)); u != "" {
			d.Chosen = append(d.Chosen, u)
		}
	}
	status := fiber.StatusOK
	if len(d.Chosen) > 0 {
		got, err := w.svc.SingleSends.Compare(ctx, acct, d.Chosen)
		switch {
		case len(d.Chosen) == 1 && service.ErrorCode(err) == service.CodeValidation:
			// One send chosen (from its page): the choice waits for more.
		case service.ErrorCode(err) == service.CodeValidation:
			status, d.Error = fiber.StatusUnprocessableEntity, strings.Join(fieldErrors(err)["sends"], " ")
		case err != nil:
			return err
		default:
			names, opened, delivered := make([]string, len(got)), make([][]int64, len(got)), make([]int64, len(got))
			for i, g := range got {
				d.Rows = append(d.Rows, compareRow(g.Send, i+1))
				names[i], opened[i], delivered[i] = g.Send.SingleSendName, g.OpenedBy, g.Send.Delivered
			}
			d.Chart = singlesends.NewCompareChart(names, opened, delivered)
		}
	}
	return page(c, status, views.T("compare.title"), views.NavSingleSends, singlesends.ComparePage(d))
}

// compareRow is one send's rates by people.
func compareRow(s *models.SingleSend, series int) singlesends.CompareRow {
	return singlesends.CompareRow{Send: *s, Series: series,
		Delivered: singlesends.Rate(s.Delivered, s.Triggered),
		Opened:    singlesends.Rate(s.HumanUniqueOpens, s.Delivered),
		Clicked:   singlesends.Rate(s.HumanUniqueClicks, s.Delivered),
		Unsub:     singlesends.Rate(s.Unsubscribes, s.Delivered),
		Bounced:   singlesends.Rate(s.Bounces, s.Triggered),
	}
}
