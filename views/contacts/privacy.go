package contacts

import (
	"strconv"

	"herald/models"
)

// Privacy is what a contact's page shows of its consent and offers for
// privacy requests: how the contact came, its status, and the export and
// erasure of its address.
type Privacy struct {
	ContactID int64
	Email     string
	Status    string
	Consent   models.Consent
	CSRF      string
}

// PrivacyExportURL downloads everything herald holds on the contact's
// address (the privacy export, as a file).
func PrivacyExportURL(id int64) string { return ContactURL(id) + "/privacy-export" }

// EraseURL erases the contact's address from the account (POST).
func EraseURL(id int64) string { return ContactURL(id) + "/erase" }

// Unconfirmed reports whether the contact has not confirmed its address.
func (p Privacy) Unconfirmed() bool { return p.Status == models.ContactUnconfirmed }

// Recorded reports whether the contact's consent was kept (contacts from
// before it was kept have none).
func (p Privacy) Recorded() bool { return p.Consent != (models.Consent{}) }

// sourceLabel names how a contact came.
func sourceLabel(c models.Consent) string {
	switch c.Source {
	case models.ConsentForm:
		if c.FormID > 0 {
			return "Sign-up form #" + strconv.FormatInt(c.FormID, 10)
		}
		return "Sign-up form"
	case models.ConsentAPI:
		return "API"
	case models.ConsentImport:
		if c.ImportID > 0 {
			return "CSV import #" + strconv.FormatInt(c.ImportID, 10)
		}
		return "CSV import"
	case models.ConsentConsole:
		return "Added in the console"
	}
	return c.Source
}

// basisLabel says what the importer chose of the list; the API's basis
// is the word api.
func basisLabel(b string) string {
	switch b {
	case models.ConsentAPI:
		return "Imported through the API (the caller vouches)"
	case models.ConsentBasisSignedUp:
		return "They signed up on our site"
	case models.ConsentBasisCustomers:
		return "They are customers"
	}
	return b
}

// eraseQuestion is the confirmation of an erasure: it says what happens.
func eraseQuestion(email string) string {
	return "Erase " + email + " for good? Its contacts are deleted, its history keeps only a keyed hash of the address, and herald never mails or imports it again unless the person signs up through a form. This cannot be undone."
}
