package web

import (
	"testing"

	"herald/service"
)

// The console words a field's problem by its reason code: a missing or
// unknown choice gets the form's words, anything else (an unverified
// sender, a malformed value) the service's message as it is.
func TestConsoleWordsProblemsByReason(t *testing.T) {
	t.Parallel()
	pr := func(r service.Reason, msg string) service.Problem { return service.Problem{Reason: r, Message: msg} }
	for _, c := range []struct {
		name, field string
		pr          service.Problem
		want        string
	}{
		{"send: required", "sender_id", pr(service.ReasonRequired, "The sender id field is required."), "Choose a verified sender."},
		{"send: unknown", "recipient_id", pr(service.ReasonInvalidChoice, "The selected recipient id is invalid."), "Choose at least one contact type or segment."},
		{"send: not verified", "sender_id", pr(service.ReasonNotVerified, "The selected sender is not verified."), "The selected sender is not verified."},
		{"send: required if", "template_html", pr(service.ReasonRequiredIf, "The template html field is required when template id is 1."), "The template html field is required when template id is 1."},
		{"send: integer", "template_id", pr(service.ReasonInteger, "The template id must be an integer."), "The template id must be an integer."},
		{"send: test address", "test_email", pr(service.ReasonEmail, "The test email must be a valid email address."), "Enter a valid email address for the test."},
		{"send: no table", "subject", pr(service.ReasonRequired, "The subject field is required."), "The subject field is required."},
		{"send: too late", "schedule_date", pr(service.ReasonOther, "The schedule date and time must be in the future."), "The schedule date and time must be in the future."},
	} {
		if got := friendly(c.field, c.pr); got != c.want {
			t.Errorf("friendly %s: %q, want %q", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		name, field string
		pr          service.Problem
		want        string
	}{
		{"email: unknown sender", "sender_id", pr(service.ReasonInvalidChoice, "The selected sender id is invalid."), "Choose a verified sender."},
		{"email: not verified", "sender_id", pr(service.ReasonNotVerified, "The selected sender is not verified."), "The selected sender is not verified."},
		{"email: image", "preview_img", pr(service.ReasonRequired, "The preview img field is required."), "Choose a design."},
		{"email: image too long", "preview_img", pr(service.ReasonMax, "The preview img may not be greater than 255 characters."), "The preview img may not be greater than 255 characters."},
		{"email: required if", "template_html", pr(service.ReasonRequiredIf, "The template html field is required when template id is 1."), "Write the HTML of the email, or choose a design."},
		{"email: too big", "template_html", pr(service.ReasonMax, "The design may not be greater than 5 MB."), "The design may not be greater than 5 MB."},
		{"email: integer", "waiting_period", pr(service.ReasonInteger, "The waiting period must be an integer."), "Enter a whole number of hours or days."},
		{"email: range", "waiting_period", pr(service.ReasonMax, "The waiting period may not be greater than 3650."), "The waiting period may not be greater than 3650."},
		{"email: unknown type", "waiting_type", pr(service.ReasonInvalidChoice, "The selected waiting type is invalid."), "Choose when it is sent."},
		{"email: integer id", "template_id", pr(service.ReasonInteger, "The template id must be an integer."), "The template id must be an integer."},
	} {
		if got := emailMessage(c.field, c.pr); got != c.want {
			t.Errorf("emailMessage %s: %q, want %q", c.name, got, c.want)
		}
	}
	err := &service.Error{Code: service.CodeValidation,
		Fields:  map[string][]string{"automation_for": {"The selected automation for is invalid."}, "unsubscribe_group_id": {"A live automation needs an unsubscribe group."}},
		Reasons: map[string][]service.Reason{"automation_for": {service.ReasonInvalidChoice}, "unsubscribe_group_id": {service.ReasonOther}}}
	errs, _ := settingsErrors(err)
	if got := errs["automation_for"]; len(got) != 1 || got[0] != "Choose one of your contact types or segments." {
		t.Errorf("settings automation_for: %q", got)
	}
	if got := errs["unsubscribe_group_id"]; len(got) != 1 || got[0] != "A live automation needs an unsubscribe group." {
		t.Errorf("settings unsubscribe_group_id: %q", got)
	}
}
