package suppressions

import (
	"strconv"

	"herald/models"
	"herald/views"
)

// BouncedURL is the list of addresses that bounced for good.
const BouncedURL = "/suppressions/bounced"

// LiftURL lifts one suppressed address (POST).
func LiftURL(id int64) string { return BouncedURL + "/" + strconv.FormatInt(id, 10) + "/lift" }

// BulkLiftURL lifts the selected addresses (POST, ids).
const BulkLiftURL = BouncedURL + "/lift"

// Bounced is a page of the account's suppressed addresses.
type Bounced struct {
	Rows  []models.Suppression
	Query views.ListQuery
	Pager views.Pager
	CSRF  string
}
