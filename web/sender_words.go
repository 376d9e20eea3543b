package web

import (
	"strings"

	"herald/service"
	"herald/views"
)

// senderLabels are the sender form's own names of the fields, where the
// API's messages name its parameters ("The country id field is
// required.").
var senderLabels = map[string]string{
	"from_name":        "from name",
	"from_email":       "from email",
	"reply_to_email":   "reply-to email",
	"nickname":         "nickname",
	"country_id":       "country",
	"state_id":         "state",
	"city_id":          "city",
	"zip_code":         "postal code",
	"company_address":  "company address",
	"company_address2": "second line of the company address",
}

// senderMissing words a blank or unknown choice the way the form asks
// for it.
var senderMissing = map[string]string{
	"from_name":       "Enter the from name.",
	"from_email":      "Enter the from email address.",
	"reply_to_email":  "Enter the reply-to email address.",
	"nickname":        "Give this sender a nickname.",
	"country_id":      "Choose a country.",
	"state_id":        "Choose a state of the chosen country.",
	"city_id":         "Choose a city of the chosen state.",
	"company_address": "Enter the company address.",
}

// senderErrors are a validation error's messages in the sender form's
// words: by reason for a missing value or choice, else the service's
// message with the form's label in place of the parameter's name.
func senderErrors(err error) views.Errors {
	errs := views.Errors{}
	for field, ps := range fieldProblems(err) {
		for _, pr := range ps {
			msg := pr.Message
			if alt, ok := senderMissing[field]; ok && missingChoice(pr) {
				msg = alt
			} else if label, ok := senderLabels[field]; ok {
				msg = strings.Replace(msg, service.Label(field), label, 1)
			}
			errs[field] = append(errs[field], msg)
		}
	}
	return errs
}
