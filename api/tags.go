package api

import (
	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// Tags on contacts (decisions.md 10). The success texts follow the bulk
// operations' pattern (`Deleted Successfully`): docs/API-NOTES.md.
const (
	textTagsAdded   = "Tags Added Successfully"
	textTagsRemoved = "Tags Removed Successfully"
)

// tagsInput reads emails[] and/or ids[] and tags[].
func tagsInput(f *form) service.TagsInput {
	return service.TagsInput{Emails: f.Array("emails"), IDs: f.Array("ids"), Tags: f.Array("tags")}
}

func (a *API) addTags(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.Contacts.AddTags(c.UserContext(), account(c), tagsInput(f)); err != nil {
		return fail(c, err)
	}
	return success(c, textTagsAdded)
}

func (a *API) removeTags(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.Contacts.RemoveTags(c.UserContext(), account(c), tagsInput(f)); err != nil {
		return fail(c, err)
	}
	return success(c, textTagsRemoved)
}

// The OpenAPI description of the two tag operations.
const tagsDesc = "Beyond the spec (decisions.md 10). The contacts are named by `emails` (every contact of the account with that address, " +
	"in any contact type) and/or `ids`. All or nothing: when one names no contact of the account, nothing changes (NF). " +
	"Tags are 1-64 characters, stored trimmed and lower-cased; a contact carries at most 100 (422 `A contact may not have more than 100 tags.`). " +
	"Segments whose conditions test `tags` are brought up to date at once, so an automation on such a segment enrols the contacts that entered it."

var tagsBody = fields([]string{"tags"}, obj{
	"emails": atMost(service.MaxBulkIDs, strings_("Addresses of contacts (`emails[]` or `emails[0]` … in a form, or a JSON array). Required when `ids` is not present.")),
	"ids":    atMost(service.MaxBulkIDs, strings_("Contact ids.")),
	"tags":   atMost(service.MaxTagsPerContact, strings_("The tags.")),
})
