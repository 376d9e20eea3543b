package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

func TestParseMailboxURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want MailboxURL
		str  string
	}{
		{"imaps://u:p%40ss@mail.example.com/INBOX", MailboxURL{"imap", "mail.example.com", 993, "u", "p@ss", TLSImplicit, "INBOX"}, "imaps://u@mail.example.com:993/INBOX"},
		{"imaps://u:p@mail.example.com", MailboxURL{"imap", "mail.example.com", 993, "u", "p", TLSImplicit, "INBOX"}, "imaps://u@mail.example.com:993/INBOX"},
		{"imap://u:p@mail.example.com/Bounces%20In", MailboxURL{"imap", "mail.example.com", 143, "u", "p", TLSStartTLS, "Bounces In"}, "imap://u@mail.example.com:143/Bounces%20In?tls=starttls"},
		{"imap://u:p@127.0.0.1:1143?tls=none", MailboxURL{"imap", "127.0.0.1", 1143, "u", "p", TLSNone, "INBOX"}, "imap://u@127.0.0.1:1143/INBOX?tls=none"},
		{"pop3s://u:p@pop.example.com", MailboxURL{"pop3", "pop.example.com", 995, "u", "p", TLSImplicit, ""}, "pop3s://u@pop.example.com:995"},
		{"pop3://u:p@pop.example.com:1110/", MailboxURL{"pop3", "pop.example.com", 1110, "u", "p", TLSStartTLS, ""}, "pop3://u@pop.example.com:1110?tls=starttls"},
	} {
		got, err := ParseMailboxURL(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.in, got, tc.want)
		}
		if s := got.String(); s != tc.str {
			t.Errorf("%s: String() = %q, want %q", tc.in, s, tc.str)
		}
	}
	for _, in := range []string{
		"", "http://u:secret@host", "imaps://host", "imaps://u@host", "imaps://u:secret@:993",
		"imaps://u:secret@host:0", "imaps://u:secret@host:99999", "imaps://u:secret@host?tls=none",
		"imap://u:secret@host?tls=maybe", "imap://u:secret@host?tsl=none", "pop3://u:secret@host/INBOX",
		"imap://u%0D%0ANOOP:secret@host", "imaps://u:secret@host:%zz",
	} {
		_, err := ParseMailboxURL(in)
		if err == nil {
			t.Errorf("%q: no error", in)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the error shows the password: %v", in, err)
		}
	}
}

// fakeParse stands for the bounce parser: a mail whose Subject is
// "unparsable" is an error, one whose Subject is "nothing" reports nothing,
// any other reports a hard bounce of the address in its Subject.
type mailboxProbe struct {
	mu       sync.Mutex
	parsed   [][]byte
	handled  []string
	kept     []KeptMail
	failFor  string // Handle fails for this recipient
	failKeep bool   // KeepMail fails
}

// KeepMail records a mail set aside (KeptMails).
func (p *mailboxProbe) KeepMail(_ context.Context, k KeptMail) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failKeep {
		return errors.New("database is down")
	}
	p.kept = append(p.kept, k)
	return nil
}

// takeKept returns and forgets the mails set aside so far, as
// "why id" sorted.
func (p *mailboxProbe) takeKept() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, k := range p.kept {
		out = append(out, k.Why+" "+k.ID)
	}
	p.kept = nil
	slices.Sort(out)
	return out
}

func (p *mailboxProbe) Parse(_ context.Context, raw []byte) ([]Report, error) {
	p.mu.Lock()
	p.parsed = append(p.parsed, bytes.Clone(raw))
	p.mu.Unlock()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	switch subj := msg.Header.Get("Subject"); subj {
	case "unparsable":
		return nil, errors.New("not a report")
	case "nothing":
		return nil, nil
	default:
		return []Report{{Kind: ReportHardBounce, Source: SourceDSN, Recipient: subj, Status: "5.1.1"}}, nil
	}
}

func (p *mailboxProbe) Handle(_ context.Context, reports []Report) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range reports {
		if r.Recipient == p.failFor {
			return errors.New("database is down")
		}
	}
	for _, r := range reports {
		p.handled = append(p.handled, r.Recipient)
	}
	return nil
}

// take returns and forgets what was parsed and handled so far.
func (p *mailboxProbe) take() (parsed [][]byte, handled []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	parsed, handled = p.parsed, p.handled
	p.parsed, p.handled = nil, nil
	return parsed, handled
}

func testMail(subject string, bodyBytes int) []byte {
	body := strings.Repeat("This line pads the mail to the size the test wants.\r\n", bodyBytes/53+1)
	return []byte("From: MAILER-DAEMON@mx.example.net\r\nTo: bounces+bxyz@herald.test\r\nSubject: " + subject +
		"\r\nMessage-ID: <" + strings.ReplaceAll(subject, "@", ".") + "@mx.example.net>\r\n\r\n" + body)
}

// byteCountListener counts the bytes the server writes, to tell whether a
// mail was downloaded.
type byteCountListener struct {
	net.Listener
	written atomic.Int64
}

func (l *byteCountListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &byteCountConn{Conn: c, n: &l.written}, nil
}

type byteCountConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *byteCountConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// startIMAP runs go-imap's in-memory server on loopback with one user and
// an empty INBOX; caps are what it advertises.
func startIMAP(t *testing.T, caps imap.CapSet) (addr string, ln *byteCountListener) {
	t.Helper()
	mem := imapmemserver.New()
	user := imapmemserver.NewUser("bounce", "s3cret")
	if err := user.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	mem.AddUser(user)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         caps,
		InsecureAuth: true,
		Logger:       nopLogger{},
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = &byteCountListener{Listener: l}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), ln
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// imapAs is a second client, the test's own eyes on the mailbox.
func imapAs(t *testing.T, addr string) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Login("bounce", "s3cret").Wait(); err != nil {
		t.Fatal(err)
	}
	return c
}

func appendIMAP(t *testing.T, c *imapclient.Client, raw []byte) {
	t.Helper()
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

// inbox lists the subjects left in INBOX with their flags, lower case
// (flags are case-insensitive; servers differ in how they spell them).
func inbox(t *testing.T, c *imapclient.Client) map[string][]imap.Flag {
	t.Helper()
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]imap.Flag{}
	if sel.NumMessages == 0 {
		return out
	}
	msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{Flags: true, Envelope: true}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		var flags []imap.Flag
		for _, f := range m.Flags {
			flags = append(flags, imap.Flag(strings.ToLower(string(f))))
		}
		slices.Sort(flags)
		out[m.Envelope.Subject] = flags
	}
	return out
}

func TestMailboxIMAP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		caps imap.CapSet
	}{
		{"IMAP4rev2 (UID EXPUNGE)", imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}}},
		{"IMAP4rev1 without UIDPLUS (EXPUNGE)", imap.CapSet{imap.CapIMAP4rev1: {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, ln := startIMAP(t, tc.caps)
			eyes := imapAs(t, addr)
			const limit = 16 << 10
			mails := map[string][]byte{
				"gone@example.com": testMail("gone@example.com", 300),
				"fail@example.com": testMail("fail@example.com", 300),
				"unparsable":       testMail("unparsable", 300),
				"nothing":          testMail("nothing", 300),
				"big@example.com":  testMail("big@example.com", 256<<10),
			}
			order := []string{"gone@example.com", "fail@example.com", "unparsable", "big@example.com", "nothing"}
			for _, s := range order {
				appendIMAP(t, eyes, mails[s])
			}
			probe := &mailboxProbe{failFor: "fail@example.com"}
			mb, err := NewMailbox(MailboxConfig{
				URL:   "imap://bounce:s3cret@" + addr + "/INBOX?tls=none",
				Parse: probe.Parse, Reports: probe, Kept: probe, MaxMessageSize: limit,
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()

			before := ln.written.Load()
			n, err := mb.Poll(ctx)
			sent := ln.written.Load() - before
			if n != 1 || err == nil || !strings.Contains(err.Error(), "database is down") {
				t.Fatalf("first poll: handled %d, err %v; want 1 and the Handle error", n, err)
			}
			parsed, handled := probe.take()
			var want [][]byte
			for _, s := range []string{"gone@example.com", "fail@example.com", "unparsable", "nothing"} {
				want = append(want, mails[s])
			}
			if !slices.EqualFunc(parsed, want, bytes.Equal) {
				t.Errorf("Parse got %d mails, want the 4 small ones byte for byte in order", len(parsed))
			}
			if !slices.Equal(handled, []string{"gone@example.com"}) {
				t.Errorf("handled %v", handled)
			}
			if big := int64(len(mails["big@example.com"])); sent >= big {
				t.Errorf("the server sent %d bytes in the poll: the %d-byte mail was downloaded", sent, big)
			}
			// A mail with no report stays, set aside, as do the unreadable
			// and the too large; each is counted by UIDVALIDITY/UID.
			aside := []imap.Flag{`\flagged`, `\seen`, "heraldunparsed"}
			left := inbox(t, eyes)
			wantLeft := map[string][]imap.Flag{
				"fail@example.com": nil,
				"unparsable":       aside,
				"big@example.com":  aside,
				"nothing":          aside,
			}
			if fmt.Sprint(left) != fmt.Sprint(wantLeft) {
				t.Errorf("left in INBOX: %v, want %v", left, wantLeft)
			}
			kept := probe.takeKept()
			if len(kept) != 3 || !strings.HasPrefix(kept[0], "not a report ") || !strings.HasPrefix(kept[1], "too large ") ||
				!strings.HasPrefix(kept[2], "unreadable ") || !strings.HasSuffix(kept[2], "/3") || !strings.HasSuffix(kept[1], "/4") {
				t.Errorf("kept %q, want the three, each named UIDVALIDITY/UID", kept)
			}

			// Reports works again: the mail it refused is read once more,
			// the set-aside ones are not.
			probe.failFor = ""
			n, err = mb.Poll(ctx)
			if n != 1 || err != nil {
				t.Fatalf("second poll: handled %d, err %v", n, err)
			}
			parsed, handled = probe.take()
			if len(parsed) != 1 || !bytes.Equal(parsed[0], mails["fail@example.com"]) || !slices.Equal(handled, []string{"fail@example.com"}) {
				t.Errorf("second poll parsed %d mails, handled %v", len(parsed), handled)
			}
			n, err = mb.Poll(ctx)
			if parsed, _ = probe.take(); n != 0 || err != nil || len(parsed) != 0 {
				t.Errorf("third poll: handled %d, err %v, parsed %d", n, err, len(parsed))
			}
			left = inbox(t, eyes)
			if len(left) != 3 || left["unparsable"] == nil || left["big@example.com"] == nil || left["nothing"] == nil {
				t.Errorf("left in INBOX: %v", left)
			}
			if kept := probe.takeKept(); len(kept) != 0 {
				t.Errorf("counted again: %q", kept)
			}
		})
	}
}

// TestMailboxKeptNotCounted: a mail set aside whose count fails is left
// unflagged, read again and counted at the next poll; a handled mail is
// removed all the same.
func TestMailboxKeptNotCounted(t *testing.T) {
	t.Parallel()
	addr, _ := startIMAP(t, imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}})
	eyes := imapAs(t, addr)
	appendIMAP(t, eyes, testMail("nothing", 100))
	appendIMAP(t, eyes, testMail("gone@example.com", 100))
	probe := &mailboxProbe{failKeep: true}
	mb, err := NewMailbox(MailboxConfig{URL: "imap://bounce:s3cret@" + addr + "?tls=none", Parse: probe.Parse, Reports: probe, Kept: probe})
	if err != nil {
		t.Fatal(err)
	}
	n, err := mb.Poll(context.Background())
	if n != 1 || err == nil || !strings.Contains(err.Error(), "database is down") {
		t.Fatalf("first poll: handled %d, err %v", n, err)
	}
	if left := inbox(t, eyes); fmt.Sprint(left) != fmt.Sprint(map[string][]imap.Flag{"nothing": nil}) {
		t.Fatalf("left in INBOX: %v", left)
	}
	probe.failKeep = false
	if n, err := mb.Poll(context.Background()); n != 0 || err != nil {
		t.Fatalf("second poll: handled %d, err %v", n, err)
	}
	if kept := probe.takeKept(); len(kept) != 1 || !strings.HasPrefix(kept[0], "not a report ") {
		t.Fatalf("kept %q", kept)
	}
	if left := inbox(t, eyes); len(left["nothing"]) != 3 {
		t.Fatalf("left in INBOX: %v", left)
	}
}

func TestMailboxIMAPBatch(t *testing.T) {
	t.Parallel()
	addr, _ := startIMAP(t, imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}})
	eyes := imapAs(t, addr)
	for i := range 5 {
		appendIMAP(t, eyes, testMail(fmt.Sprintf("r%d@example.com", i), 100))
	}
	probe := &mailboxProbe{}
	mb, err := NewMailbox(MailboxConfig{URL: "imap://bounce:s3cret@" + addr + "?tls=none", Parse: probe.Parse, Reports: probe, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, want := range []int{2, 2, 1, 0} {
		n, err := mb.Poll(context.Background())
		if n != want || err != nil {
			t.Fatalf("poll: handled %d, err %v; want %d", n, err, want)
		}
		_, handled := probe.take()
		got = append(got, handled...)
	}
	if want := []string{"r0@example.com", "r1@example.com", "r2@example.com", "r3@example.com", "r4@example.com"}; !slices.Equal(got, want) {
		t.Errorf("handled %v, want %v (oldest first)", got, want)
	}
}

func TestMailboxIMAPRefusesLogin(t *testing.T) {
	t.Parallel()
	addr, _ := startIMAP(t, imap.CapSet{imap.CapIMAP4rev1: {}})
	probe := &mailboxProbe{}
	mb, err := NewMailbox(MailboxConfig{URL: "imap://bounce:wrong-secret@" + addr + "?tls=none", Parse: probe.Parse, Reports: probe})
	if err != nil {
		t.Fatal(err)
	}
	n, err := mb.Poll(context.Background())
	if n != 0 || err == nil {
		t.Fatalf("handled %d, err %v", n, err)
	}
	if strings.Contains(err.Error(), "wrong-secret") || strings.Contains(mb.String(), "wrong-secret") {
		t.Errorf("the password shows: %v / %s", err, mb)
	}
	// STARTTLS is required unless tls=none: a server without it is refused.
	mb, _ = NewMailbox(MailboxConfig{URL: "imap://bounce:s3cret@" + addr, Parse: probe.Parse, Reports: probe})
	if _, err := mb.Poll(context.Background()); err == nil {
		t.Error("a server without STARTTLS was read in plain text")
	}
}

// skipOrFail skips, or fails under HERALD_TEST_STRICT=1 (dbtest.SkipOrFail,
// which this package cannot import: dbtest imports service).
func skipOrFail(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv("HERALD_TEST_STRICT") == "1" {
		t.Fatalf("%s (HERALD_TEST_STRICT=1 forbids skipping)", reason)
	}
	t.Skip(reason)
}

func TestMailboxRecipients(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		want []string
	}{
		{"Delivered-To: bounces+bABC@herald.test\r\nX-Original-To: bounces+bABC@herald.test\r\nTo: Bounces <bounces@herald.test>, other@example.com\r\nSubject: x\r\n\r\nTo: body@example.com\r\n",
			[]string{"bounces+bABC@herald.test", "bounces@herald.test", "other@example.com"}},
		{"Delivered-To: a@herald.test\r\nDelivered-To: b@herald.test\r\n\r\n", []string{"a@herald.test", "b@herald.test"}},
		{"To: not an address\r\nX-Original-To: x@herald.test\r\n\r\n", []string{"x@herald.test"}},
		{"Subject: none\r\n\r\n", nil},
		{"", nil},
	} {
		if got := MailboxRecipients([]byte(tc.raw)); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.raw, got, tc.want)
		}
	}
	var many strings.Builder
	for i := range 100 {
		fmt.Fprintf(&many, "Delivered-To: r%d@herald.test\r\n", i)
	}
	if got := MailboxRecipients([]byte(many.String() + "\r\n")); len(got) != maxMailboxRecipients {
		t.Errorf("%d addresses kept", len(got))
	}
}

// TestMailboxCancel: a server that accepts and never answers holds a poll
// only until its ctx ends, over either protocol.
func TestMailboxCancel(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for _, scheme := range []string{"imap", "pop3"} {
		t.Run(scheme, func(t *testing.T) {
			probe := &mailboxProbe{}
			mb, err := NewMailbox(MailboxConfig{URL: scheme + "://u:p@" + ln.Addr().String() + "?tls=none", Parse: probe.Parse, Reports: probe})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := mb.Poll(ctx)
				done <- err
			}()
			c := <-accepted // the poll is connected and waits for a greeting
			defer c.Close()
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("poll ended with %v, want context.Canceled", err)
			}
		})
	}
}

// TestMailboxIMAPExpungedMeanwhile: a mail another client expunges during
// the poll is skipped, not an error.
func TestMailboxIMAPExpungedMeanwhile(t *testing.T) {
	t.Parallel()
	addr, _ := startIMAP(t, imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}})
	eyes := imapAs(t, addr)
	for _, s := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		appendIMAP(t, eyes, testMail(s, 100))
	}
	if _, err := eyes.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	probe := &mailboxProbe{}
	first := true
	parse := func(ctx context.Context, raw []byte) ([]Report, error) {
		if first {
			first = false
			// Someone else removes the second mail (UID 2).
			store := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}
			if err := eyes.Store(imap.UIDSetNum(2), store, nil).Close(); err != nil {
				t.Error(err)
			}
			if err := eyes.Expunge().Close(); err != nil {
				t.Error(err)
			}
		}
		return probe.Parse(ctx, raw)
	}
	mb, err := NewMailbox(MailboxConfig{URL: "imap://bounce:s3cret@" + addr + "?tls=none", Parse: parse, Reports: probe})
	if err != nil {
		t.Fatal(err)
	}
	n, err := mb.Poll(context.Background())
	_, handled := probe.take()
	if n != 2 || err != nil || !slices.Equal(handled, []string{"a@example.com", "c@example.com"}) {
		t.Fatalf("handled %d %v, err %v", n, handled, err)
	}
}
