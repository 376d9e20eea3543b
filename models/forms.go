package models

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// Form is a sign-up form (decisions.md 10): the people who fill it become
// contacts of ContactTypeID; it shows the custom fields Fields names and
// lets the person choose among the unsubscribe groups GroupIDs. PublicID
// names it in its public address (/f/<public_id>).
type Form struct {
	ID            int64       `gorm:"primaryKey" json:"id"`
	UserID        int64       `json:"user_id"`
	PublicID      string      `json:"public_id"`
	Name          string      `json:"name"`
	ContactTypeID int64       `json:"contact_type_id"`
	DoubleOptIn   int         `json:"double_opt_in"`
	Fields        StringArray `gorm:"column:fields" json:"fields"`
	GroupIDs      JSONIDs     `gorm:"column:group_ids" json:"group_ids"`
	// RedirectURL is where the hosted form sends the person after a
	// sign-up ("" shows herald's own thank-you page).
	RedirectURL string `json:"redirect_url"`
	Language    string `json:"language"`
	// ConfirmSubject and ConfirmBody are the account's own confirmation
	// mail, sent as written ("": herald's wording, in the person's
	// language). The body is plain text with the ((confirm_url))
	// placeholder.
	ConfirmSubject string    `json:"confirm_subject"`
	ConfirmBody    string    `json:"confirm_body"`
	CreatedAt      Timestamp `json:"created_at"`
	UpdatedAt      Timestamp `json:"updated_at"`
}

// TableName names the table.
func (Form) TableName() string { return "forms" }

// ConfirmURLPlaceholder stands, in a form's ConfirmBody, for the link that
// confirms the address: a body of the account's must hold it.
const ConfirmURLPlaceholder = "((confirm_url))"

// FormConfirmation is one confirmation mail of a double-opt-in sign-up.
// Only the hash of its link's token is kept.
type FormConfirmation struct {
	ID          int64      `gorm:"primaryKey"`
	UserID      int64      //
	FormID      int64      //
	ContactID   int64      //
	Email       string     //
	TokenHash   string     //
	Groups      JSONIDs    `gorm:"column:groups"`
	SentAt      *Timestamp // nil: not sent (yet)
	ExpiresAt   Timestamp  //
	ConfirmedAt *Timestamp //
	// Language is the person's language picked at the sign-up (the
	// contact's, the form's or the browser's; an IETF tag, "" before it
	// was kept): herald's mail spoke it, and the link's page answers in it.
	Language  string    //
	CreatedAt Timestamp //
}

// TableName names the table.
func (FormConfirmation) TableName() string { return "form_confirmations" }

// JSONIDs is a list of ids stored as a JSON array ([] when empty).
type JSONIDs []int64

// Scan reads the stored array.
func (l *JSONIDs) Scan(src any) error { return scanJSON(src, l) }

// Value writes the array.
func (l JSONIDs) Value() (driver.Value, error) {
	if l == nil {
		l = JSONIDs{}
	}
	b, err := json.Marshal([]int64(l))
	return string(b), err
}

// MarshalJSON writes [] for an empty list.
func (l JSONIDs) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]int64(l))
}

// scanJSON reads a JSON document stored in a text column into dst; NULL
// and "" leave dst as it is.
func scanJSON(src any, dst any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("models: cannot read %T as JSON", src)
	}
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, dst)
}

// RowID is the row's id, by which lists are read in order.
func (f *Form) RowID() int64 { return f.ID }
