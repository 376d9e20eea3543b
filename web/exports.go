package web

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/exports"
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

// startContactsExport queues a background export of a contact type's or
// a segment's contacts (the console's Export CSV) and shows the Exports
// page. Errors: ErrNotFound, validation; over the cap, the Exports page
// says why (409).
func (w *Web) startContactsExport(c *fiber.Ctx) error {
	in := service.ExportInput{ContactTypeID: formValue(c, "contact_type_id"), SegmentID: formValue(c, "segment_id")}
	job, err := w.svc.Exports.StartContacts(c.UserContext(), accountID(c), in)
	return w.exportStarted(c, job, err)
}

// startRecipientsExport queues a background export of a send's
// recipients. Errors: as startContactsExport's.
func (w *Web) startRecipientsExport(c *fiber.Ctx) error {
	job, err := w.svc.Exports.StartRecipients(c.UserContext(), accountID(c), strings.Clone(c.Params("utr")))
	return w.exportStarted(c, job, err)
}

func (w *Web) exportStarted(c *fiber.Ctx, job *models.ExportJob, err error) error {
	if e := (*service.Error)(nil); errors.Is(err, service.ErrTooManyExports) && errors.As(err, &e) {
		return w.exportsPage(c, fiber.StatusConflict, e.Message)
	}
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Export started: "+job.Name+". Its file appears here when it is ready.")
	return c.Redirect(exports.URL, fiber.StatusSeeOther)
}

// listExports shows the account's exports; asked by htmx (the list's
// polling while one runs), only the list.
func (w *Web) listExports(c *fiber.Ctx) error {
	return w.exportsPage(c, fiber.StatusOK, "")
}

func (w *Web) exportsPage(c *fiber.Ctx, status int, alert string) error {
	jobs, active, err := w.svc.Exports.List(c.UserContext(), accountID(c))
	if err != nil {
		return err
	}
	d := exports.Data{Jobs: jobs, Active: active, Alert: alert}
	c.Vary("HX-Request")
	if partial(c) && alert == "" {
		return render(c, status, exports.List(d))
	}
	return page(c, status, "Exports", views.NavExports, exports.Page(d))
}

// downloadExport streams a finished export's file, part by part.
// Errors: ErrNotFound (not ready, failed, expired, another account's).
func (w *Web) downloadExport(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	job, write, err := w.svc.Exports.Download(c.UserContext(), accountID(c), id)
	if err != nil {
		return err
	}
	if err := streamCSV(c, job.FileName, write); err != nil {
		return err
	}
	// The size is known: a browser shows the download's progress, and a
	// file cut short (the export expired meanwhile) is seen as such.
	c.Response().Header.SetContentLength(int(job.Bytes))
	return nil
}
