package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/mail"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"herald/eventually"
)

// dovecot is a private Dovecot on loopback: its own configuration, run
// and state folders, a passwd-file with one user "bounce" (password
// "s3cret") and that user's Maildir, all in one temporary folder; POP3,
// POP3S, IMAP and IMAPS on free ports, TLS with a certificate that roots
// trusts.
type dovecot struct {
	t                        *testing.T
	dir, maildir             string
	uid, gid                 int
	pop3, pop3s, imap, imaps string
	roots                    *x509.CertPool
	master                   *exec.Cmd
	delivered                int
}

// findDovecot returns the dovecot command, or "".
func findDovecot() string {
	if p, err := exec.LookPath("dovecot"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/dovecot"); err == nil {
		return "/usr/sbin/dovecot"
	}
	return ""
}

func startDovecot(t *testing.T) *dovecot {
	t.Helper()
	bin := findDovecot()
	if bin == "" {
		skipOrFail(t, "dovecot not found: install Debian's dovecot-pop3d and dovecot-imapd (apt-get install -y --no-install-recommends dovecot-pop3d dovecot-imapd) to run the real POP3/IMAP test")
	}
	d := &dovecot{t: t, uid: os.Getuid(), gid: os.Getgid()}
	loginUser := ""
	if d.uid == 0 {
		// Dovecot runs no mail process as root: the mailbox belongs to
		// nobody, the login and internal processes to the package's users.
		d.uid, d.gid = 65534, 65534
		for _, name := range []string{"dovenull", "dovecot"} {
			if _, err := user.Lookup(name); err != nil {
				skipOrFail(t, "dovecot is installed but its user "+name+" is missing: "+err.Error())
			}
		}
	} else {
		u, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		loginUser = "default_login_user = " + u.Username + "\ndefault_internal_user = " + u.Username + "\n"
	}
	// Dovecot's processes must enter the folder, which a test's TempDir
	// (0700) does not let them do.
	dir, err := os.MkdirTemp("", "herald-dovecot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d.dir = dir
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home", "bounce")
	d.maildir = filepath.Join(home, "Maildir")
	for _, sub := range []string{"run", "state", "new", "cur", "tmp"} {
		p := filepath.Join(dir, sub)
		if sub == "new" || sub == "cur" || sub == "tmp" {
			p = filepath.Join(d.maildir, sub)
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := filepath.Walk(filepath.Join(dir, "home"), func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, d.uid, d.gid)
	}); err != nil && os.Getuid() == 0 {
		t.Fatal(err)
	}
	cert, roots := selfSigned(t)
	d.roots = roots
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	d.write("cert.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})))
	d.write("key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})))
	d.write("passwd", "bounce:{PLAIN}s3cret\n")
	ports := freePorts(t, 4)
	d.pop3, d.pop3s, d.imap, d.imaps = "127.0.0.1:"+ports[0], "127.0.0.1:"+ports[1], "127.0.0.1:"+ports[2], "127.0.0.1:"+ports[3]
	d.write("dovecot.conf", fmt.Sprintf(`base_dir = %[1]s/run
state_dir = %[1]s/state
log_path = %[1]s/dovecot.log
instance_name = herald-test-%[2]s
%[7]sprotocols = pop3 imap
listen = 127.0.0.1
ssl = yes
ssl_cert = <%[1]s/cert.pem
ssl_key = <%[1]s/key.pem
# tls=none is tested too: plain-text logins are allowed on loopback.
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = %[8]d
first_valid_gid = %[9]d
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%%u %[1]s/passwd
}
userdb {
  driver = static
  args = uid=%[8]d gid=%[9]d home=%[1]s/home/%%u
}
mail_location = maildir:~/Maildir
service pop3-login {
  inet_listener pop3 {
    port = %[3]s
  }
  inet_listener pop3s {
    port = %[4]s
    ssl = yes
  }
}
service imap-login {
  inet_listener imap {
    port = %[5]s
  }
  inet_listener imaps {
    port = %[6]s
    ssl = yes
  }
}
`, dir, filepath.Base(dir), ports[0], ports[1], ports[2], ports[3], loginUser, d.uid, d.gid))
	d.master = exec.Command(bin, "-F", "-c", filepath.Join(dir, "dovecot.conf"))
	d.master.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.master.Start(); err != nil {
		t.Fatalf("dovecot: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		d.master.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		d.master.Process.Signal(syscall.SIGTERM)
		<-exited
	})
	// Wait until it listens (it forks its login processes on demand).
	eventually.NoError(t, 10*time.Second, func() error {
		c, err := net.Dial("tcp", d.imaps)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			t.Fatalf("dovecot stopped at start: %v\n%s", d.master.ProcessState, d.log())
		default:
		}
		return fmt.Errorf("dovecot does not listen on %s: %v\n%s", d.imaps, err, d.log())
	})
	return d
}

// freePorts returns n distinct free loopback ports (all held open until
// all are chosen, so that none is handed out twice).
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		_, port, _ := net.SplitHostPort(l.Addr().String())
		ports = append(ports, port)
	}
	return ports
}

func (d *dovecot) write(name, content string) {
	d.t.Helper()
	if err := os.WriteFile(filepath.Join(d.dir, name), []byte(content), 0o644); err != nil {
		d.t.Fatal(err)
	}
}

func (d *dovecot) log() string {
	b, _ := os.ReadFile(filepath.Join(d.dir, "dovecot.log"))
	return string(b)
}

// deliver puts a mail into the Maildir as a local delivery agent would:
// written in tmp/, renamed into new/, LF line ends. It returns the mail as
// a client reads it (CRLF line ends).
func (d *dovecot) deliver(raw []byte) []byte {
	d.t.Helper()
	d.delivered++
	lf := bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	name := fmt.Sprintf("%d.M%dP%d.herald-test", time.Now().Unix(), d.delivered, os.Getpid())
	tmp := filepath.Join(d.maildir, "tmp", name)
	if err := os.WriteFile(tmp, lf, 0o644); err != nil {
		d.t.Fatal(err)
	}
	if err := os.Chown(tmp, d.uid, d.gid); err != nil && os.Getuid() == 0 {
		d.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(d.maildir, "new", name)); err != nil {
		d.t.Fatal(err)
	}
	return bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
}

// left lists the subjects of the mails in the Maildir with their maildir
// flags (the letters after ":2,"), read from the files themselves.
func (d *dovecot) left() map[string]string {
	d.t.Helper()
	out := map[string]string{}
	for _, sub := range []string{"new", "cur"} {
		files, err := os.ReadDir(filepath.Join(d.maildir, sub))
		if err != nil {
			d.t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(d.maildir, sub, f.Name()))
			if err != nil {
				d.t.Fatal(err)
			}
			msg, err := mail.ReadMessage(bytes.NewReader(b))
			if err != nil {
				d.t.Fatal(err)
			}
			_, flags, _ := strings.Cut(f.Name(), ":2,")
			out[msg.Header.Get("Subject")] = flags
		}
	}
	return out
}

// empty removes every mail from the Maildir.
func (d *dovecot) empty() {
	for _, sub := range []string{"new", "cur"} {
		files, _ := os.ReadDir(filepath.Join(d.maildir, sub))
		for _, f := range files {
			os.Remove(filepath.Join(d.maildir, sub, f.Name()))
		}
	}
}

func sortedMails(m [][]byte) [][]byte {
	m = slices.Clone(m)
	slices.SortFunc(m, bytes.Compare)
	return m
}

func TestMailboxDovecot(t *testing.T) {
	d := startDovecot(t)
	for _, tc := range []struct {
		name, url string
	}{
		{"pop3 tls=none", "pop3://bounce:s3cret@" + d.pop3 + "?tls=none"},
		{"pop3 STLS", "pop3://bounce:s3cret@" + d.pop3},
		{"pop3s", "pop3s://bounce:s3cret@" + d.pop3s},
		{"imaps", "imaps://bounce:s3cret@" + d.imaps + "/INBOX"},
		{"imap STARTTLS", "imap://bounce:s3cret@" + d.imap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d.empty() // each case starts from an empty mailbox
			const limit = 16 << 10
			mails := map[string][]byte{}
			for _, s := range []string{"gone@example.com", "fail@example.com", "unparsable", "big@example.com", "nothing"} {
				size := 300
				if s == "big@example.com" {
					size = 256 << 10
				}
				mails[s] = d.deliver(testMail(s, size))
			}
			logStart := len(d.log())
			probe := &mailboxProbe{failFor: "fail@example.com"}
			cfg := MailboxConfig{
				URL: tc.url, Parse: probe.Parse, Reports: probe, Kept: probe, MaxMessageSize: limit,
				TLSConfig: &tls.Config{RootCAs: d.roots},
			}
			mb, err := NewMailbox(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			n, err := mb.Poll(ctx)
			if n != 1 || err == nil || !strings.Contains(err.Error(), "database is down") {
				t.Fatalf("first poll: handled %d, err %v; want 1 and the Handle error\n%s", n, err, d.log())
			}
			parsed, handled := probe.take()
			var want [][]byte
			for _, s := range []string{"gone@example.com", "fail@example.com", "unparsable", "nothing"} {
				want = append(want, mails[s])
			}
			if !slices.EqualFunc(sortedMails(parsed), sortedMails(want), bytes.Equal) {
				t.Errorf("Parse got %d mails, want the 4 small ones byte for byte", len(parsed))
			}
			if !slices.Equal(handled, []string{"gone@example.com"}) {
				t.Errorf("handled %v", handled)
			}
			// Only the handled mail is gone: the one with no report stays,
			// set aside like the unreadable and the too large one.
			left := d.left()
			if len(left) != 4 || !has(left, "fail@example.com") || !has(left, "unparsable") || !has(left, "big@example.com") || !has(left, "nothing") {
				t.Errorf("left in the Maildir: %v", left)
			}
			if strings.HasPrefix(tc.name, "imap") {
				// Set aside: \Seen, \Flagged and the keyword (maildir
				// letters S, F and a, the first keyword of the folder).
				for _, s := range []string{"unparsable", "big@example.com", "nothing"} {
					if !strings.Contains(left[s], "S") || !strings.Contains(left[s], "F") || !strings.Contains(left[s], "a") {
						t.Errorf("%s has maildir flags %q, want S, F and a keyword", s, left[s])
					}
				}
				if left["fail@example.com"] != "" {
					t.Errorf("the mail Reports refused was flagged: %q", left["fail@example.com"])
				}
			}
			// Each is counted, named by what the server keeps for it
			// (IMAP UIDVALIDITY/UID, POP3 UIDL).
			kept := probe.takeKept()
			if len(kept) != 3 || !strings.HasPrefix(kept[0], KeptNotAReport+" ") || !strings.HasPrefix(kept[1], KeptTooLarge+" ") ||
				!strings.HasPrefix(kept[2], KeptUnreadable+" ") {
				t.Errorf("kept %q", kept)
			}
			for _, k := range kept {
				id := k[strings.LastIndexByte(k, ' ')+1:]
				if strings.HasPrefix(tc.name, "imap") != strings.Contains(id, "/") || strings.HasPrefix(id, "sha256:") {
					t.Errorf("kept mail id %q", id)
				}
			}

			probe.failFor = ""
			n, err = mb.Poll(ctx)
			parsed, handled = probe.take()
			if n != 1 || err != nil || len(parsed) != 1 || !bytes.Equal(parsed[0], mails["fail@example.com"]) || !slices.Equal(handled, []string{"fail@example.com"}) {
				t.Fatalf("second poll: handled %d (%v), err %v, parsed %d mails", n, handled, err, len(parsed))
			}
			n, err = mb.Poll(ctx)
			if parsed, _ = probe.take(); n != 0 || err != nil || len(parsed) != 0 {
				t.Errorf("third poll: handled %d, err %v, parsed %d", n, err, len(parsed))
			}
			if left := d.left(); len(left) != 3 || !has(left, "unparsable") || !has(left, "big@example.com") || !has(left, "nothing") {
				t.Errorf("left in the Maildir: %v", left)
			}
			if again := probe.takeKept(); len(again) != 0 {
				t.Errorf("counted again without a restart: %q", again)
			}

			if strings.HasPrefix(tc.name, "pop3") {
				// Dovecot logs the bytes each POP3 session sent by RETR.
				var sent int64
				for _, m := range retrLog.FindAllStringSubmatch(d.log()[logStart:], -1) {
					n, _ := strconv.ParseInt(m[1], 10, 64)
					sent += n
				}
				if big := int64(len(mails["big@example.com"])); sent == 0 || sent >= big {
					t.Errorf("RETR sent %d bytes in all: the %d-byte mail was downloaded (or the log says nothing)", sent, big)
				}
			}

			// A new poller (a restart): IMAP's flags still hold; POP3's
			// memory is gone, so the unparsable mail and the one with no
			// report are read once more, and only once, under the same
			// names: the count (keyed by them) does not grow.
			mb, err = NewMailbox(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if n, err := mb.Poll(ctx); n != 0 || err != nil {
					t.Fatalf("after restart: handled %d, err %v", n, err)
				}
			}
			parsed, _ = probe.take()
			var wantParsed [][]byte
			var wantKept []string
			if strings.HasPrefix(tc.name, "pop3") {
				wantParsed = [][]byte{mails["unparsable"], mails["nothing"]}
				wantKept = kept
			}
			if !slices.EqualFunc(sortedMails(parsed), sortedMails(wantParsed), bytes.Equal) {
				t.Errorf("after restart, %d mails parsed; want %d", len(parsed), len(wantParsed))
			}
			if again := probe.takeKept(); !slices.Equal(again, wantKept) {
				t.Errorf("after restart, kept %q; want %q", again, wantKept)
			}
			if left := d.left(); len(left) != 3 {
				t.Errorf("left in the Maildir after restart: %v", left)
			}
		})
	}
}

// retrLog matches the RETR total of a POP3 session in Dovecot's log.
var retrLog = regexp.MustCompile(`pop3\(bounce\).*Disconnected: .*retr=\d+/(\d+)`)

func has(m map[string]string, k string) bool { _, ok := m[k]; return ok }
