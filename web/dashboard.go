package web

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/dashboard"
)

// dashboard shows the account's counts, read through the service's list
// iterators (in batches, so memory does not grow with the lists).
func (w *Web) dashboard(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	d := dashboard.Data{Name: user(c).Name}
	var err error
	if d.GlobalUnsubscribers, err = count(ctx, func(ctx context.Context, f service.ListFilter, fn func(*models.Unsubscriber) error) error {
		return w.svc.Unsubscribers.Each(ctx, acct, f, fn)
	}); err != nil {
		return err
	}
	err = w.svc.Groups.Each(ctx, acct, service.ListFilter{}, func(g *models.UnsubscribeGroupCount) error {
		d.Groups++
		d.GroupRecipients += g.UnsubscribeClientsCount
		return nil
	})
	if err != nil {
		return err
	}
	if d.NotificationRecipients, err = count(ctx, func(ctx context.Context, f service.ListFilter, fn func(*models.NotificationRecipient) error) error {
		return w.svc.Notifications.Each(ctx, acct, f, fn)
	}); err != nil {
		return err
	}
	return page(c, fiber.StatusOK, "Dashboard", views.NavDashboard, dashboard.Page(d))
}
