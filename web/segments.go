package web

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/contacts"
	"herald/views/segments"
)

// segmentsPage reads the page q of the account's segments with their
// recipient counts and the names of their contact types.
func (w *Web) segmentsPage(c *fiber.Ctx, q views.ListQuery) (segments.List, error) {
	acct := accountID(c)
	rows, pager, err := readPage(c.UserContext(), q, segments.ListURL, func(ctx context.Context, f service.ListFilter, fn func(*models.SegmentCount) error) error {
		return w.svc.Segments.Each(ctx, acct, f, fn)
	})
	l := segments.List{Query: pager.Query, Pager: pager, CSRF: csrf(c)}
	if err != nil {
		return l, err
	}
	names, _, err := w.typeNames(c)
	if err != nil {
		return l, err
	}
	for _, r := range rows {
		l.Rows = append(l.Rows, segments.Row{SegmentCount: r, TypeName: names[r.ContactTypeID]})
	}
	return l, nil
}

func (w *Web) listSegments(c *fiber.Ctx) error {
	l, err := w.segmentsPage(c, listQuery(c))
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, segments.ListView(l))
	}
	types, err := w.svc.ContactTypes.All(c.UserContext(), accountID(c))
	if err != nil {
		return err
	}
	return page(c, fiber.StatusOK, "Segments", views.NavSegments, segments.ListPage(l, len(types) > 0))
}

// deleteSegment deletes a segment (the page asked first).
func (w *Web) deleteSegment(c *fiber.Ctx) error {
	seg, err := w.segmentParam(c)
	if err != nil {
		return err
	}
	if err := w.svc.Segments.Delete(c.UserContext(), accountID(c), seg.ID); err != nil {
		return err
	}
	msg := "Segment “" + seg.SegmentName + "” deleted."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(listBack(segments.ListURL, c), fiber.StatusSeeOther)
	}
	l, err := w.segmentsPage(c, listQuery(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, segments.ListView(l), flashOOB(views.FlashSuccess, msg))
}

// segmentParam reads the route's segment and finds it. Errors: ErrNotFound.
func (w *Web) segmentParam(c *fiber.Ctx) (*models.Segment, error) {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return nil, err
	}
	return w.svc.Segments.Get(c.UserContext(), accountID(c), id)
}

// --- The builder

// fieldChoices are the fields a condition may test: the email, the other
// reserved fields, the creation date and the account's custom fields.
func fieldChoices(customs []models.Field) []segments.FieldChoice {
	out := []segments.FieldChoice{{Name: "email", Label: "Email", Type: "text"}}
	for _, name := range service.ReservedFieldNames {
		if name != "email" {
			out = append(out, segments.FieldChoice{Name: name, Label: service.FieldLabel(name), Type: "text"})
		}
	}
	out = append(out, segments.FieldChoice{Name: "created_at", Label: "Date added", Type: "created_at"})
	out = append(out, segments.FieldChoice{Name: "tags", Label: "Tags", Type: "tags"})
	out = append(out, segments.FieldChoice{Name: service.EngagementField, Label: "Engagement", Type: "engagement"})
	for _, f := range customs {
		out = append(out, segments.FieldChoice{Name: f.FieldName, Label: service.FieldLabel(f.FieldName), Type: f.FieldType, Custom: true})
	}
	return out
}

// operatorLabel names an operator for people; the words of greater and
// less than follow the field's type.
func operatorLabel(op, fieldType string) string {
	dates := fieldType == "datetime-local" || fieldType == "created_at"
	if fieldType == "tags" {
		switch op {
		case "contains":
			return "has the tag"
		case "not_contains":
			return "does not have the tag"
		}
	}
	switch op {
	case "equals":
		return "is"
	case "not_equals":
		return "is not"
	case "contains":
		return "contains"
	case "not_contains":
		return "does not contain"
	case "starts_with":
		return "starts with"
	case "ends_with":
		return "ends with"
	case "is_empty":
		return "is empty"
	case "is_not_empty":
		return "is not empty"
	case "greater_than":
		if dates {
			return "is after"
		}
		return "is greater than"
	case "less_than":
		if dates {
			return "is before"
		}
		return "is less than"
	case "in":
		return "is one of"
	}
	return op
}

// condition shapes one condition for the builder: the operators of its
// field's type (an operator that does not fit the field becomes the
// first that does), and the input its value needs.
func condition(fields *[]segments.FieldChoice, field, op, value string) segments.Condition {
	c := segments.Condition{Field: field, Operator: op, Value: value}
	typ := ""
	for _, f := range *fields {
		if f.Name == field {
			typ = f.Type
			break
		}
	}
	if typ == "" {
		if field == "" {
			c.Field, typ = "email", "text"
		} else {
			// A field deleted since the segment was saved: shown as it is,
			// and refused on saving.
			*fields = append(*fields, segments.FieldChoice{Name: field, Label: field + " (deleted)", Type: "text", Custom: true})
			typ = "text"
		}
	}
	ops := service.OperatorsFor(typ)
	found := false
	for _, o := range ops {
		c.Operators = append(c.Operators, views.Option{Value: o, Label: operatorLabel(o, typ)})
		found = found || o == op
	}
	if !found {
		c.Operator = ops[0]
	}
	switch {
	case c.Operator == "is_empty" || c.Operator == "is_not_empty":
		c.NoValue = true
	case c.Operator == "in":
		c.Several, c.InputType = true, "text"
		if typ == "engagement" {
			for _, l := range contacts.EngagementLevels {
				c.Choices = append(c.Choices, views.Option{Value: l.Level, Label: l.Name})
			}
		}
	case typ == "engagement":
		// One of the levels, by the console's names (views/contacts).
		for _, l := range contacts.EngagementLevels {
			c.Choices = append(c.Choices, views.Option{Value: l.Level, Label: l.Name})
		}
		c.InputType = "text"
	case typ == "number":
		c.InputType = "number"
	case typ == "datetime-local" || typ == "created_at":
		c.InputType = "datetime-local"
	default:
		c.InputType = "text"
	}
	return c
}

// conditionKey splits a validation key like "value.2" into its control
// and the condition's index.
func conditionKey(key string) (control string, i int, ok bool) {
	name, idx, found := strings.Cut(key, ".")
	if !found {
		return "", 0, false
	}
	n, err := strconv.Atoi(idx)
	if err != nil || n < 0 {
		return "", 0, false
	}
	switch name {
	case "select_field", "select_operator", "value":
		return name, n, true
	}
	return "", 0, false
}

// conditionMessage words a condition's message for people: the service
// names the control by its key ("The select field.0 field is required.").
func conditionMessage(key, control, msg string) string {
	word := map[string]string{"select_field": "field", "select_operator": "operator", "value": "value"}[control]
	return strings.Replace(msg, service.Label(key), word, 1)
}

// builderOf fills the builder's choices and conditions. The lists come
// from a form or a stored segment; errs places the messages beside their
// controls.
func (w *Web) builderOf(c *fiber.Ctx, b segments.Builder, fields, ops, values []string, errs views.Errors) (segments.Builder, error) {
	ctx, acct := c.UserContext(), accountID(c)
	types, err := w.svc.ContactTypes.All(ctx, acct)
	if err != nil {
		return b, err
	}
	customs, err := w.svc.Fields.Custom(ctx, acct)
	if err != nil {
		return b, err
	}
	b.Types, b.CSRF = types, csrf(c)
	b.Fields = fieldChoices(customs)
	n := max(len(fields), len(ops))
	b.Conditions = make([]segments.Condition, 0, n)
	at := func(l []string, i int) string {
		if i < len(l) {
			return l[i]
		}
		return ""
	}
	for i := range n {
		b.Conditions = append(b.Conditions, condition(&b.Fields, at(fields, i), at(ops, i), at(values, i)))
	}
	b.Errors = views.Errors{}
	for key, msgs := range errs {
		control, i, ok := conditionKey(key)
		switch {
		case ok && i < len(b.Conditions):
			for _, m := range msgs {
				m = conditionMessage(key, control, m)
				ce := &b.Conditions[i].Errors
				switch control {
				case "select_field":
					ce.Field = append(ce.Field, m)
				case "select_operator":
					ce.Operator = append(ce.Operator, m)
				default:
					ce.Value = append(ce.Value, m)
				}
			}
		case key == "segment_name" || key == "contact_type_id" || key == "query_type":
			b.Errors[key] = msgs
		default:
			b.Other = append(b.Other, msgs...)
		}
	}
	return b, nil
}

// segmentForm reads the builder's form: the segment's input and the
// builder as it was on screen.
func segmentForm(c *fiber.Ctx) (service.SegmentInput, segments.Builder) {
	in := service.SegmentInput{
		ContactTypeID: formValue(c, "contact_type_id"), SegmentName: formValue(c, "segment_name"),
		SelectField: formList(c, "select_field"), SelectOperator: formList(c, "select_operator"), Value: formList(c, "value"),
		QueryType: formValue(c, "query_type"),
	}
	b := segments.Builder{Name: in.SegmentName, ContactTypeID: in.ContactTypeID, QueryType: strings.ToLower(strings.TrimSpace(in.QueryType))}
	b.ID, _ = strconv.ParseInt(formValue(c, "segment_id"), 10, 64)
	return in, b
}

// countOf is the live count of the input: the contacts of its type that
// match its conditions, or the messages saying why they cannot be
// counted. Errors: ErrNotFound (a contact type not the account's).
func (w *Web) countOf(c *fiber.Ctx, in service.SegmentInput) (segments.Count, error) {
	if strings.TrimSpace(in.ContactTypeID) == "" {
		return segments.Count{Messages: []string{"Choose a contact type to see how many of its contacts match."}}, nil
	}
	ctx, acct := c.UserContext(), accountID(c)
	n, err := w.svc.Segments.Count(ctx, acct, in)
	if isValidation(err) {
		if hint := unfilledValues(fieldProblems(err)); hint != "" {
			return segments.Count{Hint: hint}, nil
		}
		return segments.Count{Messages: countMessages(fieldErrors(err))}, nil
	}
	if err != nil {
		return segments.Count{}, err
	}
	typeID, _ := service.ParseID(in.ContactTypeID)
	all, err := w.svc.Contacts.Count(ctx, acct, service.ContactFilter{ContactTypeID: typeID})
	if err != nil {
		return segments.Count{}, err
	}
	return segments.Count{Known: true, Matching: n, OfType: all}, nil
}

// unfilledValues is the live count's hint when the only thing missing is
// the value of conditions just added: nothing is wrong yet, so it asks
// for the values rather than showing an error (saving still reports
// them). "" when any other problem stands.
func unfilledValues(problems service.Problems) string {
	var conds []int
	for key, ps := range problems {
		control, i, ok := conditionKey(key)
		if !ok || control != "value" {
			return ""
		}
		for _, pr := range ps {
			if pr.Reason != service.ReasonRequired {
				return ""
			}
		}
		conds = append(conds, i+1)
	}
	if len(conds) == 0 {
		return ""
	}
	sort.Ints(conds)
	names := make([]string, len(conds))
	for i, n := range conds {
		names[i] = strconv.Itoa(n)
	}
	which := "condition " + names[0]
	if len(names) > 1 {
		which = "conditions " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	return "Give " + which + " a value to see how many contacts match."
}

// countMessages orders the messages of a count that failed: the
// segment's own first, then condition by condition, each named.
func countMessages(errs views.Errors) []string {
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	rank := func(k string) (int, int, string) {
		if control, i, ok := conditionKey(k); ok {
			order := map[string]int{"select_field": 0, "select_operator": 1, "value": 2}[control]
			return 1, i*3 + order, k
		}
		return 0, 0, k
	}
	sort.Slice(keys, func(a, b int) bool {
		ga, ia, ka := rank(keys[a])
		gb, ib, kb := rank(keys[b])
		if ga != gb {
			return ga < gb
		}
		if ia != ib {
			return ia < ib
		}
		return ka < kb
	})
	var out []string
	for _, k := range keys {
		for _, m := range errs[k] {
			if control, i, ok := conditionKey(k); ok {
				m = "Condition " + strconv.Itoa(i+1) + ": " + conditionMessage(k, control, m)
			}
			out = append(out, m)
		}
	}
	return out
}

// countSegment answers the live count of the builder's form (htmx posts
// it at every change).
func (w *Web) countSegment(c *fiber.Ctx) error {
	in, _ := segmentForm(c)
	n, err := w.countOf(c, in)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, segments.CountBody(n))
}

// editConditions redraws the conditions after a field or an operator
// changed, or a condition was added (add_condition) or removed
// (remove_condition=i): to htmx the conditions, with an event that makes
// the count follow; without it the whole builder.
func (w *Web) editConditions(c *fiber.Ctx) error {
	in, b := segmentForm(c)
	fields, ops, values := in.SelectField, in.SelectOperator, in.Value
	n := max(len(fields), len(ops))
	pad := func(l []string) []string {
		for len(l) < n {
			l = append(l, "")
		}
		return l[:n]
	}
	fields, ops, values = pad(fields), pad(ops), pad(values)
	if i, err := strconv.Atoi(formValue(c, "remove_condition")); err == nil && i >= 0 && i < n {
		fields = append(fields[:i:i], fields[i+1:]...)
		ops = append(ops[:i:i], ops[i+1:]...)
		values = append(values[:i:i], values[i+1:]...)
	}
	if formValue(c, "add_condition") != "" {
		fields, ops, values = append(fields, "email"), append(ops, "contains"), append(values, "")
	}
	b, err := w.builderOf(c, b, fields, ops, values, nil)
	if err != nil {
		return err
	}
	if partial(c) {
		c.Set("HX-Trigger-After-Swap", "segment-changed") // after: the count reads the form as redrawn
		return render(c, fiber.StatusOK, segments.ConditionsView(b))
	}
	in.SelectField, in.SelectOperator, in.Value = fields, ops, values
	if b.Count, err = w.countOf(c, in); err != nil {
		return err
	}
	return page(c, fiber.StatusOK, builderTitle(b), views.NavSegments, segments.BuilderPage(b))
}

func builderTitle(b segments.Builder) string {
	if b.ID == 0 {
		return "New segment"
	}
	return "Edit segment"
}

func (w *Web) newSegment(c *fiber.Ctx) error {
	b := segments.Builder{QueryType: "and", Count: segments.Count{Hint: "Choose a contact type and set the conditions: the number of matching contacts shows here as you go."}}
	b, err := w.builderOf(c, b, []string{"email"}, []string{"contains"}, []string{""}, nil)
	if err != nil {
		return err
	}
	if len(b.Types) == 1 {
		b.ContactTypeID = views.Itoa(b.Types[0].ID)
	}
	return page(c, fiber.StatusOK, "New segment", views.NavSegments, segments.BuilderPage(b))
}

func (w *Web) editSegment(c *fiber.Ctx) error {
	seg, err := w.segmentParam(c)
	if err != nil {
		return err
	}
	b := segments.Builder{ID: seg.ID, Name: seg.SegmentName, ContactTypeID: views.Itoa(seg.ContactTypeID), QueryType: "and"}
	if seg.QueryType != nil {
		b.QueryType = *seg.QueryType
	}
	if b, err = w.builderOf(c, b, seg.SelectField, seg.SelectOperator, seg.Value, nil); err != nil {
		return err
	}
	in := service.SegmentInput{ContactTypeID: b.ContactTypeID, SegmentName: b.Name, SelectField: seg.SelectField, SelectOperator: seg.SelectOperator, Value: seg.Value, QueryType: b.QueryType}
	if b.Count, err = w.countOf(c, in); err != nil {
		return err
	}
	return page(c, fiber.StatusOK, "Edit "+seg.SegmentName, views.NavSegments, segments.BuilderPage(b))
}

func (w *Web) createSegment(c *fiber.Ctx) error { return w.saveSegment(c, 0) }

func (w *Web) updateSegment(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	return w.saveSegment(c, id)
}

// saveSegment creates (id 0) or updates a segment from the builder: a
// redirect to its recipients with a flash message, or the builder with
// the messages beside each control (422).
func (w *Web) saveSegment(c *fiber.Ctx, id int64) error {
	in, b := segmentForm(c)
	b.ID = id
	var seg *models.Segment
	var err error
	if id == 0 {
		seg, err = w.svc.Segments.Create(c.UserContext(), accountID(c), in)
	} else {
		seg, err = w.svc.Segments.Update(c.UserContext(), accountID(c), id, in)
	}
	if isValidation(err) {
		if b, err = w.builderOf(c, b, in.SelectField, in.SelectOperator, in.Value, fieldErrors(err)); err != nil {
			return err
		}
		if b.Count, err = w.countOf(c, in); err != nil {
			return err
		}
		return page(c, fiber.StatusUnprocessableEntity, builderTitle(b), views.NavSegments, segments.BuilderPage(b))
	}
	if err != nil {
		return err
	}
	verb := "created"
	if id != 0 {
		verb = "saved"
	}
	w.flash(c, views.FlashSuccess, "Segment “"+seg.SegmentName+"” "+verb+".")
	if partial(c) {
		c.Set("HX-Redirect", segments.SegmentURL(seg.ID))
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Redirect(segments.SegmentURL(seg.ID), fiber.StatusSeeOther)
}
