package web

import (
	"context"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/suppressions"
)

// globalAddresses is the account's global unsubscribers list.
func (w *Web) globalAddresses(c *fiber.Ctx) *addresses {
	acct, svc, token := accountID(c), w.svc.Unsubscribers, csrf(c)
	const base = "/suppressions/global"
	return &addresses{
		title: "Global unsubscribers",
		nav:   views.NavGlobal,
		list: suppressions.AddressList{
			ID: "global-list", ListURL: base, ActionBase: base, CSRF: token,
			EmptyTitle: "No global unsubscribers",
			EmptyText:  "Addresses added here never get mail from this account. People who unsubscribe from everything appear here too.",
		},
		form: suppressions.AddForm{ID: "global-add", Action: base, Title: "Add addresses", CSRF: token, Include: "#global-search"},
		page: func(l suppressions.AddressList, f suppressions.AddForm) templ.Component {
			return suppressions.GlobalPage(suppressions.Global{List: l, Form: f})
		},
		each: func(ctx context.Context, f service.ListFilter, fn func(*models.Unsubscriber) error) error {
			return svc.Each(ctx, acct, f, fn)
		},
		add:       func(ctx context.Context, list string) (int, error) { return svc.Add(ctx, acct, list) },
		remove:    func(ctx context.Context, id int64) error { return svc.Delete(ctx, acct, id) },
		removeAll: func(ctx context.Context, ids []int64) error { return svc.BulkDelete(ctx, acct, ids) },
	}
}

func (w *Web) listGlobal(c *fiber.Ctx) error { return w.showAddresses(c, w.globalAddresses(c)) }

func (w *Web) addGlobal(c *fiber.Ctx) error { return w.addAddresses(c, w.globalAddresses(c)) }

func (w *Web) deleteGlobal(c *fiber.Ctx) error {
	return w.deleteAddress(c, w.globalAddresses(c), "id")
}

func (w *Web) bulkDeleteGlobal(c *fiber.Ctx) error {
	return w.bulkDeleteAddresses(c, w.globalAddresses(c))
}
