package send

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"herald/bench/harness"
	"herald/smtptest"
)

// fixture is what the benchmark's database holds before the runs: all of
// it made by herald itself, through its command line (`herald account
// create`, `herald dkim create`), its API and the sender's verification
// link; the driver writes no row.
type fixture struct {
	keys       harness.AccountKeys
	ownerEmail string
	sender     int64
	group      int64
	audience   int64 // the contact type of -contacts contacts
	probe      int64 // a small contact type, for herald's sample messages
	probeSize  int
	fromEmail  string
	// importHWM is herald's peak RSS (VmHWM) after it imported the
	// audience (the set-up herald's whole life).
	importHWM     int64
	importElapsed time.Duration
}

const (
	senderDomain = "news.cafe-zoe.example.com"
	ownerEmail   = "owner@cafe-zoe.example.com"
	probeSize    = 200 // contacts of the probe send (herald's sample messages)
)

// prepare migrates the database (herald account create) and fills it
// through a set-up herald: an account with its keys, a verified sender (the
// verification mail caught by an in-process SMTP server, its link opened),
// an unsubscribe group, and two contact types, one of contacts contacts and
// a small one for the probe send, each imported as a CSV through
// POST /api/contacts/upload-csv. With dkim, `herald dkim create` gives the
// account an RSA 2048 key for the sender's domain, and herald then signs
// every message.
func (b *bench) prepare(ctx context.Context, contacts int, dkim bool) (*fixture, error) {
	f := &fixture{probeSize: probeSize, fromEmail: "hello@" + senderDomain, ownerEmail: ownerEmail}
	env := b.env()
	keys, err := harness.CreateAccount(ctx, b.bin, env, ownerEmail)
	if err != nil {
		return nil, err
	}
	f.keys = keys
	b.f = f
	if dkim {
		// --sign-now: no DNS serves the key's record here, and the
		// benchmark measures signing.
		cmd := exec.CommandContext(ctx, b.bin, "dkim", "create", "--email", ownerEmail, "--domain", senderDomain, "--sign-now")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("herald dkim create: %v: %s", err, out)
		}
	}
	mail, err := smtptest.Listen("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer mail.Close()
	h, err := b.startHerald(ctx, "setup", mail.URL())
	if err != nil {
		return nil, err
	}
	defer h.proc.Stop()
	fail := func(what string, err error) (*fixture, error) {
		return nil, fmt.Errorf("%s: %w; herald log: %s", what, err, h.proc.Tail())
	}

	// The sender, verified through the link herald mails.
	if _, err := b.call(ctx, h, http.MethodPost, "/sender/save", url.Values{
		"from_name": {"Café Zoë"}, "from_email": {f.fromEmail}, "reply_to_email": {"team@cafe-zoe.example.com"},
		"country_id": {"250"}, "company_address": {"12 rue des Martyrs"}, "zip_code": {"75009"}, "nickname": {"cafe"},
	}); err != nil {
		return fail("sender", err)
	}
	if !mail.WaitCount(1, 30*time.Second) {
		return fail("sender", fmt.Errorf("no verification mail in 30 s"))
	}
	token := verifyLink.FindStringSubmatch(unQP(string(mail.Messages()[0].Data)))
	if token == nil {
		return fail("sender", fmt.Errorf("no /senders/verify/ link in the verification mail"))
	}
	if err := confirmSender(ctx, h, token[1]); err != nil {
		return fail("sender", err)
	}
	if f.sender, err = b.idOf(ctx, h, "/senders", "senders", "from_email", f.fromEmail); err != nil {
		return fail("sender", err)
	}
	if _, err := b.call(ctx, h, http.MethodPost, "/unsubscribes-groups/save", url.Values{
		"group_name": {"Newsletter"}, "description": {"Our monthly news"}, "is_display": {"1"},
	}); err != nil {
		return fail("group", err)
	}
	if f.group, err = b.idOf(ctx, h, "/unsubscribes-groups", "unsubscribesGroups", "group_name", "Newsletter"); err != nil {
		return fail("group", err)
	}
	for _, t := range []struct {
		name   string
		prefix string
		n      int
		id     *int64
	}{{"Probe", "p", probeSize, &f.probe}, {"Customers", "c", contacts, &f.audience}} {
		if _, err := b.call(ctx, h, http.MethodPost, "/contacts-type/add", url.Values{"name": {t.name}}); err != nil {
			return fail("contact type", err)
		}
		if *t.id, err = b.idOf(ctx, h, "/contacts-type", "contactTypes", "name", t.name); err != nil {
			return fail("contact type", err)
		}
		if t.n == 0 {
			continue
		}
		path := filepath.Join(b.dir, t.name+".csv")
		size, err := writeContactsCSV(path, t.prefix, t.n, *t.id)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		created, err := b.upload(ctx, h, *t.id, path, size)
		if err != nil {
			return fail("import "+t.name, err)
		}
		f.importElapsed = time.Since(t0)
		os.Remove(path)
		if created != int64(t.n) {
			return fail("import "+t.name, fmt.Errorf("%d contacts created, want %d", created, t.n))
		}
	}
	_, f.importHWM, _ = harness.ProcMem(h.pid())
	if b.events != nil {
		if err := b.addEndpoint(ctx, h, b.events.url); err != nil {
			return fail("events endpoint", err)
		}
	}
	return f, nil
}

var verifyLink = regexp.MustCompile(`/senders/verify/([A-Za-z0-9_\-.~%]+)`)

// confirmSender posts the verification link, as its page's button does.
func confirmSender(ctx context.Context, h *heraldProc, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+h.addr+"/senders/verify/"+token, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /senders/verify/…: %d %.300s", resp.StatusCode, body)
	}
	return nil
}

// idOf reads a list (message.<key>: array) and returns the id of the item
// whose field is value.
func (b *bench) idOf(ctx context.Context, h *heraldProc, path, key, field, value string) (int64, error) {
	body, err := b.call(ctx, h, http.MethodGet, path, nil)
	if err != nil {
		return 0, err
	}
	var env struct {
		Message map[string][]map[string]any `json:"message"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return 0, fmt.Errorf("GET %s: %w", path, err)
	}
	for _, it := range env.Message[key] {
		if fmt.Sprint(it[field]) == value {
			if id, ok := it["id"].(float64); ok {
				return int64(id), nil
			}
		}
	}
	return 0, fmt.Errorf("GET %s: no %s %q in %.300s", path, field, value, body)
}

// upload posts the CSV file to contacts/upload-csv as a multipart body
// streamed from disk and returns the contacts created.
func (b *bench) upload(ctx context.Context, h *heraldProc, typeID int64, path string, size int64) (int64, error) {
	var head, tail bytes.Buffer
	mw := multipart.NewWriter(&head)
	if err := mw.WriteField("contact_type_id", strconv.FormatInt(typeID, 10)); err != nil {
		return 0, err
	}
	if _, err := mw.CreateFormFile("file", "contacts.csv"); err != nil {
		return 0, err
	}
	headLen := head.Len()
	if err := mw.Close(); err != nil {
		return 0, err
	}
	tail.Write(head.Bytes()[headLen:])
	head.Truncate(headLen)
	file, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer file.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+h.addr+"/api/contacts/upload-csv", io.MultiReader(&head, file, &tail))
	if err != nil {
		return 0, err
	}
	req.ContentLength = int64(head.Len()) + size + int64(tail.Len())
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("PublicKey", b.f.keys.PublicKey)
	req.Header.Set("SecretKey", b.f.keys.SecretKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	var env struct {
		Status string `json:"status"`
		Import *struct {
			Created int64 `json:"created"`
		} `json:"import"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &env) != nil || env.Status != "success" || env.Import == nil {
		return 0, fmt.Errorf("upload-csv: %d %.500s", resp.StatusCode, out)
	}
	return env.Import.Created, nil
}

var (
	firstNames = []string{"James", "Mary", "John", "Patricia", "Robert", "Jennifer", "Michael", "Linda", "William", "Elizabeth",
		"David", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas", "Sarah", "Charles", "Karen", "Amélie", "Jürgen", "Søren", "Zoë"}
	lastNames = []string{"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
		"Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Müller", "O'Brien"}
	cities  = []string{"Paris", "Lyon", "Montréal", "New York", "Berlin", "München", "London", "Madrid", "São Paulo", "Tokyo"}
	domains = []string{"example.com", "example.org", "mail.example.net", "inbox.example.co.uk"}
)

// writeContactsCSV writes n contacts (email, first_name, last_name, city)
// to path and returns its size. Addresses are unique: prefix, a sequence
// number and a name; the names carry accents and an apostrophe so that
// escaping and quoted-printable encoding have something to do.
func writeContactsCSV(path, prefix string, n int, seed int64) (int64, error) {
	file, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(file, 1<<20)
	w.WriteString("email,first_name,last_name,city\n")
	rng := mrand.New(mrand.NewPCG(uint64(seed), 7))
	var line []byte
	for i := 1; i <= n; i++ {
		first := firstNames[rng.IntN(len(firstNames))]
		last := lastNames[rng.IntN(len(lastNames))]
		line = line[:0]
		line = append(line, prefix...)
		line = append(line, fmt.Sprintf("%07d", i)...)
		line = append(line, '.')
		line = append(line, strings.ToLower(strings.Map(asciiOnly, first))...)
		line = append(line, '.')
		line = append(line, strings.ToLower(strings.Map(asciiOnly, last))...)
		line = append(line, '@')
		line = append(line, domains[rng.IntN(len(domains))]...)
		line = append(line, ',')
		line = append(line, first...)
		line = append(line, ',')
		line = append(line, last...)
		line = append(line, ',')
		line = append(line, cities[rng.IntN(len(cities))]...)
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			file.Close()
			return 0, err
		}
	}
	if err := w.Flush(); err != nil {
		file.Close()
		return 0, err
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return 0, err
	}
	return st.Size(), file.Close()
}

// asciiOnly keeps letters a-z and A-Z of a name for its address.
func asciiOnly(r rune) rune {
	if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
		return r
	}
	return -1
}
