package web

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/notifications"
)

const notificationsURL = "/notifications"

// notificationsPage reads the page q of the account's recipients.
func (w *Web) notificationsPage(c *fiber.Ctx, q views.ListQuery) (notifications.List, error) {
	acct := accountID(c)
	rows, pager, err := readPage(c.UserContext(), q, notificationsURL, func(ctx context.Context, f service.ListFilter, fn func(*models.NotificationRecipient) error) error {
		return w.svc.Notifications.Each(ctx, acct, f, fn)
	})
	return notifications.List{Rows: rows, Query: pager.Query, Pager: pager, CSRF: csrf(c)}, err
}

func (w *Web) listNotifications(c *fiber.Ctx) error {
	l, err := w.notificationsPage(c, listQuery(c))
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, notifications.ListView(l, false))
	}
	d := notifications.Data{List: l, Form: notifications.Form{CSRF: csrf(c)}}
	return page(c, fiber.StatusOK, "Notification recipients", views.NavNotifications, notifications.Page(d))
}

// addNotification saves a recipient (renaming one already there).
func (w *Web) addNotification(c *fiber.Ctx) error {
	f := notifications.Form{EmailAddress: formValue(c, "email_address"), EmailOwner: formValue(c, "email_owner"), CSRF: csrf(c)}
	r, err := w.svc.Notifications.Save(c.UserContext(), accountID(c), service.NotificationInput{EmailAddress: f.EmailAddress, EmailOwner: f.EmailOwner})
	if isValidation(err) {
		f.Errors = fieldErrors(err)
		if partial(c) {
			return render(c, fiber.StatusUnprocessableEntity, notifications.AddForm(f))
		}
		l, lerr := w.notificationsPage(c, views.ListQuery{Page: 1})
		if lerr != nil {
			return lerr
		}
		return page(c, fiber.StatusUnprocessableEntity, "Notification recipients", views.NavNotifications, notifications.Page(notifications.Data{List: l, Form: f}))
	}
	if err != nil {
		return err
	}
	msg := r.EmailAddress + " will be notified."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(notificationsURL, fiber.StatusSeeOther)
	}
	l, err := w.notificationsPage(c, listQuery(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, notifications.AddForm(notifications.Form{CSRF: csrf(c)}), notifications.ListView(l, true), flashOOB(views.FlashSuccess, msg))
}

func (w *Web) deleteNotification(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err == nil {
		err = w.svc.Notifications.Delete(c.UserContext(), accountID(c), id)
	}
	if err != nil {
		return err
	}
	return w.notificationsChanged(c, "Recipient deleted.")
}

func (w *Web) bulkDeleteNotifications(c *fiber.Ctx) error {
	ids, err := parseSelection(c)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return w.refuse(c, listBack(notificationsURL, c), "Select at least one recipient first.")
	}
	if err := w.svc.Notifications.BulkDelete(c.UserContext(), accountID(c), ids); err != nil {
		return err
	}
	return w.notificationsChanged(c, deletedMessage(len(ids), "flash.deleted_recipients"))
}

// notificationsChanged answers a deletion: the list to htmx, a redirect
// back to it otherwise.
func (w *Web) notificationsChanged(c *fiber.Ctx, message string) error {
	if !partial(c) {
		w.flash(c, views.FlashSuccess, message)
		return c.Redirect(listBack(notificationsURL, c), fiber.StatusSeeOther)
	}
	l, err := w.notificationsPage(c, listQuery(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, notifications.ListView(l, false), flashOOB(views.FlashSuccess, message))
}
