package web

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
	"herald/views/automations"
	"herald/views/contacts"
)

// Tags on contacts in the console: the card of a contact's page, and the
// bulk controls of the contact list's selection.

func (w *Web) tagRoutes(r router) {
	r.post(contacts.BulkTagsAddURL, service.ActPrepare, w.bulkTags(true))
	r.post(contacts.BulkTagsRemoveURL, service.ActPrepare, w.bulkTags(false))
	r.post("/contacts/:id/tags", service.ActPrepare, w.addContactTags)
	r.post("/contacts/:id/tags/remove", service.ActPrepare, w.removeContactTag)
}

// typedTags splits what a person typed: tags separated by commas or
// semicolons (the CSV column's separator).
func typedTags(s string) []string {
	return service.SplitTags(strings.ReplaceAll(s, ",", ";"))
}

// tagsCard fills the tags card of a contact's page.
func (w *Web) tagsCard(c *fiber.Ctx, id int64, tags []string) (*contacts.Tags, error) {
	names, err := w.svc.Contacts.TagNames(c.UserContext(), accountID(c))
	if err != nil {
		return nil, err
	}
	return &contacts.Tags{ContactID: id, Tags: tags, Names: names, CSRF: csrf(c)}, nil
}

// tagMessages are the messages of a refused tag change, for one field.
func tagMessages(err error) []string {
	var out []string
	for _, msgs := range fieldErrors(err) {
		out = append(out, msgs...)
	}
	if len(out) == 0 {
		out = append(out, err.Error())
	}
	return out
}

// contactTagsChanged answers a change of one contact's tags: to htmx the
// card as it now is (with the refusal beside the field, 422), to a
// browser the contact's page again.
func (w *Web) contactTagsChanged(c *fiber.Ctx, id int64, typed string, err error) error {
	if err != nil && !isValidation(err) {
		return err
	}
	if !partial(c) {
		if err != nil {
			w.flash(c, views.FlashError, strings.Join(tagMessages(err), " "))
		}
		return c.Redirect(contacts.EditURL(id), fiber.StatusSeeOther)
	}
	v, gerr := w.svc.Contacts.Get(c.UserContext(), accountID(c), id)
	if gerr != nil {
		return gerr
	}
	d, gerr := w.tagsCard(c, id, v.Tags)
	if gerr != nil {
		return gerr
	}
	status := fiber.StatusOK
	if err != nil {
		status, d.Value, d.Errors = fiber.StatusUnprocessableEntity, typed, tagMessages(err)
	}
	return render(c, status, contacts.TagsCard(*d))
}

func (w *Web) addContactTags(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	typed := strings.Clone(c.FormValue("tags"))
	_, err = w.svc.Contacts.AddTags(c.UserContext(), accountID(c), service.TagsInput{IDs: []string{strconv.FormatInt(id, 10)}, Tags: typedTags(typed)})
	if service.ErrorCode(err) == service.CodeNotFound {
		return err
	}
	return w.contactTagsChanged(c, id, typed, err)
}

func (w *Web) removeContactTag(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	_, err = w.svc.Contacts.RemoveTags(c.UserContext(), accountID(c), service.TagsInput{IDs: []string{strconv.FormatInt(id, 10)}, Tags: []string{c.FormValue("tag")}})
	if service.ErrorCode(err) == service.CodeNotFound {
		return err
	}
	return w.contactTagsChanged(c, id, "", err)
}

// bulkTags adds (or removes) the typed tags on the list's selection.
func (w *Web) bulkTags(add bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ids, err := parseSelection(c)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return w.refuse(c, contactsBack(c), "Select at least one contact first.")
		}
		tags := typedTags(c.FormValue("tags"))
		if len(tags) == 0 {
			return w.refuse(c, contactsBack(c), "Type the tags first.")
		}
		in := service.TagsInput{Tags: tags}
		for _, id := range ids {
			in.IDs = append(in.IDs, strconv.FormatInt(id, 10))
		}
		change, verb := w.svc.Contacts.AddTags, "Tagged"
		if !add {
			change, verb = w.svc.Contacts.RemoveTags, "Untagged"
		}
		if _, err := change(c.UserContext(), accountID(c), in); err != nil {
			if isValidation(err) {
				return w.refuse(c, contactsBack(c), strings.Join(tagMessages(err), " "))
			}
			return err
		}
		what := "1 contact."
		if len(ids) != 1 {
			what = strconv.Itoa(len(ids)) + " contacts."
		}
		return w.contactsChanged(c, verb+" "+what)
	}
}

// startTagTarget is the input of a new automation; with a start tag its
// target becomes the segment of the chosen contact type on that tag
// (found, or made). Errors: validation (no contact type chosen, a bad
// tag), ErrNotFound.
func (w *Web) startTagTarget(c *fiber.Ctx, f automations.Settings) (service.AutomationInput, error) {
	in := automationInput(f)
	if strings.TrimSpace(f.StartTag) == "" {
		return in, nil
	}
	typeID, ok := strings.CutPrefix(f.Target, "contacts_")
	if !ok {
		return in, &service.Error{Code: service.CodeValidation, Message: "Choose the contact type whose contacts get the tag.",
			Fields: map[string][]string{"automation_for": {"Choose the contact type whose contacts get the tag."}}}
	}
	seg, err := w.svc.Segments.ForTag(c.UserContext(), accountID(c), typeID, f.StartTag)
	if err != nil {
		return in, err
	}
	in.AutomationFor = "segments_" + strconv.FormatInt(seg.ID, 10)
	return in, nil
}
