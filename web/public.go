package web

import (
	"errors"
	"log/slog"
	"mime"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/i18n"
	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/public"
)

// mountPublic registers the pages opened without an account that may use
// the console's session (design previews).
func (w *Web) mountPublic(r router) {
	r.open(fiber.MethodGet, "/designs/:id/preview", w.publicPreview)
}

// verifyPrefix is where a sender's verification link points
// (service.Mail.VerifyURL).
const verifyPrefix = "/senders/verify/"

// mountSenderVerify registers the verification link mailed to a sender.
// It comes before the console's middleware: whoever opens the link has no
// session and no CSRF token; the token in the path is the credential.
func (w *Web) mountSenderVerify(app *fiber.App) {
	app.Get(verifyPrefix+":token", w.senderLink) // GET and HEAD
	app.Post(verifyPrefix+":token", w.confirmSender)
}

// publicHeaders are the headers of the pages opened from a mail: never
// cached, never framed (decisions.md 8), the token in the address never
// sent on as a Referer.
func publicHeaders(c *fiber.Ctx) {
	recipientHeaders(c)
	c.Set(fiber.HeaderContentSecurityPolicy, contentSecurityPolicy)
	c.Set(fiber.HeaderXFrameOptions, "DENY")
}

// wantsHTML reports whether the request's Accept header names an HTML
// type (text/html, application/xhtml+xml) with a weight above 0: what
// browsers, and the link scanners of mail gateways that pose as them, send.
// No Accept, */* alone, or application/json is a program.
func wantsHTML(c *fiber.Ctx) bool {
	for _, item := range strings.Split(c.Get(fiber.HeaderAccept), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(item))
		if err != nil || (mt != "text/html" && mt != "application/xhtml+xml") {
			continue
		}
		if q, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(q, 64); err == nil && f <= 0 {
				continue
			}
		}
		return true
	}
	return false
}

// senderLink answers a GET (or HEAD) of the link. A browser gets the page
// with the "Verify this address" button and nothing changes: mail gateways
// fetch links to scan them, and that must not verify an address nobody
// confirmed. Any other GET is a program following the link, and verifies
// (decisions.md 5), answering the JSON envelope. A HEAD never verifies.
func (w *Web) senderLink(c *fiber.Ctx) error {
	publicHeaders(c)
	tok := strings.Clone(c.Params("token"))
	if c.Method() == fiber.MethodHead || wantsHTML(c) {
		s, err := w.svc.Senders.Link(c.UserContext(), tok)
		return verifyPage(c, s, err, c.Path())
	}
	s, err := w.svc.Senders.Verify(c.UserContext(), tok)
	return verifyJSON(c, s, err)
}

// confirmSender is the POST of the page's button (or of a program): it
// verifies, and answers as the request asks, a page or the envelope.
func (w *Web) confirmSender(c *fiber.Ctx) error {
	publicHeaders(c)
	s, err := w.svc.Senders.Verify(c.UserContext(), strings.Clone(c.Params("token")))
	if wantsHTML(c) {
		return verifyPage(c, s, err, "")
	}
	return verifyJSON(c, s, err)
}

// verifyPage shows the link's state: the button (action set, the sender
// not yet verified), verified, expired or unknown (404).
func verifyPage(c *fiber.Ctx, s *models.Sender, err error, action string) error {
	state, status, email := public.VerifyUnknown, fiber.StatusNotFound, ""
	switch {
	case errors.Is(err, service.ErrLinkExpired):
		state = public.VerifyExpired
	case service.IsNotFound(err):
	case err != nil:
		return err
	case s.IsVerified == 1:
		state, status, email = public.VerifyDone, fiber.StatusOK, s.FromEmail
	case action != "":
		state, status, email = public.VerifyConfirm, fiber.StatusOK, s.FromEmail
	}
	return renderPage(c, status, views.Page{Title: "Sender verification"}, public.SenderVerify(state, email, action))
}

// verifyEnvelope is the API's envelope, status first.
type verifyEnvelope struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	Errors  string `json:"errors,omitempty"`
}

// verifyJSON answers a program: {"status":"success","message":"Sender
// Verified"}, or the failure envelope with 404 for an unknown or expired
// link.
func verifyJSON(c *fiber.Ctx, s *models.Sender, err error) error {
	var se *service.Error
	switch {
	case err == nil:
		return c.Status(fiber.StatusOK).JSON(verifyEnvelope{Status: "success", Message: "Sender Verified"})
	case service.IsNotFound(err) && errors.As(err, &se):
		return c.Status(fiber.StatusNotFound).JSON(verifyEnvelope{Status: "failed", Errors: se.Message})
	}
	slog.ErrorContext(c.UserContext(), "sender verification", "error", err)
	return c.Status(fiber.StatusInternalServerError).JSON(verifyEnvelope{Status: "failed", Errors: "Internal Server Error"})
}

// recipientLocale is the language of a page a recipient opens
// (decisions.md 10): the contact's (contact, "" when none is known), else
// the form's (form, "" outside a form), else the browser's Accept-Language,
// else English. It says so in Content-Language, and tells caches that the
// answer varies with Accept-Language. Every public page, the forms' too,
// picks its language here.
func recipientLocale(c *fiber.Ctx, contact, form string) *i18n.Locale {
	l := i18n.Pick(contact, form, c.Get(fiber.HeaderAcceptLanguage))
	c.Vary(fiber.HeaderAcceptLanguage)
	c.Set(fiber.HeaderContentLanguage, l.Lang())
	return l
}

// recipientErrors answers the errors of a route that recipients open with
// a public page in their language, not the console's error page (which
// speaks English and offers the console's start page). Wrap every public
// route with it.
func recipientErrors(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := h(c); err != nil {
			return publicError(c, err, "", "")
		}
		return nil
	}
}

// publicError is the error page of a public route, in the language of
// recipientLocale(contact, form): its status from the one table
// (statusOf); the text of an error is never shown, only the page's words
// for its status. Faults of ours are logged.
func publicError(c *fiber.Ctx, err error, contact, form string) error {
	status := statusOf(err)
	if status >= fiber.StatusInternalServerError {
		slog.ErrorContext(c.UserContext(), "public page error", "method", c.Method(), "path", c.Path(), "error", err)
	}
	c.Response().ResetBody()
	recipientHeaders(c)
	retryAfter(c, err)
	l := recipientLocale(c, contact, form)
	key := "other"
	switch status {
	case fiber.StatusNotFound, fiber.StatusTooManyRequests, fiber.StatusInternalServerError:
		key = strconv.Itoa(status)
	}
	return render(c, status, public.ErrorPage(l, status, l.T("error."+key+".title"), l.T("error."+key+".text")))
}
