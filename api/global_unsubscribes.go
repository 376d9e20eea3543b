package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

func (a *API) listGlobalUnsubscribes(c *fiber.Ctx) error {
	return a.cachedList(c, func() error {
		acct := account(c)
		return list(c, "unSubscribers", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.Unsubscriber) error) error {
			return a.svc.Unsubscribers.Each(ctx, acct, f, fn)
		})
	})
}

func (a *API) saveGlobalUnsubscribes(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.Unsubscribers.Add(c.UserContext(), account(c), f.Get("email_address")); err != nil {
		return fail(c, err)
	}
	return success(c, "Added Successfully")
}

func (a *API) deleteGlobalUnsubscribe(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "id")
	if err == nil {
		err = a.svc.Unsubscribers.Delete(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return success(c, "Deleted Successfully")
}

func (a *API) bulkDeleteGlobalUnsubscribes(c *fiber.Ctx) error {
	return a.bulkDelete(c, "", a.svc.Unsubscribers.BulkDelete)
}

// bulkDelete reads strIds and runs del, answering the spec's texts.
func (a *API) bulkDelete(c *fiber.Ctx, notFoundText string, del func(context.Context, int64, []int64) error) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	nf := []string{}
	if notFoundText != "" {
		nf = append(nf, notFoundText)
	}
	ids, err := parseIDs(f)
	if err == nil {
		err = del(c.UserContext(), account(c), ids)
	}
	if err != nil {
		return fail(c, err, nf...)
	}
	return success(c, "Deleted Successfully")
}
