package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"herald/delivery"
	"herald/service"
	"herald/world"
)

const usage = `usage:
  herald serve                      serve the console and the API on HERALD_ADDR
  herald migrate                    apply the database migrations and exit
  herald account create --email E --password P --name N
  herald account rotate-keys --email E
  herald account reset-password --email E [--password P]
                                    set the password of a login, an account's
                                    owner or a team member (a random one,
                                    printed once, without --password); every
                                    session of that login ends
  herald account reset-2fa --email E
                                    turn two-factor login of a login (owner or
                                    member) off (a lost phone)
  herald dkim create --email E --domain D [--sign-now]
                                    make (or show) the account's DKIM key for a
                                    sending domain; prints its selector and DNS
                                    TXT record, to publish at
                                    <selector>._domainkey.<domain>. The key
                                    signs once herald's DNS check sees the
                                    record; --sign-now: at once (the record is
                                    already published)
  herald feedback parse FILE…       read bounce and complaint mails (no database)
                                    and print one JSON line per report found`

// run is the whole program; main only calls it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	sink := newLogSink(os.Stderr, logFlushEvery)
	defer sink.Close()
	slog.SetDefault(slog.New(urgentHandler{slog.NewJSONHandler(sink, &slog.HandlerOptions{Level: cfg.LogLevel}), sink}))
	if len(args) < 2 {
		return errors.New(usage)
	}
	switch args[1] {
	case "serve":
		return serve(ctx, cfg, stdout, newAccessLog(sink, cfg.LogLevel))
	case "migrate":
		db, err := openDB(ctx, cfg)
		if err != nil {
			return err
		}
		return db.Close()
	case "account":
		return accountCmd(ctx, cfg, args[2:], stdout)
	case "dkim":
		return dkimCmd(ctx, cfg, args[2:], stdout)
	case "feedback":
		return feedbackCmd(args[2:], stdout)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", args[1], usage)
}

// openDB opens and migrates the configured database.
func openDB(ctx context.Context, cfg config) (*service.DB, error) {
	db, err := service.OpenDB(cfg.Database)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return db, nil
}

func serve(ctx context.Context, cfg config, stdout io.Writer, access *accessLog) error {
	if warn := baseURLMismatch(cfg.Addr, cfg.BaseURL); warn != "" {
		slog.Warn(warn, "addr", cfg.Addr, "base_url", cfg.BaseURL)
	}
	if warn := service.OneClickWarning(cfg.BaseURL); warn != "" {
		slog.Warn(warn, "base_url", cfg.BaseURL)
	}
	db, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	go world.Load() // the world data is read once, before the first request needs it
	// Several relays count what they carry in the database, so that their
	// rate= holds for every process sharing it.
	transport, err := delivery.Open(cfg.SMTPURL, delivery.OpenOptions{LocalName: cfg.HeloName, MaxConns: cfg.SMTPMaxConns,
		Outbox: service.NewOutbox(db), Rates: service.NewRelayRates(db), Logger: slog.Default()})
	if err != nil {
		return fmt.Errorf("HERALD_SMTP_URL: %w", err)
	}
	defer transport.Close()
	conns := cfg.SMTPMaxConns
	relays, _ := transport.(*delivery.Relays)
	if relays != nil {
		conns = relays.Conns() // every relay's connections
	}
	svc, err := service.New(db, service.Config{Transport: transport, BaseURL: cfg.BaseURL, SystemFrom: cfg.MailFrom, BounceAddress: cfg.BounceAddress,
		DomainChecks: cfg.domainChecks(), SignupClosed: !cfg.Signup, SecretKey: cfg.SecretKey,
		SoftBounceLimit: cfg.SoftBounceLimit, EventWebhooksPrivate: cfg.EventWebhookPrivate, MachineRanges: cfg.MachineRanges, Countries: cfg.Countries})
	if err != nil {
		return fmt.Errorf("HERALD_BOUNCE_ADDRESS: %w", err)
	}
	if n, err := svc.Imports.FailAbandoned(ctx, 10*time.Minute); err != nil {
		return err
	} else if n > 0 {
		slog.Warn("imports left running by a stopped process marked failed", "imports", n)
	}
	sending, err := svc.NewSending(ctx, service.SendingConfig{
		Conns: conns, Rate: cfg.SendRate, Backoff: cfg.RetryBackoff, Window: cfg.RetryWindow,
	})
	if err != nil {
		return err
	}
	// The engine stops after the server (no new sends), drains what is on
	// the wire, and only then do the transport and the database close.
	sendCtx, stopSending := context.WithCancel(context.WithoutCancel(ctx))
	sendDone := make(chan struct{})
	go func() {
		defer close(sendDone)
		sending.Run(sendCtx)
	}()
	defer func() {
		stopSending()
		<-sendDone
	}()
	mailbox, err := newBounceMailbox(ctx, cfg, svc, delivery.ParseReports)
	if err != nil {
		return err
	}
	if mailbox != nil {
		pollCtx, stopPolling := context.WithCancel(ctx)
		pollDone := make(chan struct{})
		go func() {
			defer close(pollDone)
			mailbox.Run(pollCtx)
		}()
		defer func() {
			stopPolling()
			<-pollDone
		}()
		slog.Info("reading the bounce mailbox every minute", "mailbox", mailbox.String())
	}
	// The events webhook dispatcher (decisions.md 7): stopped with the
	// engine; a POST cut short is retried (at least once).
	events, _, err := svc.NewEventDispatcher(ctx)
	if err != nil {
		return err
	}
	eventsDone := make(chan struct{})
	go func() {
		defer close(eventsDone)
		_ = events.Run(sendCtx)
	}()
	defer func() {
		stopSending()
		<-eventsDone
	}()
	// The daily DNS checks of sending domains: stopped with
	// the engine, before the database closes.
	checksDone := make(chan struct{})
	go func() {
		defer close(checksDone)
		svc.DomainChecks.Run(sendCtx, 10*time.Minute)
	}()
	defer func() {
		stopSending()
		<-checksDone
	}()
	// Background exports: queued exports are claimed
	// within about a second; stopped with the engine, before the database
	// closes (an export cut short goes back to the queue).
	exportsDone := make(chan struct{})
	go func() {
		defer close(exportsDone)
		svc.Exports.Run(sendCtx, time.Second)
	}()
	defer func() {
		stopSending()
		<-exportsDone
	}()
	app, err := newApp(ctx, svc, cfg, relays, access)
	if err != nil {
		return err
	}
	// Reports (bounces, complaints, mailto: unsubscribes) over SMTP;
	// stopped before the engine and the database.
	stopInbound, err := startInbound(cfg, svc)
	if err != nil {
		return err
	}
	defer stopInbound()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	mailer := "outbox"
	if m := cfg.mail(); m != "" {
		mailer = m // without the passwords
	}
	slog.Info("herald serving", "addr", ln.Addr().String(), "database", db.Dialect, "base_url", cfg.BaseURL, "mail", mailer, "dkim_rsa", delivery.RSAEngine)
	fmt.Fprintf(stdout, "herald is serving: open %s\n", cfg.BaseURL)
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	slog.Info("herald shutting down")
	// The imports under way are cut short (marked failed, what they
	// committed kept) while the HTTP server drains, so that an API upload
	// importing in its request ends too and an upload arriving meanwhile
	// is failed at once; both are waited for before the database closes.
	ictx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ierr := make(chan error, 1)
	go func() { ierr <- svc.Imports.Shutdown(ictx) }()
	herr := app.ShutdownWithTimeout(15 * time.Second)
	return errors.Join(herr, <-ierr)
}

type keysOut struct {
	UserID    int64  `json:"user_id"`
	PublicKey string `json:"public_key"`
	SecretKey string `json:"secret_key"`
}

func accountCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("account "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	email := fs.String("email", "", "account email")
	password := fs.String("password", "", "account password")
	name := fs.String("name", "", "account name")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w\n%s", err, usage)
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
	var out keysOut
	switch args[0] {
	case "create":
		u, keys, err := svc.Accounts.Create(ctx, service.AccountInput{Name: *name, Email: *email, Password: *password})
		if err != nil {
			return err
		}
		out = keysOut{u.ID, keys.PublicKey, keys.SecretKey}
	case "rotate-keys":
		u, err := svc.Accounts.ByEmail(ctx, *email)
		if err != nil {
			return fmt.Errorf("no account with email %q", *email)
		}
		keys, err := svc.Accounts.RotateKeys(ctx, u.ID)
		if err != nil {
			return err
		}
		out = keysOut{u.ID, keys.PublicKey, keys.SecretKey}
	case "reset-password":
		pw, who, err := svc.Accounts.ResetPassword(ctx, *email, *password)
		if service.IsNotFound(err) {
			return fmt.Errorf("no account or team member with email %q", *email)
		}
		if err != nil {
			return err
		}
		ended := "Every session of the account's owner has ended; its members stay logged in."
		if who.MemberID != 0 {
			ended = "Every session of this team member has ended; the account's other logins stay logged in."
		}
		if *password != "" {
			fmt.Fprintf(stdout, "Password of %s set. %s\n", *email, ended)
			return nil
		}
		fmt.Fprintf(stdout, "New password of %s (shown once): %s\n%s\n", *email, pw, ended)
		return nil
	case "reset-2fa":
		if _, err := svc.Accounts.ResetTOTP(ctx, *email); service.IsNotFound(err) {
			return fmt.Errorf("no account or team member with email %q", *email)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Two-factor login of %s is off. It logs in with the password alone and may set it up again.\n", *email)
		return nil
	default:
		return fmt.Errorf("unknown account command %q\n%s", args[0], usage)
	}
	return json.NewEncoder(stdout).Encode(out)
}
