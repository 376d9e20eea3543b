package models

import (
	"database/sql/driver"
	"encoding/json"
)

// Contact statuses: a contact of a double-opt-in form is unconfirmed until
// it follows its confirmation link; every other contact is confirmed (an
// API caller or an importer vouches for it).
const (
	ContactConfirmed   = "confirmed"
	ContactUnconfirmed = "unconfirmed"
)

// Consent sources: how a contact came.
const (
	ConsentForm    = "form"
	ConsentAPI     = "api"
	ConsentImport  = "import"
	ConsentConsole = "console"
)

// The bases the console's import form offers (Consent.Basis); "Other"
// stores the importer's own words, the API's imports store ConsentAPI.
const (
	ConsentBasisSignedUp  = "signed_up"
	ConsentBasisCustomers = "customers"
)

// Consent is how a contact came (decisions.md 10): its source, the form or
// import, when, from which address and browser where known, and for a
// form the exact text shown and when the person confirmed. Stored as a
// JSON document; {} for contacts from before it was kept.
type Consent struct {
	Source string `json:"source,omitempty"`
	// FormID or ImportID names the form or the import of the source.
	FormID   int64 `json:"form_id,omitempty"`
	ImportID int64 `json:"import_id,omitempty"`
	// Basis is what an importer said of the list ("they signed up on our
	// site", "customers", …).
	Basis     string     `json:"basis,omitempty"`
	At        *Timestamp `json:"at,omitempty"`
	IP        string     `json:"ip,omitempty"`
	UserAgent string     `json:"user_agent,omitempty"`
	// Text is the form's wording the person agreed to.
	Text        string     `json:"text,omitempty"`
	ConfirmedAt *Timestamp `json:"confirmed_at,omitempty"`
}

// Scan reads the stored document.
func (c *Consent) Scan(src any) error {
	*c = Consent{}
	return scanJSON(src, c)
}

// Value writes the document.
func (c Consent) Value() (driver.Value, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}
