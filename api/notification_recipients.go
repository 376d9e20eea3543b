package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

func (a *API) listNotificationRecipients(c *fiber.Ctx) error {
	return a.cachedList(c, func() error {
		acct := account(c)
		return list(c, "notifications", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.NotificationRecipient) error) error {
			return a.svc.Notifications.Each(ctx, acct, f, fn)
		})
	})
}

func (a *API) saveNotificationRecipient(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := service.NotificationInput{EmailAddress: f.Get("email_address"), EmailOwner: f.Get("email_owner")}
	if _, err := a.svc.Notifications.Save(c.UserContext(), account(c), in); err != nil {
		return fail(c, err)
	}
	return success(c, "Added Successfully")
}

func (a *API) deleteNotificationRecipient(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "id")
	if err == nil {
		err = a.svc.Notifications.Delete(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return success(c, "Deleted Successfully")
}

func (a *API) bulkDeleteNotificationRecipients(c *fiber.Ctx) error {
	return a.bulkDelete(c, "", a.svc.Notifications.BulkDelete)
}
