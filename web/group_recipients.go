package web

import (
	"context"
	"strconv"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/suppressions"
)

// groupAddresses is the recipients list of the group named by the route,
// which must be the account's (else ErrNotFound).
func (w *Web) groupAddresses(c *fiber.Ctx) (*addresses, error) {
	acct, svc, token := accountID(c), w.svc.Groups, csrf(c)
	gid, err := service.ParseID(c.Params("id"))
	if err != nil {
		return nil, err
	}
	g, err := svc.Get(c.UserContext(), acct, gid)
	if err != nil {
		return nil, err
	}
	base := suppressions.GroupURL(g.ID)
	return &addresses{
		title: g.GroupName,
		nav:   views.NavGroups,
		list: suppressions.AddressList{
			ID: "recipients-list", ListURL: base, ActionBase: base + "/recipients", CSRF: token,
			EmptyTitle: "Nobody has left this group",
			EmptyText:  "Recipients who unsubscribe from this group appear here. You can add addresses yourself too.",
		},
		form: suppressions.AddForm{ID: "recipients-add", Action: base + "/recipients", Title: "Add recipients", CSRF: token, Include: "#recipients-search"},
		page: func(l suppressions.AddressList, f suppressions.AddForm) templ.Component {
			return suppressions.RecipientsPage(suppressions.Recipients{Group: *g, List: l, Form: f})
		},
		each: func(ctx context.Context, f service.ListFilter, fn func(*models.Unsubscriber) error) error {
			return svc.EachRecipient(ctx, acct, gid, f, fn)
		},
		add: func(ctx context.Context, list string) (int, error) {
			return svc.AddRecipients(ctx, acct, service.RecipientsInput{GroupID: strconv.FormatInt(gid, 10), EmailAddress: list})
		},
		remove:    func(ctx context.Context, id int64) error { return svc.DeleteRecipientsOf(ctx, acct, gid, []int64{id}) },
		removeAll: func(ctx context.Context, ids []int64) error { return svc.DeleteRecipientsOf(ctx, acct, gid, ids) },
	}, nil
}

func (w *Web) listGroupRecipients(c *fiber.Ctx) error {
	a, err := w.groupAddresses(c)
	if err != nil {
		return err
	}
	return w.showAddresses(c, a)
}

func (w *Web) addGroupRecipients(c *fiber.Ctx) error {
	a, err := w.groupAddresses(c)
	if err != nil {
		return err
	}
	return w.addAddresses(c, a)
}

func (w *Web) deleteGroupRecipient(c *fiber.Ctx) error {
	a, err := w.groupAddresses(c)
	if err != nil {
		return err
	}
	return w.deleteAddress(c, a, "rid")
}

func (w *Web) bulkDeleteGroupRecipients(c *fiber.Ctx) error {
	a, err := w.groupAddresses(c)
	if err != nil {
		return err
	}
	return w.bulkDeleteAddresses(c, a)
}
