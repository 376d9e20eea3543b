package api

import (
	"bufio"
	"context"
	"log/slog"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// exportContacts streams the contacts of one contact type or segment as
// CSV (decisions.md 9). The export is checked first, so a missing or
// another account's id is a normal failure envelope; then the file is
// written in batches while it streams. Nothing of *fiber.Ctx is used in
// the writer: an error there can only cut the file short (logged).
func (a *API) exportContacts(c *fiber.Ctx) error {
	in := service.ExportInput{
		ContactTypeID: strings.Clone(c.Query("contact_type_id")),
		SegmentID:     strings.Clone(c.Query("segment_id")),
	}
	exp, err := a.svc.Contacts.Export(c.UserContext(), account(c), in)
	if err != nil {
		return fail(c, err)
	}
	bg := context.WithoutCancel(c.UserContext())
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+exp.FileName()+`"`)
	c.Status(fiber.StatusOK)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		if err := exp.WriteCSV(bg, w); err != nil {
			slog.Error("api: contacts export cut short", "err", err)
		}
	})
	return nil
}
