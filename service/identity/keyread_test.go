package identity_test

import (
	"context"
	"errors"
	"testing"

	"herald/dbtest"
	"herald/service"
	"herald/service/identity"
)

// TestKeyCheckEveryConnection checks the key read of every API request
// (keyread.go) on connections the pool keeps closing and opening: each new
// connection prepares its own statement, the statements of closed ones are
// dropped once they are many, and every answer is still read from the
// database: right keys pass, a wrong secret and an unknown key fail, and a
// rotation by another process is seen by the next check.
func TestKeyCheckEveryConnection(t *testing.T) {
	t.Parallel()
	procs := dbtest.Processes(t, 2)
	svc, other := procs[0], procs[1]
	ctx := context.Background()
	u, keys, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Keys", Email: "keys@example.com", Password: "keys-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := svc.DB.R.DB()
	if err != nil {
		t.Fatal(err)
	}
	idle := sqlDB.Stats().MaxOpenConnections // OpenDB keeps as many idle
	sqlDB.SetMaxIdleConns(0)                 // every connection is closed after its use

	n := 2*identity.MaxKeyStmts + 5
	for i := range n {
		id, _, err := svc.Accounts.Check(ctx, keys.PublicKey, keys.SecretKey)
		if err != nil || id != u.ID {
			t.Fatalf("check %d: account %d, %v; want %d", i, id, err, u.ID)
		}
		if got := identity.KeyStmts(svc.Accounts); got > identity.MaxKeyStmts {
			t.Fatalf("check %d: %d prepared statements kept, want at most %d", i, got, identity.MaxKeyStmts)
		}
	}
	if got := identity.KeyStmts(svc.Accounts); got < 1 {
		t.Fatalf("%d prepared statements kept after %d checks, want at least 1", got, n)
	}
	for _, k := range []service.Keys{
		{PublicKey: keys.PublicKey, SecretKey: keys.SecretKey + "0"},
		{PublicKey: keys.PublicKey, SecretKey: ""},
		{PublicKey: "pk_unknown", SecretKey: keys.SecretKey},
	} {
		if _, _, err := svc.Accounts.Check(ctx, k.PublicKey, k.SecretKey); !errors.Is(err, service.ErrUnauthorized) {
			t.Fatalf("check %+v: %v, want ErrUnauthorized", k, err)
		}
	}

	sqlDB.SetMaxIdleConns(idle) // and now with connections kept
	_, before, err := svc.Accounts.Check(ctx, keys.PublicKey, keys.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := other.Accounts.RotateKeys(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Accounts.Check(ctx, keys.PublicKey, keys.SecretKey); !errors.Is(err, service.ErrUnauthorized) {
		t.Fatalf("old keys after another process rotated them: %v, want ErrUnauthorized", err)
	}
	id, after, err := svc.Accounts.Check(ctx, fresh.PublicKey, fresh.SecretKey)
	if err != nil || id != u.ID {
		t.Fatalf("new keys: account %d, %v; want %d", id, err, u.ID)
	}
	if after == before {
		t.Fatalf("list version %d did not move with the rotation", after)
	}
}
