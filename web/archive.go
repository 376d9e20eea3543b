package web

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views/archive"
)

// The public archive of an account's sends (decisions.md 10): anyone who
// knows the archive's public id reads it, with no session. The pages use
// the console's policy (own files only; the entry page frames the mail
// from this origin); the mail itself is served as "view in browser"
// serves it (viewCSP: sandboxed, nothing runs), framable by these pages
// only.

// archiveCSP is viewCSP, framable by this origin's archive page.
const archiveCSP = "sandbox allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation; default-src 'none'; img-src * data:; style-src 'unsafe-inline'; frame-ancestors 'self'"

// mountArchive registers the archive's public pages, before the console's
// middleware.
func (w *Web) mountArchive(app *fiber.App) {
	app.Get("/archive/:id", w.archiveList)
	app.Get("/archive/:id/feed.xml", w.archiveFeed)
	app.Get("/archive/:id/:utr", w.archiveEntry)
	app.Get("/archive/:id/:utr/mail", w.archiveMail)
}

// archiveHeaders are the headers of the archive's answers: public, shortly
// cached, never framed by another site.
func archiveHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderCacheControl, "public, max-age=60")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderContentSecurityPolicy, contentSecurityPolicy)
}

// archiveText is the text of the archive's pages (English for now).
func archiveText(*fiber.Ctx) archive.Strings { return archive.English }

// archiveBase is the path of the archive the request names.
func archiveBase(id string) string { return "/archive/" + id }

// archiveMissing answers 404 with the archive's page, or passes on an
// error that is not a "not found".
func archiveMissing(c *fiber.Ctx, err error) error {
	if !service.IsNotFound(err) {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return render(c, fiber.StatusNotFound, archive.NotFoundPage(archiveText(c)))
}

func (w *Web) archiveList(c *fiber.Ctx) error {
	archiveHeaders(c)
	page := 1
	if p := c.Query("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return archiveMissing(c, service.ErrNotFound)
		}
		page = n
	}
	l, err := w.svc.Archive.List(c.UserContext(), strings.Clone(c.Params("id")), page)
	if err == nil && page > 1 && len(l.Entries) == 0 {
		err = service.ErrNotFound
	}
	if err != nil {
		return archiveMissing(c, err)
	}
	return render(c, fiber.StatusOK, archive.ListPage(archive.ListView{T: archiveText(c), Base: archiveBase(l.PublicID), List: l}))
}

func (w *Web) archiveEntry(c *fiber.Ctx) error {
	archiveHeaders(c)
	id := strings.Clone(c.Params("id"))
	e, err := w.svc.Archive.Get(c.UserContext(), id, strings.Clone(c.Params("utr")))
	if err != nil {
		return archiveMissing(c, err)
	}
	return render(c, fiber.StatusOK, archive.EntryPage(archive.EntryView{T: archiveText(c), Base: archiveBase(id), Entry: e}))
}

// archiveMail is the archived copy itself, shown as "view in browser"
// shows a mail (see viewCSP).
func (w *Web) archiveMail(c *fiber.Ctx) error {
	archiveHeaders(c)
	e, err := w.svc.Archive.Get(c.UserContext(), strings.Clone(c.Params("id")), strings.Clone(c.Params("utr")))
	if err != nil {
		return archiveMissing(c, err)
	}
	c.Set(fiber.HeaderXFrameOptions, "SAMEORIGIN")
	c.Set(fiber.HeaderContentSecurityPolicy, archiveCSP)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.SendString(e.HTML)
}
