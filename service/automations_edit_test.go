package service_test

import (
	"errors"
	"strconv"
	"testing"

	"herald/models"
	"herald/service"
)

func TestAutomationUpdate(t *testing.T) {
	t.Parallel()
	f := newSendFixture(t, false)
	typeA := f.contactType("Customers")
	typeB := f.contactType("Prospects")
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	a, err := f.svc.Automations.Create(f.ctx, f.acct, service.AutomationInput{Type: "welcome", AutomationFor: "contacts_" + itoa(typeA), UnsubscribeGroupID: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Automations.AddWelcomeSeries(f.ctx, f.acct, a.Utr); err != nil {
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
			_, err := f.svc.Automations.Update(f.ctx, f.acct, a.Utr, tc.in)
			var se *service.Error
			if !errors.As(err, &se) || se.Code != service.CodeValidation || len(se.Fields[tc.field]) == 0 {
				t.Fatalf("got %v, want a validation error on %s", err, tc.field)
			}
		})
	}
	if got, _ := f.svc.Automations.Get(f.ctx, f.acct, a.Utr); got.AutomationName != "Welcome series" || got.AutomationFor != typeA {
		t.Fatalf("changed by a refused update: %+v", got)
	}

	// A draft changes every setting; the type stays.
	got, err := f.svc.Automations.Update(f.ctx, f.acct, a.Utr, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + itoa(typeB),
		AutomationName: "  Hello series ", UnsubscribeGroupID: itoa(f.group), ExitCriteria: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if got.AutomationName != "Hello series" || got.AutomationFor != typeB || got.AutomationForTable != "contacts_" ||
		got.UnsubscribeGroupID != itoa(f.group) || got.ExitCriteria != 2 || got.AutomationType != 0 || got.Status != models.AutomationDraft {
		t.Fatalf("updated: %+v", got)
	}

	// It can now go live (the welcome emails have the verified sender).
	if err := f.svc.Automations.SetLive(f.ctx, f.acct, a.Utr); err != nil {
		t.Fatal(err)
	}

	// Live: the target and "no group" are refused, the rest applies, and
	// the emails' sends take the new group and name at once.
	for name, in := range map[string]service.AutomationInput{
		"target":   {AutomationFor: "contacts_" + itoa(typeA), UnsubscribeGroupID: itoa(f.group)},
		"no group": {AutomationFor: "contacts_" + itoa(typeB), UnsubscribeGroupID: "0"},
	} {
		_, err := f.svc.Automations.Update(f.ctx, f.acct, a.Utr, in)
		var se *service.Error
		if !errors.As(err, &se) || se.Code != service.CodeValidation || len(se.Fields) != 1 {
			t.Fatalf("live %s change: %v", name, err)
		}
	}
	other, err := f.svc.Groups.Create(f.ctx, f.acct, service.GroupInput{GroupName: "Offers", Description: "d", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	got, err = f.svc.Automations.Update(f.ctx, f.acct, a.Utr, service.AutomationInput{AutomationFor: "contacts_" + itoa(typeB),
		AutomationName: "Renamed", UnsubscribeGroupID: itoa(other.ID), ExitCriteria: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != models.AutomationLive || got.UnsubscribeGroupID != itoa(other.ID) || got.ExitCriteria != 1 || got.AutomationName != "Renamed" {
		t.Fatalf("live update: %+v", got)
	}
	steps, err := f.svc.Automations.Steps(f.ctx, f.acct, a.Utr)
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
	if err := f.svc.Automations.Pause(f.ctx, f.acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	if got, err = f.svc.Automations.Update(f.ctx, f.acct, a.Utr, service.AutomationInput{AutomationFor: "contacts_" + itoa(typeA), UnsubscribeGroupID: "0"}); err != nil {
		t.Fatal(err)
	}
	if got.AutomationFor != typeA || got.UnsubscribeGroupID != "0" || got.AutomationName != "Welcome series" {
		t.Fatalf("paused update: %+v", got)
	}

	// Another account's automation is not found, and stays as it was.
	otherAcct := newAccount(t, f.svc, "other@herald.test")
	if _, err := f.svc.Automations.Update(f.ctx, otherAcct, a.Utr, service.AutomationInput{UnsubscribeGroupID: "0", AutomationName: "Taken"}); !service.IsNotFound(err) {
		t.Fatalf("another account: %v", err)
	}
	if _, err := f.svc.Automations.Update(f.ctx, f.acct, "no-such-utr", service.AutomationInput{UnsubscribeGroupID: "0"}); !service.IsNotFound(err) {
		t.Fatalf("unknown utr: %v", err)
	}
	if got, _ := f.svc.Automations.Get(f.ctx, f.acct, a.Utr); got.AutomationName != "Welcome series" {
		t.Fatalf("renamed by another account: %q", got.AutomationName)
	}
	// A deleted automation is not found either.
	if err := f.svc.Automations.Delete(f.ctx, f.acct, []string{a.Utr}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Automations.Update(f.ctx, f.acct, a.Utr, service.AutomationInput{UnsubscribeGroupID: "0"}); !service.IsNotFound(err) {
		t.Fatalf("deleted: %v", err)
	}
}
