package service_test

import (
	"errors"
	"strconv"
	"testing"

	"herald/service"
	"herald/service/servicetest"
)

// problemsOf returns the validation problems of err, failing the test
// when err is not a validation error or its reasons do not line up with
// its messages (the API answers Fields; the console reads the reasons).
func problemsOf(t *testing.T, err error) service.Problems {
	t.Helper()
	var e *service.Error
	if !errors.As(err, &e) || e.Code != service.CodeValidation {
		t.Fatalf("err = %v, want a validation error", err)
	}
	for field, msgs := range e.Fields {
		if len(e.Reasons[field]) != len(msgs) {
			t.Fatalf("%s: %d messages, %d reasons", field, len(msgs), len(e.Reasons[field]))
		}
	}
	return e.Problems()
}

// wantProblem fails unless field has exactly the one message msg, of
// reason r.
func wantProblem(t *testing.T, p service.Problems, field string, r service.Reason, msg string) {
	t.Helper()
	if len(p[field]) != 1 || p[field][0] != (service.Problem{Reason: r, Message: msg}) {
		t.Errorf("%s: %+v, want [{%s %q}]", field, p[field], r, msg)
	}
}

func TestValidationReasonsOfSingleSends(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	// Nothing at all: each required field, with the spec's wording.
	_, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, service.SingleSendInput{})
	p := problemsOf(t, err)
	for _, field := range []string{"template_id", "sender_id", "unsubscribe_group_id", "single_send_name", "subject", "recipient_id", "schedule_type"} {
		wantProblem(t, p, field, service.ReasonRequired, "The "+service.Label(field)+" field is required.")
	}

	// Unknown choices, an unverified sender, a missing HTML of template 1.
	snd, err := f.Svc.Senders.Create(f.Ctx, f.Acct, service.SenderInput{FromName: "Other", FromEmail: "other@shop.example.com",
		ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "other"})
	if err != nil {
		t.Fatal(err)
	}
	in := f.Input("Reasons", []string{"contacts_999999"}, []string{"segments_999999"})
	in.TemplateHTML, in.SenderID, in.UnsubscribeGroupID = "", strconv.FormatInt(snd.ID, 10), "999999"
	_, err = f.Svc.SingleSends.Create(f.Ctx, f.Acct, in)
	p = problemsOf(t, err)
	wantProblem(t, p, "sender_id", service.ReasonNotVerified, "The selected sender is not verified.")
	wantProblem(t, p, "unsubscribe_group_id", service.ReasonInvalidChoice, "The selected unsubscribe group id is invalid.")
	wantProblem(t, p, "recipient_id", service.ReasonInvalidChoice, "The selected recipient id is invalid.")
	wantProblem(t, p, "exclude_specific_recipient_id", service.ReasonInvalidChoice, "The selected exclude specific recipient id is invalid.")
	wantProblem(t, p, "template_html", service.ReasonRequiredIf, "The template html field is required when template id is 1.")

	in = f.Input("Reasons", []string{"contacts_1"}, nil)
	in.TemplateID, in.SenderID = "x", "999999"
	_, err = f.Svc.SingleSends.Create(f.Ctx, f.Acct, in)
	p = problemsOf(t, err)
	wantProblem(t, p, "template_id", service.ReasonInteger, "The template id must be an integer.")
	wantProblem(t, p, "sender_id", service.ReasonInvalidChoice, "The selected sender id is invalid.")

	// The test mail's address.
	err = f.Svc.SingleSends.SendTest(f.Ctx, f.Acct, f.Input("T", nil, nil), "not an address", f.Svc.Mail)
	wantProblem(t, problemsOf(t, err), "test_email", service.ReasonEmail, "The test email must be a valid email address.")
}

func TestValidationReasonsOfAutomations(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	_, err := f.Svc.Automations.Create(f.Ctx, f.Acct, service.AutomationInput{Type: "other", AutomationFor: "segments_999999", UnsubscribeGroupID: "", ExitCriteria: "7"})
	p := problemsOf(t, err)
	wantProblem(t, p, "type", service.ReasonInvalidChoice, "The selected type is invalid.")
	wantProblem(t, p, "automation_for", service.ReasonInvalidChoice, "The selected automation for is invalid.")
	wantProblem(t, p, "unsubscribe_group_id", service.ReasonRequired, "The unsubscribe group id field is required.")
	wantProblem(t, p, "exit_criteria", service.ReasonInvalidChoice, "The selected exit criteria is invalid.")

	_, err = f.Svc.Automations.AddSchedule(f.Ctx, f.Acct, service.ScheduleInput{Utr: "u", SenderID: strconv.FormatInt(f.Sender, 10),
		Subject: "Hi", WaitingType: "soon", WaitingPeriod: "two", TemplateID: "2"})
	p = problemsOf(t, err)
	wantProblem(t, p, "waiting_type", service.ReasonInvalidChoice, "The selected waiting type is invalid.")
	wantProblem(t, p, "waiting_period", service.ReasonInteger, "The waiting period must be an integer.")
	wantProblem(t, p, "preview_img", service.ReasonRequired, "The preview img field is required.")
	if _, ok := p["sender_id"]; ok {
		t.Errorf("sender_id: %+v, want none", p["sender_id"])
	}

	_, err = f.Svc.Automations.AddSchedule(f.Ctx, f.Acct, service.ScheduleInput{Utr: "u", SenderID: strconv.FormatInt(f.Sender, 10),
		Subject: "Hi", WaitingType: "days", WaitingPeriod: "4000", TemplateID: "2", PreviewImg: "x.png"})
	wantProblem(t, problemsOf(t, err), "waiting_period", service.ReasonMax, "The waiting period may not be greater than 3650.")
}

// An error merged from another check keeps its reasons, and a message
// recorded without one reads as ReasonOther.
func TestValidationReasonsMerged(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	_, err := f.Svc.Groups.AddRecipients(f.Ctx, f.Acct, service.RecipientsInput{EmailAddress: "a@b.example.com, nope"})
	p := problemsOf(t, err)
	wantProblem(t, p, "unsubscribe_groups_id", service.ReasonRequired, "The unsubscribe groups id field is required.")
	wantProblem(t, p, "email_address", service.ReasonEmail, "The email address must be a valid email address.")
	e := &service.Error{Code: service.CodeValidation, Fields: map[string][]string{"x": {"one", "two"}}}
	if got := e.Problems()["x"]; len(got) != 2 || got[1] != (service.Problem{Reason: service.ReasonOther, Message: "two"}) {
		t.Errorf("Problems of an error without reasons = %+v", got)
	}
}
