package audience_test

import (
	"context"
	"testing"

	"herald/service"
)

// newAccount creates an account on svc and returns its id.
func newAccount(t *testing.T, svc *service.Service, email string) int64 {
	t.Helper()
	u, _, err := svc.Accounts.Create(context.Background(), service.AccountInput{Name: "T", Email: email, Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}
