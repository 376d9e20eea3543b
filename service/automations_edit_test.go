package service_test

import (
	"errors"
	"strconv"
	"testing"

	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

func TestAutomationUpdate(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeA := f.ContactType("Customers")
	typeB := f.ContactType("Prospects")
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	a, err := f.Svc.Automations.Create(f.Ctx, f.Acct, service.AutomationInput{Type: "welcome", AutomationFor: "contacts_" + itoa(typeA), UnsubscribeGroupID: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Automations.AddWelcomeSeries(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}

	// Invalid input changes nothing.
	for name, tc := range map[string]struct {
		in    service.AutomationInput
		field string
	}{
		"exit criteria": {service.AutomationInput{AutomationFor: "contacts_" + itoa(typeA), UnsubscribeGroupID: "0", ExitCriteria: "7"}, "exit_criteria"},
		"unknown group": {service.AutomationInput{AutomationFor: "contacts_" + itoa(typeA), UnsubscribeGroupID: "999999"}, "unsubscribe_group_id"},
		"no group":      {service.AutomationInput{AutomationFor: "contacts_" + itoa(typeA)}, "unsubscribe_group_id"},
		"unknown type":  {service.AutomationInput{AutomationFor: "contacts_999999", UnsubscribeGroupID: "0"}, "automation_for"},
		"bad target":    {service.AutomationInput{AutomationFor: "lists_1", UnsubscribeGroupID: "0"}, "automation_for"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.Svc.Automations.Update(f.Ctx, f.Acct, a.Utr, tc.in)
			var se *service.Error
			if !errors.As(err, &se) || se.Code != service.CodeValidation || len(se.Fields[tc.field]) == 0 {
				t.Fatalf("got %v, want a validation error on %s", err, tc.field)
			}
		})
	}
	if got, _ := f.Svc.Automations.Get(f.Ctx, f.Acct, a.Utr); got.AutomationName != "Welcome series" || got.AutomationFor != typeA {
		t.Fatalf("changed by a refused update: %+v", got)
	}

	// A draft changes every setting; the type stays.
	got, err := f.Svc.Automations.Update(f.Ctx, f.Acct, a.Utr, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + itoa(typeB),
		AutomationName: "  Hello series ", UnsubscribeGroupID: itoa(f.Group), ExitCriteria: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if got.AutomationName != "Hello series" || got.AutomationFor != typeB || got.AutomationForTable != "contacts_" ||
		got.UnsubscribeGroupID != itoa(f.Group) || got.ExitCriteria != 2 || got.AutomationType != 0 || got.Status != models.AutomationDraft {
		t.Fatalf("updated: %+v", got)
	}

	// It can now go live (the welcome emails have the verified sender).
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}

	// Live: the target and "no group" are refused, the rest applies, and
	// the emails' sends take the new group and name at once.
	for name, in := range map[string]service.AutomationInput{
		"target":   {AutomationFor: "contacts_" + itoa(typeA), UnsubscribeGroupID: itoa(f.Group)},
		"no group": {AutomationFor: "contacts_" + itoa(typeB), UnsubscribeGroupID: "0"},
	} {
		_, err := f.Svc.Automations.Update(f.Ctx, f.Acct, a.Utr, in)
		var se *service.Error
		if !errors.As(err, &se) || se.Code != service.CodeValidation || len(se.Fields) != 1 {
			t.Fatalf("live %s change: %v", name, err)
		}
	}
	other, err := f.Svc.Groups.Create(f.Ctx, f.Acct, service.GroupInput{GroupName: "Offers", Description: "d", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	got, err = f.Svc.Automations.Update(f.Ctx, f.Acct, a.Utr, service.AutomationInput{AutomationFor: "contacts_" + itoa(typeB),
		AutomationName: "Renamed", UnsubscribeGroupID: itoa(other.ID), ExitCriteria: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != models.AutomationLive || got.UnsubscribeGroupID != itoa(other.ID) || got.ExitCriteria != 1 || got.AutomationName != "Renamed" {
		t.Fatalf("live update: %+v", got)
	}
	steps, err := f.Svc.Automations.Steps(f.Ctx, f.Acct, a.Utr)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 {
		t.Fatalf("%d steps", len(steps))
	}
	for i, st := range steps {
		if st.Send == nil || st.Send.UnsubscribeGroupID != other.ID || st.Send.SingleSendName != "Renamed · email "+strconv.Itoa(i+1) || st.Send.Status != models.SendRunning {
			t.Fatalf("step %d send: %+v", i+1, st.Send)
		}
	}

	// Paused, the target may change again.
	if err := f.Svc.Automations.Pause(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	if got, err = f.Svc.Automations.Update(f.Ctx, f.Acct, a.Utr, service.AutomationInput{AutomationFor: "contacts_" + itoa(typeA), UnsubscribeGroupID: "0"}); err != nil {
		t.Fatal(err)
	}
	if got.AutomationFor != typeA || got.UnsubscribeGroupID != "0" || got.AutomationName != "Welcome series" {
		t.Fatalf("paused update: %+v", got)
	}

	// Another account's automation is not found, and stays as it was.
	otherAcct := servicetest.NewAccount(t, f.Svc, "other@herald.test")
	if _, err := f.Svc.Automations.Update(f.Ctx, otherAcct, a.Utr, service.AutomationInput{UnsubscribeGroupID: "0", AutomationName: "Taken"}); !service.IsNotFound(err) {
		t.Fatalf("another account: %v", err)
	}
	if _, err := f.Svc.Automations.Update(f.Ctx, f.Acct, "no-such-utr", service.AutomationInput{UnsubscribeGroupID: "0"}); !service.IsNotFound(err) {
		t.Fatalf("unknown utr: %v", err)
	}
	if got, _ := f.Svc.Automations.Get(f.Ctx, f.Acct, a.Utr); got.AutomationName != "Welcome series" {
		t.Fatalf("renamed by another account: %q", got.AutomationName)
	}
	// A deleted automation is not found either.
	if err := f.Svc.Automations.Delete(f.Ctx, f.Acct, []string{a.Utr}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Automations.Update(f.Ctx, f.Acct, a.Utr, service.AutomationInput{UnsubscribeGroupID: "0"}); !service.IsNotFound(err) {
		t.Fatalf("deleted: %v", err)
	}
}
