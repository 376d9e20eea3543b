package segments

import (
	"net/url"
	"strconv"

	"herald/models"
)

// WhyURL is the page that explains why an address is in or out of a
// segment: ?email=<address> or ?contact=<contact id>.
func WhyURL(id int64) string { return SegmentURL(id) + "/why" }

// WhyEmailURL explains the address.
func WhyEmailURL(id int64, email string) string {
	return WhyURL(id) + "?email=" + url.QueryEscape(email)
}

// WhyContactURL explains the contact.
func WhyContactURL(id, contactID int64) string {
	return WhyURL(id) + "?contact=" + strconv.FormatInt(contactID, 10)
}

// The reasons of a verdict (service.ExplainReason, as the view reads them).
const (
	WhyConditions  = "conditions"
	WhyByHand      = "by_hand"
	WhyContactType = "contact_type"
	WhyNoContact   = "no_contact"
)

// Why is the explain page of a segment: the address asked about and the
// verdict, once there is one.
type Why struct {
	Segment  models.Segment
	TypeName string // the segment's contact type
	Email    string
	Errors   []string // of the address
	Result   *WhyResult
}

// WhyResult is a verdict with every condition judged.
type WhyResult struct {
	Email       string
	ContactID   int64  // 0: no contact has the address
	ContactType string // the contact's type
	In          bool
	Reason      string // one of the Why* reasons
	Or          bool   // one condition is enough
	Failed      int    // conditions not met
	ByHand      bool   // also held by a row added by hand
	Stored      bool   // what the segment's rows say now
	Rows        []WhyRow
}

// WhyRow is one condition: the field, the operator, the values compared,
// the contact's own value and whether it holds.
type WhyRow struct {
	Field    string // the field's label
	Operator string // the operator's words ("is one of")
	Compared string
	Own      string
	Met      bool
	Ignored  bool // no longer valid for its field: the segment leaves it out
}
