package web

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/outbox"
)

// outboxPage reads the page q of the account's outbox (without bodies).
func (w *Web) outboxPage(c *fiber.Ctx, q views.ListQuery) (outbox.List, error) {
	acct := accountID(c)
	rows, pager, err := readPage(c.UserContext(), q, outbox.ListURL, func(ctx context.Context, f service.ListFilter, fn func(*models.OutboxMessage) error) error {
		return w.svc.Outbox.Each(ctx, acct, f, fn)
	})
	return outbox.List{Rows: rows, Query: pager.Query, Pager: pager}, err
}

func (w *Web) listOutbox(c *fiber.Ctx) error {
	l, err := w.outboxPage(c, listQuery(c))
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, outbox.ListView(l))
	}
	return page(c, fiber.StatusOK, "Outbox", views.NavOutbox, outbox.ListPage(l))
}

// outboxMessage reads the route's message of the account. Errors: ErrNotFound.
func (w *Web) outboxMessage(c *fiber.Ctx) (*models.OutboxMessage, error) {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return nil, err
	}
	return w.svc.Outbox.Get(c.UserContext(), accountID(c), id)
}

// showOutboxMessage opens one message. The page shows its HTML part in a
// sandboxed frame (see previewCSP for the policy the frame inherits).
func (w *Web) showOutboxMessage(c *fiber.Ctx) error {
	msg, err := w.outboxMessage(c)
	if err != nil {
		return err
	}
	m := readMail(msg.Message)
	m.ID, m.Subject, m.CreatedAt = msg.ID, msg.Subject, msg.CreatedAt
	// Looking at a mail here must not count as its recipient opening or
	// clicking it; its links open in a tab of their own (herald's pages
	// refuse to be framed).
	ctx, acct := c.UserContext(), accountID(c)
	if m.HTML != "" {
		m.HTML = linksInNewTab(w.svc.Tracking.Untracked(ctx, acct, m.HTML))
	}
	m.Text = w.svc.Tracking.UntrackedText(ctx, acct, m.Text)
	c.Set(fiber.HeaderContentSecurityPolicy, previewCSP)
	return page(c, fiber.StatusOK, subjectOr(msg.Subject), views.NavOutbox, outbox.MessagePage(m))
}

func subjectOr(s string) string {
	if s == "" {
		return "(no subject)"
	}
	return s
}

// rawOutboxMessage answers the message's source as a file to download.
func (w *Web) rawOutboxMessage(c *fiber.Ctx) error {
	msg, err := w.outboxMessage(c)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "message/rfc822")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="message-`+views.Itoa(msg.ID)+`.eml"`)
	return c.Send(msg.Message)
}

// linksInNewTab makes the links of a mail shown in the outbox's frame
// open in a new tab: a <base target> at the start of its head.
func linksInNewTab(doc string) string {
	const base = `<base target="_blank">`
	lower := strings.ToLower(doc)
	if i := strings.Index(lower, "<head"); i >= 0 {
		if j := strings.IndexByte(doc[i:], '>'); j >= 0 {
			return doc[:i+j+1] + base + doc[i+j+1:]
		}
	}
	return base + doc
}
