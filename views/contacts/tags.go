package contacts

// Addresses of the tags on contacts.
const (
	// BulkTagsAddURL and BulkTagsRemoveURL take the list's selection.
	BulkTagsAddURL    = "/contacts/tags/add"
	BulkTagsRemoveURL = "/contacts/tags/remove"
)

// TagsURL adds tags to one contact; TagRemoveURL removes one.
func TagsURL(id int64) string      { return ContactURL(id) + "/tags" }
func TagRemoveURL(id int64) string { return ContactURL(id) + "/tags/remove" }

// Tags is the tags card of a contact's page.
type Tags struct {
	ContactID int64
	Tags      []string // the contact's, sorted
	Names     []string // the account's tags, offered as choices
	Value     string   // what was typed, kept after a refusal
	Errors    []string
	CSRF      string
}

// tagsHelp says how tags are typed.
const tagsHelp = "Separate tags with commas. Tags are kept in lower case, up to 64 characters each and 100 per contact."

// tagsDescribedBy names the help and the errors of a tags input.
func tagsDescribedBy(id string, errs []string) string {
	if len(errs) > 0 {
		return id + "-help " + id + "-error"
	}
	return id + "-help"
}
