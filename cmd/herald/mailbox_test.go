package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"herald/dbtest"
	"herald/delivery"
	"herald/eventually"
	"herald/models"
	"herald/service"
)

func TestConfigBounceMailbox(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(envFrom(map[string]string{}))
	if err != nil || cfg.BounceMailbox != "" {
		t.Fatalf("default: %q %v", cfg.BounceMailbox, err)
	}
	for _, ok := range []string{"imaps://u:p@mail.example.com/INBOX", "pop3s://u:p@mail.example.com", "imap://u:p@127.0.0.1:1143?tls=none"} {
		cfg, err := loadConfig(envFrom(map[string]string{"HERALD_BOUNCE_MAILBOX": ok}))
		if err != nil || cfg.BounceMailbox != ok {
			t.Errorf("%s: %q %v", ok, cfg.BounceMailbox, err)
		}
	}
	for _, bad := range []string{"https://u:s3cret@mail.example.com", "imaps://mail.example.com", "pop3s://u:s3cret@host/INBOX", "imap://u:s3cret@host?tls=sometimes", "imaps://u:s3cret@host:%zz"} {
		_, err := loadConfig(envFrom(map[string]string{"HERALD_BOUNCE_MAILBOX": bad}))
		if err == nil || !strings.Contains(err.Error(), "HERALD_BOUNCE_MAILBOX") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestBounceMailboxWiring: serve's poller reads the configured mailbox and
// gives the parser each mail, the addresses its header was delivered to and
// herald's VERP; a mail that reports nothing stays, set aside, and is
// counted once in the database.
func TestBounceMailboxWiring(t *testing.T) {
	t.Parallel()
	addr := startMemIMAP(t)
	svc := dbtest.Service(t)
	ctx := context.Background()
	cfg, err := loadConfig(envFrom(map[string]string{
		"HERALD_BOUNCE_ADDRESS": "bounces@herald.test",
		"HERALD_BOUNCE_MAILBOX": "imap://bounce:s3cret@" + addr + "/INBOX?tls=none",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Bounces.SetAddress(cfg.BounceAddress); err != nil {
		t.Fatal(err)
	}
	raw := []byte("Delivered-To: bounces+bAAAA@herald.test\r\nFrom: MAILER-DAEMON@mx.example.net\r\nTo: someone@example.com\r\nSubject: Out of office\r\n\r\nAway.\r\n")
	appendMemIMAP(t, addr, raw)
	var gotRaw []byte
	var gotRcpts []string
	var gotVERP *delivery.VERP
	parse := func(raw []byte, rcpts []string, v *delivery.VERP) ([]delivery.Report, error) {
		gotRaw, gotRcpts, gotVERP = raw, rcpts, v
		return nil, nil
	}
	mb, err := newBounceMailbox(ctx, cfg, svc, parse)
	if err != nil || mb == nil {
		t.Fatalf("newBounceMailbox: %v, %v", mb, err)
	}
	if n, err := mb.Poll(ctx); n != 0 || err != nil {
		t.Fatalf("poll: %d, %v", n, err)
	}
	if !bytes.Equal(gotRaw, raw) {
		t.Errorf("the parser got %q", gotRaw)
	}
	if want := []string{"bounces+bAAAA@herald.test", "someone@example.com"}; !slices.Equal(gotRcpts, want) {
		t.Errorf("recipients %v, want %v", gotRcpts, want)
	}
	want, _ := svc.Bounces.VERP(ctx)
	if gotVERP != want || gotVERP.Address() != "bounces@herald.test" {
		t.Errorf("the parser got another VERP: %v", gotVERP)
	}
	gotRaw = nil
	if n, err := mb.Poll(ctx); n != 0 || err != nil || gotRaw != nil {
		t.Errorf("second poll: %d, %v, parsed %q (the mail should be set aside)", n, err, gotRaw)
	}
	if n := countMemIMAP(t, addr); n != 1 {
		t.Errorf("%d mails in the mailbox, want the one set aside", n)
	}
	var kept []models.KeptMail
	if err := svc.DB.R.Find(&kept).Error; err != nil || len(kept) != 1 || kept[0].Why != delivery.KeptNotAReport ||
		kept[0].Mailbox != mb.String() || strings.Contains(kept[0].Mailbox, "s3cret") {
		t.Errorf("kept mails %+v, %v", kept, err)
	}
}

// startMemIMAP runs go-imap's in-memory server on loopback: user "bounce",
// password "s3cret", an empty INBOX.
func startMemIMAP(t *testing.T) string {
	t.Helper()
	mem := imapmemserver.New()
	u := imapmemserver.NewUser("bounce", "s3cret")
	if err := u.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	mem.AddUser(u)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		InsecureAuth: true,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func appendMemIMAP(t *testing.T, addr string, raw []byte) {
	t.Helper()
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login("bounce", "s3cret").Wait(); err != nil {
		t.Fatal(err)
	}
	cmd := c.Append("INBOX", int64(len(raw)), nil)
	if _, err := cmd.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestServeReadsBounceMailbox: `herald serve` polls the mailbox at start
// with the bounce parser: a DSN whose token is forged (a report naming
// nothing) is read, kept as untied and deleted; an auto-reply (no report)
// stays, counted; serve stops cleanly.
func TestServeReadsBounceMailbox(t *testing.T) {
	t.Parallel()
	addr := startMemIMAP(t)
	appendMemIMAP(t, addr, []byte("To: bounces+bAAAA@herald.test\r\nFrom: ann@example.com\r\nAuto-Submitted: auto-replied\r\nSubject: Out of office\r\n\r\nAway.\r\n"))
	appendMemIMAP(t, addr, []byte("Delivered-To: bounces+baaaaaaaaaaaaaaaaaaaaaaaa@herald.test\r\nFrom: MAILER-DAEMON@mx.example.net\r\n"+
		"Subject: Undelivered Mail Returned to Sender\r\nMIME-Version: 1.0\r\n"+
		"Content-Type: multipart/report; report-type=delivery-status; boundary=\"b\"\r\n\r\n"+
		"--b\r\nContent-Type: text/plain\r\n\r\nCould not deliver.\r\n"+
		"--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.net\r\n\r\n"+
		"Final-Recipient: rfc822; ann@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n--b--\r\n"))
	dsn := dbtest.DSN(t)
	_, stop := startServer(t, map[string]string{
		"HERALD_DATABASE":       dsn,
		"HERALD_BOUNCE_ADDRESS": "bounces@herald.test",
		"HERALD_BOUNCE_MAILBOX": "imap://bounce:s3cret@" + addr + "?tls=none",
	})
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var untied []models.UntiedReport
	var kept []models.KeptMail
	eventually.NoError(t, 10*time.Second, func() error {
		untied, kept = nil, nil
		if err := db.R.Find(&untied).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.R.Find(&kept).Error; err != nil {
			t.Fatal(err)
		}
		if n := countMemIMAP(t, addr); n != 1 || len(untied) != 1 || len(kept) != 1 {
			return fmt.Errorf("after serve's poll: %d mails left (want the auto-reply), untied %+v, kept %+v", n, untied, kept)
		}
		return nil
	})
	if u := untied[0]; u.Why != service.UntiedTokenForged || u.Source != "dsn" || u.Email != "ann@example.com" || u.RemoteIP != "" {
		t.Errorf("untied report %+v", u)
	}
	if kept[0].Why != delivery.KeptNotAReport {
		t.Errorf("kept mail %+v", kept[0])
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func countMemIMAP(t *testing.T, addr string) uint32 {
	t.Helper()
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login("bounce", "s3cret").Wait(); err != nil {
		t.Fatal(err)
	}
	st, err := c.Status("INBOX", &imap.StatusOptions{NumMessages: true}).Wait()
	if err != nil {
		t.Fatal(err)
	}
	return *st.NumMessages
}
