package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
	"herald/views/contacts"
	"herald/views/segments"
)

// whySegment explains why an address (?email=) or a contact (?contact=)
// is in or out of the segment; without either it shows the form. htmx
// gets the result only.
func (w *Web) whySegment(c *fiber.Ctx) error {
	seg, err := w.segmentParam(c)
	if err != nil {
		return err
	}
	names, _, err := w.typeNames(c)
	if err != nil {
		return err
	}
	d := segments.Why{Segment: *seg, TypeName: names[seg.ContactTypeID]}
	ctx, acct := c.UserContext(), accountID(c)
	status := fiber.StatusOK
	var x *service.Explanation
	switch {
	case c.Query("contact") != "":
		id, err := service.ParseID(c.Query("contact"))
		if err != nil {
			return err
		}
		if x, err = w.svc.Segments.Explain(ctx, acct, seg.ID, id); err != nil {
			return err
		}
		d.Email = x.Email
	case c.Context().QueryArgs().Has("email"):
		d.Email = strings.Clone(c.Query("email"))
		x, err = w.svc.Segments.ExplainEmail(ctx, acct, seg.ID, d.Email)
		if isValidation(err) {
			d.Errors, status = fieldErrors(err).For("email"), fiber.StatusUnprocessableEntity
		} else if err != nil {
			return err
		}
	}
	if x != nil {
		d.Result = whyResult(x)
	}
	c.Vary("HX-Request")
	if partial(c) {
		return render(c, status, segments.WhyResultView(d))
	}
	return page(c, status, "Why in or out: "+seg.SegmentName, views.NavSegments, segments.WhyPage(d))
}

// whyResult is the verdict as the page shows it: labels for fields and
// operators, values joined.
func whyResult(x *service.Explanation) *segments.WhyResult {
	r := &segments.WhyResult{Email: x.Email, ContactType: x.ContactType, In: x.In, Reason: string(x.Reason), Or: x.Or, ByHand: x.ByHand, Stored: x.Stored}
	if x.Contact != nil {
		r.ContactID = x.Contact.ID
	}
	for _, k := range x.Conditions {
		row := segments.WhyRow{Field: conditionFieldLabel(k.Field, k.Type), Operator: operatorLabel(k.Operator, k.Type), Own: k.Value, Met: k.Met, Ignored: k.Ignored}
		sep := ", "
		if k.Operator == "in" {
			sep = " or "
		}
		vals := k.Values
		if k.Type == "engagement" {
			// Levels by the console's names, as the contact page shows them.
			vals = make([]string, len(k.Values))
			for i, v := range k.Values {
				vals[i] = contacts.LevelOf(v).Name
			}
			if row.Own != "" {
				row.Own = contacts.LevelOf(row.Own).Name
			}
		}
		row.Compared = strings.Join(vals, sep)
		if !k.Met && !k.Ignored {
			r.Failed++
		}
		r.Rows = append(r.Rows, row)
	}
	return r
}

func conditionFieldLabel(name, typ string) string {
	if typ == "created_at" {
		return "Date added"
	}
	return service.FieldLabel(name)
}
