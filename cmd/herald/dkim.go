package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"herald/service"
)

// dkimOut is what `herald dkim create` prints: exactly these three keys.
type dkimOut struct {
	Domain   string `json:"domain"`
	Selector string `json:"selector"`
	Record   string `json:"record"`
}

// dkimCmd runs `herald dkim create --email E --domain D [--sign-now]`: it
// makes (or returns) the account's DKIM key for the domain and prints its
// DNS record (decisions.md 9). The key signs once a DNS check has seen the
// record, as the console's key does, so that no receiver sees a signature
// it cannot check; --sign-now, for a record already published, turns the
// domain's "sign anyway" on and the key signs at once.
func dkimCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	if args[0] != "create" {
		return fmt.Errorf("unknown dkim command %q\n%s", args[0], usage)
	}
	fs := flag.NewFlagSet("dkim create", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	email := fs.String("email", "", "account email")
	domain := fs.String("domain", "", "sending domain")
	signNow := fs.Bool("sign-now", false, "sign at once, before a DNS check sees the record")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w\n%s", err, usage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q\n%s", fs.Arg(0), usage)
	}
	db, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	svc, err := service.New(db, service.Config{BaseURL: cfg.BaseURL})
	if err != nil {
		return err
	}
	u, err := svc.Accounts.ByEmail(ctx, *email)
	if err != nil {
		if service.IsNotFound(err) {
			return fmt.Errorf("no account with email %q", *email)
		}
		return err
	}
	rec, err := svc.Senders.DKIM(ctx, u.ID, *domain)
	if err != nil {
		return err
	}
	if *signNow {
		if err := svc.DomainChecks.SetSignAnyway(ctx, u.ID, rec.Domain, true); err != nil {
			return err
		}
	}
	return json.NewEncoder(stdout).Encode(dkimOut{rec.Domain, rec.Selector, rec.Record})
}
