// Package eventwebhooks holds the pages of an account's events webhook
// endpoints: the list with the add form, one endpoint with its recent
// deliveries.
package eventwebhooks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"herald/models"
	"herald/views"
)

// Names are the kinds of event, in the contract's order.
var Names = []string{"processed", "delivered", "deferred", "bounce", "open", "click", "spam_report", "unsubscribe", "group_unsubscribe", "subscribe", "confirm"}

// Form adds or edits an endpoint.
type Form struct {
	ID      int64 // 0: a new endpoint
	URL     string
	Events  []string
	Enabled bool
	Errors  views.Errors
	CSRF    string
}

// Wants reports whether the form has kind ticked.
func (f Form) Wants(kind string) bool { return slices.Contains(f.Events, kind) }

// Data is the list page. Secret, when set, is the new endpoint's secret,
// shown this once.
type Data struct {
	Rows      []models.EventWebhook
	Form      Form
	Secret    string
	SecretFor string
	CSRF      string
}

// Detail is one endpoint's page.
type Detail struct {
	Webhook    models.EventWebhook
	Form       Form
	Deliveries []models.EventDelivery
	CSRF       string
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

func detailURL(id int64) string { return "/event-webhooks/" + itoa(id) }

func kinds(k models.EventKinds) string {
	if len(k) == len(Names) {
		return "All events"
	}
	return strings.ReplaceAll(strings.Join(k, ", "), "_", " ")
}

// outcome is a delivery's result as the table shows it.
func outcome(d models.EventDelivery) string {
	switch {
	case d.StatusCode >= 200 && d.StatusCode < 300 && d.Error == "":
		return "HTTP " + strconv.Itoa(d.StatusCode)
	case d.Error != "":
		return d.Error
	}
	return "HTTP " + strconv.Itoa(d.StatusCode)
}

func ok(d models.EventDelivery) bool {
	return d.StatusCode >= 200 && d.StatusCode < 300 && d.Error == ""
}

func latency(d models.EventDelivery) string { return fmt.Sprintf("%d ms", d.LatencyMS) }

func eventsOf(d models.EventDelivery) string {
	if d.Events == 0 {
		return "Test ping"
	}
	return views.N("eventwebhooks.events", d.Events)
}
