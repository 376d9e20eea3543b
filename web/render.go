package web

import (
	"context"
	"io"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
)

const (
	localUser   = "web.user"
	localMember = "web.member" // *models.Member, nil for the owner
)

// render writes the components, in order, as an HTML answer with status.
func render(c *fiber.Ctx, status int, comps ...templ.Component) error {
	c.Status(status)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	for _, comp := range comps {
		if err := comp.Render(c.UserContext(), c.Response().BodyWriter()); err != nil {
			return err
		}
	}
	return nil
}

// partial reports whether htmx asked for a piece of a page: an htmx
// request that is neither boosted (a whole page) nor a history restore.
func partial(c *fiber.Ctx) bool {
	return c.Get("HX-Request") == "true" && c.Get("HX-Boosted") == "" && c.Get("HX-History-Restore-Request") == ""
}

// user is the logged-in account (set by requireLogin), or nil.
func user(c *fiber.Ctx) *models.User {
	u, _ := c.Locals(localUser).(*models.User)
	return u
}

// member is the logged-in member, nil for the account's owner.
func member(c *fiber.Ctx) *models.Member {
	m, _ := c.Locals(localMember).(*models.Member)
	return m
}

// accountID is the logged-in account's id; the routes that call it are
// all behind requireLogin.
func accountID(c *fiber.Ctx) int64 {
	if u := user(c); u != nil {
		return u.ID
	}
	return 0
}

// who is the logged-in login: the account's owner or a member (its own
// password, sessions and two-factor login).
func who(c *fiber.Ctx) service.Who {
	return service.Who{AccountID: accountID(c), MemberID: actor(c).MemberID}
}

// pageOf builds what the layout needs. With pop, the session's flash
// message is taken (shown once).
func pageOf(c *fiber.Ctx, title, nav string, pop bool) views.Page {
	p := views.Page{Title: title, Nav: nav, CSRF: csrf(c), User: user(c), Member: member(c)}
	if p.User != nil {
		p.Role = actor(c).Role.Label()
	}
	if pop {
		s := sess(c)
		if text := s.str(keyFlashText); text != "" {
			p.Flash = &views.Flash{Kind: s.str(keyFlashKind), Message: text}
			s.del(keyFlashKind, keyFlashText)
		}
	}
	return p
}

// page renders content inside the layout: the console's when someone is
// logged in, the bare one otherwise.
func page(c *fiber.Ctx, status int, title, nav string, content templ.Component) error {
	return renderPage(c, status, pageOf(c, title, nav, true), content)
}

func renderPage(c *fiber.Ctx, status int, p views.Page, content templ.Component) error {
	layout := views.AuthLayout(p)
	if p.User != nil {
		layout = views.Layout(p)
	}
	return render(c, status, templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		return layout.Render(templ.WithChildren(ctx, content), w)
	}))
}

// flashOOB is the flash area swapped out of band into the page from an
// htmx answer.
func flashOOB(kind, message string) templ.Component {
	return views.FlashArea(&views.Flash{Kind: kind, Message: message}, true)
}
