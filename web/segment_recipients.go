package web

import (
	"context"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/segments"
)

// recipientsPage reads the page q of a segment's recipients.
func (w *Web) recipientsPage(c *fiber.Ctx, seg *models.Segment, q views.ListQuery) (segments.RecipientList, error) {
	acct := accountID(c)
	rows, pager, err := readPage(c.UserContext(), q, segments.SegmentURL(seg.ID), func(ctx context.Context, f service.ListFilter, fn func(*models.SegmentRecipient) error) error {
		return w.svc.Segments.EachEmail(ctx, acct, seg.ID, f, fn)
	})
	if err != nil {
		return segments.RecipientList{}, err
	}
	total, err := w.svc.Segments.RecipientCount(c.UserContext(), acct, seg.ID)
	return segments.RecipientList{SegmentID: seg.ID, Rows: rows, Query: pager.Query, Pager: pager, CSRF: csrf(c), Total: total}, err
}

// recipientsData is the whole recipients page with form as its add form.
func (w *Web) recipientsData(c *fiber.Ctx, seg *models.Segment, q views.ListQuery, form segments.AddForm) (segments.Recipients, error) {
	l, err := w.recipientsPage(c, seg, q)
	if err != nil {
		return segments.Recipients{}, err
	}
	names, _, err := w.typeNames(c)
	if err != nil {
		return segments.Recipients{}, err
	}
	form.SegmentID, form.CSRF = seg.ID, csrf(c)
	return segments.Recipients{Segment: *seg, TypeName: names[seg.ContactTypeID], List: l, Form: form}, nil
}

func (w *Web) listSegmentRecipients(c *fiber.Ctx) error {
	seg, err := w.segmentParam(c)
	if err != nil {
		return err
	}
	d, err := w.recipientsData(c, seg, listQuery(c), segments.AddForm{})
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, segments.RecipientListView(d.List, false))
	}
	return page(c, fiber.StatusOK, seg.SegmentName, views.NavSegments, segments.RecipientsPage(d))
}

// addSegmentRecipient adds an address by hand: to htmx the emptied form,
// the list (out of band) and a flash message, or the form with its
// errors (422).
func (w *Web) addSegmentRecipient(c *fiber.Ctx) error {
	seg, err := w.segmentParam(c)
	if err != nil {
		return err
	}
	form := segments.AddForm{FirstName: formValue(c, "first_name"), LastName: formValue(c, "last_name"), Email: formValue(c, "email")}
	r, err := w.svc.Segments.AddEmail(c.UserContext(), accountID(c), service.SegmentEmailInput{
		SegmentID: strconv.FormatInt(seg.ID, 10), FirstName: form.FirstName, LastName: form.LastName, Email: form.Email,
	})
	if isValidation(err) {
		form.Errors = fieldErrors(err)
		for field, msgs := range form.Errors {
			if field != "first_name" && field != "last_name" && field != "email" {
				form.Other = append(form.Other, msgs...)
			}
		}
		d, derr := w.recipientsData(c, seg, views.ListQuery{Page: 1}, form)
		if derr != nil {
			return derr
		}
		if partial(c) {
			return render(c, fiber.StatusUnprocessableEntity, segments.AddFormView(d.Form))
		}
		return page(c, fiber.StatusUnprocessableEntity, seg.SegmentName, views.NavSegments, segments.RecipientsPage(d))
	}
	if err != nil {
		return err
	}
	msg := r.Email + " added to the segment."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(segments.SegmentURL(seg.ID), fiber.StatusSeeOther)
	}
	d, err := w.recipientsData(c, seg, listQuery(c), segments.AddForm{})
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, segments.AddFormView(d.Form), segments.RecipientListView(d.List, true), flashOOB(views.FlashSuccess, msg))
}

// deleteSegmentRecipient removes one recipient of the segment.
func (w *Web) deleteSegmentRecipient(c *fiber.Ctx) error {
	seg, err := w.segmentParam(c)
	if err != nil {
		return err
	}
	rid, err := service.ParseID(c.Params("rid"))
	if err != nil {
		return err
	}
	if err := w.svc.Segments.DeleteEmailOf(c.UserContext(), accountID(c), seg.ID, rid); err != nil {
		return err
	}
	const msg = "Recipient removed."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(listBack(segments.SegmentURL(seg.ID), c), fiber.StatusSeeOther)
	}
	l, err := w.recipientsPage(c, seg, listQuery(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, segments.RecipientListView(l, false), flashOOB(views.FlashSuccess, msg))
}
