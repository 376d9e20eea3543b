package web

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// streamCSV answers a CSV file written by write while it streams: the
// status is sent first, so an error there can only cut the file short
// (logged). Nothing of *fiber.Ctx is used inside the writer.
func streamCSV(c *fiber.Ctx, name string, write func(ctx context.Context, w io.Writer) error) error {
	bg := context.WithoutCancel(c.UserContext())
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Status(fiber.StatusOK)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		if err := write(bg, w); err != nil {
			slog.Error("web: CSV export cut short", "file", name, "err", err)
		}
	})
	return nil
}

// exportContacts downloads a contact type's or a segment's contacts as
// CSV, as GET api/contacts/export does (decisions.md 9). Errors:
// ErrNotFound, validation (neither id).
func (w *Web) exportContacts(c *fiber.Ctx) error {
	in := service.ExportInput{
		ContactTypeID: strings.Clone(c.Query("contact_type_id")),
		SegmentID:     strings.Clone(c.Query("segment_id")),
	}
	exp, err := w.svc.Contacts.Export(c.UserContext(), accountID(c), in)
	if err != nil {
		return err
	}
	return streamCSV(c, exp.FileName(), exp.WriteCSV)
}

// exportSendRecipients downloads a send's recipients with what became of
// each one's message. Errors: ErrNotFound.
func (w *Web) exportSendRecipients(c *fiber.Ctx) error {
	ss, err := w.sendParam(c)
	if err != nil {
		return err
	}
	acct := accountID(c)
	return streamCSV(c, "send-"+ss.Utr+"-recipients.csv", func(ctx context.Context, out io.Writer) error {
		return w.svc.SingleSends.WriteRecipientsCSV(ctx, acct, ss, out)
	})
}

// exportSendStatistics downloads a send's statistics and per-link clicks.
// Errors: ErrNotFound.
func (w *Web) exportSendStatistics(c *fiber.Ctx) error {
	ss, err := w.sendParam(c)
	if err != nil {
		return err
	}
	return streamCSV(c, "send-"+ss.Utr+"-statistics.csv", func(ctx context.Context, out io.Writer) error {
		return w.svc.SingleSends.WriteStatisticsCSV(ctx, ss, out)
	})
}
