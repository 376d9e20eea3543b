package web

import (
	"encoding/base64"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views/public"
)

// mountRecipient registers the links inside sent mail. They come before
// the console's middleware: a mail client opening a pixel or posting a
// one-click unsubscribe has no session and no CSRF token; the signed
// token in the path is the only credential.
func (w *Web) mountRecipient(app *fiber.App) {
	app.Get("/t/o/:token", w.trackOpen)
	app.Get("/t/c/:token/:link", recipientErrors(w.trackClick))
	app.Get("/u/:token", recipientErrors(w.preferences))
	app.Post("/u/:token", recipientErrors(w.unsubscribe))
	app.Get("/m/:token", recipientErrors(w.viewInBrowser))
}

// pixel is a transparent 1x1 GIF.
var pixel, _ = base64.StdEncoding.DecodeString("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")

// recipientHeaders are the headers of every answer to a link in a mail.
// No page of them may be framed by another site (decisions.md 8): the
// preference page's buttons would otherwise be clickjacking targets.
func recipientHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderContentSecurityPolicy, contentSecurityPolicy) // the console's: own files only, no framing
}

// trackHit is the shape of a request to a tracking link that the machine
// rules read (decisions.md 7, docs/MACHINE_ACTIVITY.md): its method (a HEAD is a
// machine's: Fiber routes HEAD to the GET handlers), user agent and
// client address (through HERALD_TRUSTED_PROXIES).
func (w *Web) trackHit(c *fiber.Ctx) service.Hit {
	ip, _ := netip.ParseAddr(w.clientIP(c))
	return service.Hit{Method: strings.Clone(c.Method()), UserAgent: string(c.Request().Header.UserAgent()), IP: ip}
}

// trackOpen counts an open and answers the pixel whatever happens: a mail
// client shows no error.
func (w *Web) trackOpen(c *fiber.Ctx) error {
	recipientHeaders(c)
	tok := strings.TrimSuffix(strings.Clone(c.Params("token")), ".gif")
	if err := w.svc.Tracking.OpenHit(c.UserContext(), tok, w.trackHit(c)); err != nil && !service.IsNotFound(err) {
		slog.ErrorContext(c.UserContext(), "web: count open", "err", err)
	}
	c.Set(fiber.HeaderContentType, "image/gif")
	return c.Send(pixel)
}

// trackClick counts a click and redirects to the link of the message.
func (w *Web) trackClick(c *fiber.Ctx) error {
	recipientHeaders(c)
	i, err := strconv.Atoi(c.Params("link"))
	if err != nil {
		return fiber.ErrNotFound
	}
	to, err := w.svc.Tracking.ClickHit(c.UserContext(), strings.Clone(c.Params("token")), i, w.trackHit(c))
	if err != nil {
		if service.IsNotFound(err) {
			return fiber.ErrNotFound
		}
		return err
	}
	// The service hands out only safe targets; checked again here, where
	// the header is written, so that Location can never carry CR or LF.
	to, ok := service.SafeRedirect(to)
	if !ok {
		return fiber.ErrNotFound
	}
	return c.Redirect(to, fiber.StatusFound)
}

// preferences shows the preference page, in the contact's language (else
// the browser's).
func (w *Web) preferences(c *fiber.Ctx) error {
	recipientHeaders(c)
	tok := strings.Clone(c.Params("token"))
	p, err := w.svc.Tracking.Preferences(c.UserContext(), tok)
	status, lang := fiber.StatusOK, ""
	var brand service.Brand
	if err != nil {
		if !service.IsNotFound(err) {
			return err
		}
		status, p = fiber.StatusNotFound, nil
	} else {
		lang = p.Language
		if brand, err = w.svc.Profiles.Brand(c.UserContext(), p.AccountID); err != nil {
			return err
		}
	}
	l := recipientLocale(c, lang, "")
	return render(c, status, public.PreferencesPage(l, "/u/"+tok, p, c.Query("saved") == "1", brand))
}

// unsubscribe takes both POSTs of the link: the RFC 8058 one-click
// (List-Unsubscribe=One-Click, from a mail client) and the preference
// page's form.
func (w *Web) unsubscribe(c *fiber.Ctx) error {
	recipientHeaders(c)
	tok := strings.Clone(c.Params("token"))
	ctx := c.UserContext()
	if c.FormValue("save") == "" {
		// One-click: whatever the body, a POST to the link unsubscribes
		// (RFC 8058 says the body is List-Unsubscribe=One-Click).
		if err := w.svc.Tracking.OneClick(ctx, tok); err != nil {
			if service.IsNotFound(err) {
				return c.Status(fiber.StatusNotFound).SendString("unknown link")
			}
			return err
		}
		return c.SendString("unsubscribed")
	}
	var leave []int64
	args := c.Request().PostArgs()
	for _, v := range args.PeekMulti("leave[]") {
		if id, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			leave = append(leave, id)
		}
	}
	if err := w.svc.Tracking.SavePreferences(ctx, tok, leave, c.FormValue("all") == "1"); err != nil {
		if service.IsNotFound(err) {
			return fiber.ErrNotFound
		}
		return err
	}
	return c.Redirect("/u/"+tok+"?saved=1", fiber.StatusSeeOther)
}

// viewCSP keeps a mail shown in the browser from running anything; its
// images load (as in a mail client) and its links open the page.
const viewCSP = "sandbox allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation; default-src 'none'; img-src * data:; style-src 'unsafe-inline'; frame-ancestors 'none'"

// viewInBrowser shows the message as its recipient got it.
func (w *Web) viewInBrowser(c *fiber.Ctx) error {
	recipientHeaders(c)
	_, html, err := w.svc.Tracking.View(c.UserContext(), strings.Clone(c.Params("token")))
	if err != nil {
		if service.IsNotFound(err) {
			return fiber.ErrNotFound
		}
		return err
	}
	c.Set(fiber.HeaderContentSecurityPolicy, viewCSP)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.SendString(html)
}
