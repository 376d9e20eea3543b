package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/mail"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"herald/dbtest"
	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/smtptest"
)

// postfix is a private Postfix instance on a loopback port: its own
// configuration directory, queue and log, relaying what it accepts to a
// loopback sink. Its policy tables refuse what a test writes into them.
type postfix struct {
	t      *testing.T
	dir    string
	addr   string
	master *exec.Cmd
}

// findPostfix returns the postfix command, or "".
func findPostfix() string {
	if p, err := exec.LookPath("postfix"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/postfix"); err == nil {
		return "/usr/sbin/postfix"
	}
	return ""
}

// postfixTables are the tables a test gives its private Postfix:
// check_sender_access and check_recipient_access (texthash), header_checks
// (regexp) and transport_maps (texthash: "lost@example.org error:5.1.1 …"
// accepts a message and then bounces it with Postfix's own DSN).
type postfixTables struct {
	senders, recipients, headers, transport string
}

// startPostfix runs a private Postfix that relays to sink, but for what
// its tables say.
func startPostfix(t *testing.T, sink *smtptest.Server, tables postfixTables) *postfix {
	t.Helper()
	bin := findPostfix()
	if bin == "" {
		dbtest.SkipOrFail(t, "postfix not found: install Debian's postfix (DEBIAN_FRONTEND=noninteractive apt-get install -y postfix) to run the real relay test")
	}
	if os.Geteuid() != 0 {
		dbtest.SkipOrFail(t, "the real relay test runs a private postfix instance, whose master must start as root")
	}
	pfUser, err := user.Lookup("postfix")
	if err != nil {
		dbtest.SkipOrFail(t, "postfix is installed but its user is missing: "+err.Error())
	}
	daemons := strings.TrimSpace(postconf(t, bin, "daemon_directory"))
	// Postfix's daemons run as its user: the folder must be theirs to
	// enter, which a test's TempDir (0700) is not.
	dir, err := os.MkdirTemp("", "herald-postfix-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"queue", "data"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(pfUser.Uid)
	if err := os.Chown(filepath.Join(dir, "data"), uid, -1); err != nil {
		t.Fatal(err)
	}
	p := &postfix{t: t, dir: dir, addr: freeAddr(t)}
	p.write("sender_access", tables.senders)
	p.write("recipient_access", tables.recipients)
	p.write("header_checks", tables.headers)
	p.write("transport", tables.transport)
	p.write("main.cf", fmt.Sprintf(`compatibility_level = 3.6
queue_directory = %[1]s/queue
data_directory = %[1]s/data
maillog_file = %[1]s/maillog
maillog_file_prefixes = %[1]s
mail_owner = postfix
setgid_group = postdrop
myhostname = relay.herald.test
mydomain = herald.test
inet_interfaces = loopback-only
inet_protocols = ipv4
mydestination =
mynetworks = 127.0.0.0/8
relay_domains = example.com, example.org, herald.test
alias_maps =
alias_database =
local_recipient_maps =
smtputf8_enable = no
smtpd_error_sleep_time = 0
# Idle sessions end soon, so that after a reload no session with the old
# tables lingers.
smtpd_timeout = 3s
smtpd_sender_restrictions = check_sender_access texthash:%[1]s/sender_access
smtpd_recipient_restrictions = check_recipient_access texthash:%[1]s/recipient_access, permit_mynetworks, reject_unauth_destination
header_checks = regexp:%[1]s/header_checks
transport_maps = texthash:%[1]s/transport
default_transport = smtp:[127.0.0.1]:%[2]s
relay_transport = smtp:[127.0.0.1]:%[2]s
`, dir, sinkPort(t, sink)))
	p.write("master.cf", p.addr+` inet n - n - - smtpd
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
`)
	// check makes the queue's folders with their owners.
	if out, err := exec.Command(bin, "-c", dir, "check").CombinedOutput(); err != nil {
		t.Fatalf("postfix check: %v\n%s%s", err, out, p.log())
	}
	p.master = exec.Command(filepath.Join(daemons, "master"), "-c", dir, "-d")
	p.master.Stdout, p.master.Stderr = os.Stderr, os.Stderr
	if err := p.master.Start(); err != nil {
		t.Fatalf("postfix master: %v", err)
	}
	t.Cleanup(func() {
		_ = p.master.Process.Signal(syscall.SIGTERM)
		_ = p.master.Wait()
	})
	eventually.NoError(t, 20*time.Second, func() error {
		c, err := net.DialTimeout("tcp", p.addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		return fmt.Errorf("postfix does not listen on %s\n%s", p.addr, p.log())
	})
	return p
}

func postconf(t *testing.T, postfixBin, name string) string {
	out, err := exec.Command(filepath.Join(filepath.Dir(postfixBin), "postconf"), "-h", name).Output()
	if err != nil {
		t.Fatalf("postconf %s: %v", name, err)
	}
	return string(out)
}

func sinkPort(t *testing.T, s *smtptest.Server) string {
	_, port, err := net.SplitHostPort(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func (p *postfix) write(name, content string) {
	p.t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, name), []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// reload makes Postfix read its tables again (as `postfix reload`).
func (p *postfix) reload() {
	p.t.Helper()
	if err := p.master.Process.Signal(syscall.SIGHUP); err != nil {
		p.t.Fatal(err)
	}
}

func (p *postfix) log() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "maillog"))
	return string(b)
}

// TestRealPostfixRelay sends through a real Postfix whose policy refuses a
// sender (header_checks on its From: 550 5.7.1 at DATA, as Amazon SES
// refuses an unverified From; the envelope sender is herald's VERP return
// path, the same for every send), a recipient's mailbox (550 5.1.1), a
// relay to another domain (554 5.7.1) and a message's content at DATA
// (header_checks: 550 5.7.1). Herald runs whole (herald serve); only the
// refusal of the mailbox suppresses; the sender refusal pauses the send,
// the notice reaches the notification recipient through Postfix, and once
// Postfix accepts the sender, resuming sends every refused message.
//
// CI: Debian's postfix (DEBIAN_FRONTEND=noninteractive apt-get install -y
// postfix), run as root; it skips without them (fails under
// HERALD_TEST_STRICT=1).
func TestRealPostfixRelay(t *testing.T) {
	sink := smtptest.Start(t)
	pf := startPostfix(t, sink, postfixTables{
		recipients: "gone@example.com 550 5.1.1 User unknown\nfar@elsewhere.example.net REJECT Relay access denied\n",
		headers:    "/^Subject: .*Forbidden/ REJECT Message content rejected\n/^From: .*blocked@shop\\.example\\.com/ REJECT Email address is not verified\n",
	})

	c, svc, _ := postfixHerald(t, pf, nil)
	acct := c.keys.UserID

	sinkWait := sinkWaiter(t, sink, pf)
	c.call("POST", "/api/notification-recipient/save", url.Values{"email_address": {"boss@example.org"}, "email_owner": {"Boss"}})
	for i, from := range []string{"news@shop.example.com", "blocked@shop.example.com"} {
		addVerifiedSender(t, c, svc, sinkWait, from, "shop"+strconv.Itoa(i))
	}
	c.call("POST", "/api/contacts-type/add", url.Values{"name": {"Customers"}})
	c.call("POST", "/api/contacts-type/add", url.Values{"name": {"Mixed"}})
	c.call("POST", "/api/contacts-type/add", url.Values{"name": {"Clean"}})
	c.call("POST", "/api/unsubscribes-groups/save", url.Values{"group_name": {"News"}, "description": {"Monthly news"}, "is_display": {"1"}})
	for i := range 12 {
		c.call("POST", "/api/contacts/add", url.Values{"contact_type_id": {"1"}, "email": {fmt.Sprintf("c%02d@example.com", i)}, "first_name": {"F"}, "last_name": {"L"}, "country": {"840"}})
	}
	for _, e := range []string{"ann@example.com", "gone@example.com", "far@elsewhere.example.net"} {
		c.call("POST", "/api/contacts/add", url.Values{"contact_type_id": {"2"}, "email": {e}, "first_name": {"F"}, "last_name": {"L"}, "country": {"840"}})
	}
	for _, e := range []string{"dee@example.com", "eve@example.com"} {
		c.call("POST", "/api/contacts/add", url.Values{"contact_type_id": {"3"}, "email": {e}, "first_name": {"F"}, "last_name": {"L"}, "country": {"840"}})
	}
	create := func(name, sender, subject, target string) string {
		return c.call("POST", "/api/single/send/create", url.Values{"template_id": {"1"}, "template_html": {`<p>Hi ((first_name))</p>`},
			"sender_id": {sender}, "unsubscribe_group_id": {"1"}, "single_send_name": {name}, "subject": {subject}, "preheader": {"News"},
			"recipient_id[]": {target}, "schedule_type": {"0"}})["message"].(map[string]any)["utr"].(string)
	}
	get := func(utr string) *models.SingleSend {
		t.Helper()
		ss, err := svc.SingleSends.Get(context.Background(), acct, utr)
		if err != nil {
			t.Fatal(err)
		}
		return ss
	}
	waitSend := func(utr, what string, cond func(*models.SingleSend) bool) *models.SingleSend {
		t.Helper()
		var ss *models.SingleSend
		eventually.NoError(t, 40*time.Second, func() error {
			if ss = get(utr); !cond(ss) {
				return fmt.Errorf("%s: status %d delivered %d bounces %d blocks %d paused %v\n%s", what, ss.Status, ss.Delivered, ss.Bounces, ss.Blocks, ss.PausedAt, pf.log())
			}
			return nil
		})
		return ss
	}
	suppressed := func() map[string]string {
		out := map[string]string{}
		_ = svc.Suppressions.Each(context.Background(), acct, service.ListFilter{}, func(s *models.Suppression) error { out[s.Email] = s.Reason; return nil })
		return out
	}

	// 1. A mailbox refusal, a relay refusal, a delivery.
	mixed := waitSend(create("Mixed", "1", "Hello", "contacts_2"), "the mixed send", func(s *models.SingleSend) bool { return s.Status == models.SendCompleted })
	if mixed.Delivered != 1 || mixed.Bounces != 1 || mixed.Blocks != 1 {
		t.Fatalf("mixed send: delivered %d bounces %d blocks %d", mixed.Delivered, mixed.Bounces, mixed.Blocks)
	}
	if sup := suppressed(); len(sup) != 1 || sup["gone@example.com"] != "userunknown: 5.1.1 550 <gone@example.com>: Recipient address rejected: User unknown (smtp)" {
		t.Fatalf("suppressions: %v", sup)
	}
	if !strings.HasPrefix(mixed.LastBlock, "delivery: permanent failure at rcpt: 554 5.7.1 <far@elsewhere.example.net>: Recipient address rejected") {
		t.Fatalf("relay refusal: %q", mixed.LastBlock)
	}

	// 2. The content refused at DATA: every message of a small send, so
	// it pauses; nobody is suppressed.
	forbidden := waitSend(create("Forbidden", "1", "Forbidden offer", "contacts_3"), "the content refusal to pause",
		func(s *models.SingleSend) bool { return s.PausedAt != nil || s.Status == models.SendCompleted })
	if forbidden.PausedAt == nil || forbidden.Blocks != 2 || forbidden.Bounces != 0 ||
		forbidden.PauseReason != "delivery: permanent failure at data: 550 5.7.1 Message content rejected" {
		t.Fatalf("content refusal: paused %v blocks %d bounces %d reason %q", forbidden.PausedAt, forbidden.Blocks, forbidden.Bounces, forbidden.PauseReason)
	}

	// 3. The sender refused: 12 messages, the send pauses after 10 in a
	// row at most; nobody is suppressed; one notice to the boss.
	utr := create("Blocked", "2", "Hello", "contacts_1")
	paused := waitSend(utr, "the sender refusal to pause", func(s *models.SingleSend) bool { return s.PausedAt != nil || s.Status == models.SendCompleted })
	want := "delivery: permanent failure at data: 550 5.7.1 Email address is not verified"
	if paused.PausedAt == nil || paused.Blocks < 10 || paused.Bounces != 0 || paused.PauseReason != want || paused.Status != models.SendRunning {
		t.Fatalf("sender refusal: paused %v blocks %d bounces %d status %d reason %q", paused.PausedAt, paused.Blocks, paused.Bounces, paused.Status, paused.PauseReason)
	}
	if sup := suppressed(); len(sup) != 1 {
		t.Fatalf("suppressions after the refusals: %v", sup)
	}
	notice := sinkWait("pause notice", func(m smtptest.Message) bool {
		s, _ := new(mime.WordDecoder).DecodeHeader(m.Header().Get("Subject"))
		return m.To == "boss@example.org" && strings.HasPrefix(s, "Sending of “Blocked” paused")
	})
	if !strings.Contains(string(notice.Data), "550 5.7.1") {
		t.Fatalf("the notice lacks the relay's answer:\n%s", notice.Data)
	}
	// Messages on the wire when the send paused are still answered and
	// counted after it: the API's count lies between two reads around it.
	before := get(utr).Blocks
	d := c.call("GET", "/api/single-send/details?utr="+utr, nil)["message"].(map[string]any)["singleSend"].([]any)[0].(map[string]any)
	after := get(utr).Blocks
	if b := d["blocks"].(float64); b < float64(before) || b > float64(after) || b < 10 || d["status"].(float64) != 2 {
		t.Fatalf("API record (blocks %d to %d around it): %v", before, after, d)
	}

	// 4. Postfix accepts the sender again; resume: every message goes.
	pf.write("header_checks", "/^Subject: .*Forbidden/ REJECT Message content rejected\n")
	pf.reload()
	// Sessions opened before the reload keep the old table: wait until
	// Postfix has reloaded and every session has ended (idle ones end
	// after smtpd_timeout).
	eventually.NoError(t, 30*time.Second, func() error {
		l := pf.log()
		if strings.Contains(l, "postfix/master") && strings.Contains(l, "reload") &&
			strings.Count(l, "]: connect from ") == strings.Count(l, "]: disconnect from ") {
			return nil
		}
		return fmt.Errorf("postfix sessions did not end after the reload\n%s", l)
	})
	if _, err := svc.SingleSends.Resume(context.Background(), acct, utr); err != nil {
		t.Fatal(err)
	}
	done := waitSend(utr, "the resumed send", func(s *models.SingleSend) bool { return s.Status == models.SendCompleted })
	if done.Delivered != 12 || done.Blocks != 0 || done.Bounces != 0 {
		t.Fatalf("resumed send: delivered %d blocks %d bounces %d", done.Delivered, done.Blocks, done.Bounces)
	}
	got := map[string]bool{}
	// Up to 30 s for the 12; the check below says how many came.
	_ = eventually.Wait(30*time.Second, func() error {
		for _, m := range sink.Messages() {
			if from, err := mail.ParseAddress(m.Header().Get("From")); err == nil && from.Address == "blocked@shop.example.com" {
				got[m.To] = true
			}
		}
		if len(got) < 12 {
			return errors.New("not all 12 yet")
		}
		return nil
	})
	if len(got) != 12 {
		t.Fatalf("%d of 12 messages reached the sink through postfix\n%s", len(got), pf.log())
	}
}

// postfixHerald starts a whole herald (herald serve) on a fresh database
// that sends through pf, with one account, and opens the database as
// another herald process would; env adds to herald's environment.
func postfixHerald(t *testing.T, pf *postfix, env map[string]string) (*apiClient, *service.Service, *service.DB) {
	t.Helper()
	dsn := dbtest.DSN(t)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"herald", "account", "create", "--email", "owner@example.com", "--password", "test-passphrase-9", "--name", "O"},
		envFrom(map[string]string{"HERALD_DATABASE": dsn, "HERALD_LOG_LEVEL": "error"}), &out); err != nil {
		t.Fatal(err)
	}
	c := &apiClient{t: t}
	_ = json.Unmarshal(out.Bytes(), &c.keys)
	addr := freeAddr(t)
	c.base = "http://" + addr
	vars := map[string]string{"HERALD_DATABASE": dsn, "HERALD_SMTP_URL": "smtp://" + pf.addr + "?tls=none", "HERALD_BASE_URL": c.base,
		"HERALD_ADDR": addr, "HERALD_MAIL_FROM": "no-reply@herald.test", "HERALD_BOUNCE_ADDRESS": "bounces@herald.test"}
	for k, v := range env {
		vars[k] = v
	}
	startServer(t, vars)
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return c, newService(t, db, service.Config{}), db
}

// addVerifiedSender adds a sender through the API; its verification mail
// goes through Postfix to the sink, and the sender is then verified with
// its token (how the link is followed is not these tests' subject).
func addVerifiedSender(t *testing.T, c *apiClient, svc *service.Service, sinkWait func(string, func(smtptest.Message) bool) smtptest.Message, from, nickname string) {
	t.Helper()
	c.call("POST", "/api/sender/save", url.Values{"from_name": {"Shop"}, "from_email": {from}, "reply_to_email": {"help@shop.example.com"},
		"country_id": {"840"}, "company_address": {"1 Main St"}, "nickname": {nickname}})
	sinkWait("verification mail to "+from, func(m smtptest.Message) bool { return m.To == from })
	var snd models.Sender
	if err := svc.DB.R.Where("user_id = ? AND from_email = ?", c.keys.UserID, from).First(&snd).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Senders.Verify(context.Background(), snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
}

// sinkWaiter waits for a message that cond accepts to reach sink through
// pf, failing with Postfix's log after 30 s.
func sinkWaiter(t *testing.T, sink *smtptest.Server, pf *postfix) func(what string, cond func(smtptest.Message) bool) smtptest.Message {
	return func(what string, cond func(smtptest.Message) bool) smtptest.Message {
		t.Helper()
		var found smtptest.Message
		eventually.NoError(t, 30*time.Second, func() error {
			for _, m := range sink.Messages() {
				if cond(m) {
					found = m
					return nil
				}
			}
			return fmt.Errorf("no %s reached the sink through postfix\n%s", what, pf.log())
		})
		return found
	}
}
