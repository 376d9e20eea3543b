// Package messages holds the console's page of single messages (POST
// api/mail/send): the latest ones with their outcome.
package messages

import (
	"herald/models"
	"herald/service"
)

// URL is the page.
const URL = "/messages"

// outcomeLabel and outcomeClass name a message's outcome for people.
func outcomeLabel(o service.MessageOutcome) string {
	switch o {
	case "queued":
		return "Queued"
	case "sending":
		return "Sending"
	case "retrying":
		return "Retrying"
	case "delivered":
		return "Delivered"
	case "bounced":
		return "Bounced"
	case "blocked":
		return "Blocked"
	case "complained":
		return "Complaint"
	}
	return "Failed"
}

func outcomeClass(o service.MessageOutcome) string {
	switch o {
	case "delivered":
		return "badge-success"
	case "queued", "sending":
		return "badge-info"
	case "retrying":
		return "badge-warning"
	}
	return "badge-danger"
}

func stamp(r service.MessageRow) models.Timestamp { return models.NewTimestamp(r.CreatedAt) }
