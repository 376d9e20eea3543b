package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

// The segment recipient list spells its not-found text this way (spec: Errors).
const textRecordNotFoundLower = "Record not found"

func (a *API) listSegments(c *fiber.Ctx) error {
	acct := account(c)
	return list(c, "segments", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.SegmentCount) error) error {
		return a.svc.Segments.Each(ctx, acct, f, fn)
	})
}

func segmentInput(f *form) service.SegmentInput {
	return service.SegmentInput{
		ContactTypeID: f.Get("contact_type_id"), SegmentName: f.Get("segment_name"),
		SelectField: f.Array("select_field"), SelectOperator: f.Array("select_operator"), Value: f.Array("value"),
		QueryType: f.Get("query_type"),
	}
}

func (a *API) storeSegment(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.Segments.Create(c.UserContext(), account(c), segmentInput(f)); err != nil {
		return fail(c, err)
	}
	return success(c, "Saved Successfully")
}

func (a *API) updateSegment(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.Segments.Update(c.UserContext(), account(c), updateID(c, f, "segment_id"), segmentInput(f)); err != nil {
		return fail(c, err)
	}
	return success(c, "Updated Successfully")
}

func (a *API) deleteSegment(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "segment_id")
	if err == nil {
		err = a.svc.Segments.Delete(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return successInErrors(c, "Deleted Successfully")
}

func (a *API) listSegmentEmails(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "segment_id")
	if err != nil {
		return fail(c, err, textRecordNotFoundLower)
	}
	acct := account(c)
	return list(c, "contactEmails", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.SegmentRecipient) error) error {
		return a.svc.Segments.EachEmail(ctx, acct, id, f, fn)
	}, textRecordNotFoundLower)
}

func (a *API) storeSegmentEmail(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := service.SegmentEmailInput{SegmentID: f.Get("segment_id"), FirstName: f.Get("first_name"), LastName: f.Get("last_name"), Email: f.Get("email")}
	if _, err := a.svc.Segments.AddEmail(c.UserContext(), account(c), in); err != nil {
		return fail(c, err)
	}
	return success(c, "Added Successfully")
}

func (a *API) deleteSegmentEmail(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "segment_recipient_id")
	if err == nil {
		err = a.svc.Segments.DeleteEmail(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return success(c, "Deleted Successfully")
}
