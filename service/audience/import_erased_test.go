package audience_test

import (
	"context"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/service"
	"herald/service/audience"
)

// TestImportSkipsOnlyTheAccountsOwnErasures: an import reads the
// erasures of its own account only. An account that erased an address
// skips it (and the erasure check hashes nothing for an account with no
// erasures at all); another account imports the same address.
func TestImportSkipsOnlyTheAccountsOwnErasures(t *testing.T) {
	ctx := context.Background()
	svc := dbtest.Service(t)
	const addr = "gone@example.com"
	type acct struct{ id, typeID int64 }
	accounts := make([]acct, 2)
	for i, name := range []string{"Erasing", "Other"} {
		u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: name, Email: strings.ToLower(name) + "@example.com", Password: "test-passphrase-9"})
		if err != nil {
			t.Fatal(err)
		}
		ct, err := svc.ContactTypes.Create(ctx, u.ID, "Everyone")
		if err != nil {
			t.Fatal(err)
		}
		accounts[i] = acct{u.ID, ct.ID}
	}
	if err := svc.Privacy.Erase(ctx, accounts[0].id, addr); err != nil {
		t.Fatal(err)
	}
	csv := "email\n" + addr + "\nkept@example.com\n"
	for i, want := range []struct{ created, skipped int64 }{{1, 1}, {2, 0}} {
		a := accounts[i]
		imp, err := svc.Imports.Start(ctx, a.id, a.typeID, "list.csv", -1)
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Imports.Import(ctx, imp, strings.NewReader(csv)); err != nil {
			t.Fatal(err)
		}
		if imp.Created != want.created || imp.Skipped != want.skipped {
			t.Fatalf("account %d: created %d, skipped %d; want %d, %d (problems %+v)", i, imp.Created, imp.Skipped, want.created, want.skipped, imp.Problems)
		}
		if want.skipped == 1 && (len(imp.Problems) != 1 || imp.Problems[0].Reason != audience.MsgErased || imp.Problems[0].Line != 2) {
			t.Fatalf("account %d: problems %+v, want line 2 %q", i, imp.Problems, audience.MsgErased)
		}
	}
}
