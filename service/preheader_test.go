package service_test

import (
	"errors"
	"strconv"
	"testing"

	"herald/service"
	"herald/service/servicetest"
)

// TestPreheaderOptional: a blank preheader is refused to the API's input
// (api.md requires one) and accepted from the console's, which says so
// with PreheaderOptional; a preheader given is still checked.
func TestPreheaderOptional(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeA := f.ContactType("Customers", "ann@example.com")
	in := f.Input("No preheader", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.Preheader = "  "
	var e *service.Error
	if _, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, in); !errors.As(err, &e) || len(e.Fields["preheader"]) == 0 {
		t.Fatalf("the API's input without a preheader: %v", err)
	}
	in.PreheaderOptional = true
	ss, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, in)
	if err != nil {
		t.Fatalf("the console's input without a preheader: %v", err)
	}
	if ss.Preheader != "" {
		t.Fatalf("stored preheader %q", ss.Preheader)
	}
	in.SingleSendName, in.Preheader = "NUL preheader", "a\x00b"
	if _, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, in); !errors.As(err, &e) || len(e.Fields["preheader"]) == 0 {
		t.Fatalf("a NUL in an optional preheader: %v", err)
	}
}
