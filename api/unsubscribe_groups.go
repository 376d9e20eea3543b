package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

func (a *API) listGroups(c *fiber.Ctx) error {
	return a.cachedList(c, func() error {
		acct := account(c)
		return list(c, "unsubscribesGroups", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.UnsubscribeGroupCount) error) error {
			return a.svc.Groups.Each(ctx, acct, f, fn)
		})
	})
}

func groupInput(f *form) service.GroupInput {
	return service.GroupInput{GroupName: f.Get("group_name"), Description: f.Get("description"), IsDisplay: f.Get("is_display")}
}

func (a *API) saveGroup(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.Groups.Create(c.UserContext(), account(c), groupInput(f)); err != nil {
		return fail(c, err)
	}
	return success(c, "Saved Successfully")
}

func (a *API) groupDetails(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "id")
	if err != nil {
		return fail(c, err)
	}
	g, err := a.svc.Groups.Get(c.UserContext(), account(c), id)
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"unsubscribesGroup": g})
}

func (a *API) updateGroup(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.Groups.Update(c.UserContext(), account(c), updateID(c, f, "id"), groupInput(f)); err != nil {
		return fail(c, err)
	}
	return success(c, "Updated Successfully")
}

func (a *API) addGroupRecipients(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := service.RecipientsInput{GroupID: f.Get("unsubscribe_groups_id"), EmailAddress: f.Get("email_address")}
	if _, err := a.svc.Groups.AddRecipients(c.UserContext(), account(c), in); err != nil {
		return fail(c, err)
	}
	return success(c, "Added Successfully")
}

func (a *API) listGroupRecipients(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "groupId")
	if err != nil {
		return fail(c, err)
	}
	acct := account(c)
	return a.cachedList(c, func() error {
		return list(c, "recipients", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.Unsubscriber) error) error {
			return a.svc.Groups.EachRecipient(ctx, acct, id, f, fn)
		})
	})
}

func (a *API) deleteGroupRecipient(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "id")
	if err == nil {
		err = a.svc.Groups.DeleteRecipient(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return success(c, "Deleted Successfully")
}

func (a *API) bulkDeleteGroupRecipients(c *fiber.Ctx) error {
	return a.bulkDelete(c, "", a.svc.Groups.BulkDeleteRecipients)
}
