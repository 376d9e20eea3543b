package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/api"
	"herald/dbtest"
	"herald/eventually"
	"herald/service"
)

// serve runs the env's app on a loopback port (a real server: request
// bodies stream as a client sends them) and returns its address.
func serve(t *testing.T, app *fiber.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String()
}

// stream is an upload whose body the test writes part by part while the
// server reads it.
type stream struct {
	t    *testing.T
	pw   *io.PipeWriter
	mw   *multipart.Writer
	done chan streamed
}

type streamed struct {
	code int
	body string
	err  error
}

func startUpload(t *testing.T, base string, c *client, query string) *stream {
	t.Helper()
	pr, pw := io.Pipe()
	s := &stream{t: t, pw: pw, mw: multipart.NewWriter(pw), done: make(chan streamed, 1)}
	// A test that fails midway leaves no body open for Shutdown to wait on.
	t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) })
	req, err := http.NewRequest("POST", base+"/api/contacts/upload-csv"+query, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", s.mw.FormDataContentType())
	req.Header.Set("PublicKey", c.keys.PublicKey)
	req.Header.Set("SecretKey", c.keys.SecretKey)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			pr.CloseWithError(err)
			s.done <- streamed{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		pr.Close() // the server answered: the test's writes stop here
		s.done <- streamed{code: resp.StatusCode, body: string(b)}
	}()
	return s
}

func (s *stream) field(name, value string) {
	s.t.Helper()
	if err := s.mw.WriteField(name, value); err != nil {
		s.t.Fatalf("field %s: %v", name, err)
	}
}

func (s *stream) file(name string) io.Writer {
	s.t.Helper()
	w, err := s.mw.CreateFormFile("file", name)
	if err != nil {
		s.t.Fatal(err)
	}
	return w
}

// finish ends the body (if the server still reads it) and returns the answer.
func (s *stream) finish() streamed {
	s.t.Helper()
	_ = s.mw.Close()
	_ = s.pw.Close()
	select {
	case r := <-s.done:
		if r.err != nil {
			s.t.Fatalf("upload: %v", r.err)
		}
		return r
	case <-time.After(60 * time.Second):
		s.t.Fatal("no answer to the upload")
	}
	return streamed{}
}

// csvChunk is 64 KB of CSV rows.
var csvChunk = func() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "someone%06d@example.com,Some,One\n", i)
	}
	return b.Bytes()
}()

// writeMB writes n MB of rows (more than loopback's socket buffers hold,
// so the server has read most of it when this returns).
func writeMB(t *testing.T, w io.Writer, n int) {
	t.Helper()
	if _, err := io.WriteString(w, "email,first_name,last_name\n"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n*16; i++ {
		if _, err := w.Write(csvChunk); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
}

// spoolFiles lists what of dir the process has open (deleted or not) and
// what dir holds.
func spoolFiles(t *testing.T, dir string) (open, listed []string) {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
			open = append(open, target)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		listed = append(listed, e.Name())
	}
	return open, listed
}

// finding 5: a file sent before a contact_type_id that names nothing was
// written whole to the temporary folder (900 MB) before the type was
// checked. Now: the spool is unlinked as soon as it is made (nothing in
// the folder, even during the upload), the type is checked the moment
// its part arrives, and the spool is gone with the answer; an account
// without any contact type keeps nothing at all.
func TestUploadSpool(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	e := newEnv(t)
	base := serve(t, e.app)
	e.a.newType(t, "Customers")

	t.Run("type after the file names nothing", func(t *testing.T) {
		up := startUpload(t, base, e.a, "")
		writeMB(t, up.file("big.csv"), 16)
		open, listed := spoolFiles(t, dir)
		if len(listed) != 0 {
			t.Fatalf("the temporary folder holds %v during the upload", listed)
		}
		if len(open) != 1 || !strings.HasSuffix(open[0], " (deleted)") {
			t.Fatalf("open spool files during the upload: %v (want one, unlinked)", open)
		}
		up.field("contact_type_id", "999999")
		r := up.finish()
		if r.code != http.StatusNotFound || r.body != `{"status":"failed","errors":"Record Not Found"}` {
			t.Fatalf("answer: %d %s", r.code, r.body)
		}
		if open, listed := spoolFiles(t, dir); len(open)+len(listed) != 0 {
			t.Fatalf("after the answer: open %v, listed %v", open, listed)
		}
	})

	t.Run("an account without contact types keeps nothing", func(t *testing.T) {
		up := startUpload(t, base, e.b, "")
		writeMB(t, up.file("big.csv"), 16)
		if open, listed := spoolFiles(t, dir); len(open)+len(listed) != 0 {
			t.Fatalf("during the upload: open %v, listed %v", open, listed)
		}
		up.field("contact_type_id", "1")
		if r := up.finish(); r.code != http.StatusNotFound || r.body != `{"status":"failed","errors":"Record Not Found"}` {
			t.Fatalf("answer: %d %s", r.code, r.body)
		}
		up = startUpload(t, base, e.b, "")
		writeMB(t, up.file("big.csv"), 1)
		if r := up.finish(); r.code != http.StatusUnprocessableEntity || !strings.Contains(r.body, "The contact type id field is required.") {
			t.Fatalf("no type at all: %d %s", r.code, r.body)
		}
	})

	t.Run("a bad type in the query string is refused before the body", func(t *testing.T) {
		up := startUpload(t, base, e.a, "?contact_type_id=999999")
		// The server answers while the body is still open (the client
		// has sent a little of the file and waits).
		go func() {
			if w, err := up.mw.CreateFormFile("file", "big.csv"); err == nil {
				_, _ = w.Write(csvChunk)
			}
		}()
		select {
		case r := <-up.done:
			if r.err != nil || r.code != http.StatusNotFound {
				t.Fatalf("answer: %d %s %v", r.code, r.body, r.err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("no answer before the body")
		}
		if open, listed := spoolFiles(t, dir); len(open)+len(listed) != 0 {
			t.Fatalf("open %v, listed %v", open, listed)
		}
	})
}

// A file that comes before its type is held only up to the spool's bound:
// a body declared larger is refused before the file is read, a streamed
// one once past the bound; with the type first, no bound but the upload's.
func TestUploadSpoolBound(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	svc := dbtest.Service(t)
	app := fiber.New(fiber.Config{ErrorHandler: api.ErrorHandler, BodyLimit: 10 << 20, StreamRequestBody: true, DisablePreParseMultipartForm: true, DisableStartupMessage: true})
	api.New(svc, api.Options{MaxSpoolBytes: 1 << 20}).Mount(app.Group("/api"))
	e := &env{app: app, svc: svc}
	c := e.account(t, "a@example.com")
	typeID := c.newType(t, "Customers")
	var big bytes.Buffer
	writeMB(t, &big, 2)
	const want = `{"status":"failed","errors":"The file is too large to be held until contact_type_id arrives: send contact_type_id before the file, or in the query string."}`

	r, _ := upload(t, c, [][2]string{{"file", ""}, {"contact_type_id", typeID}}, "big.csv", big.String())
	if r.Code != http.StatusRequestEntityTooLarge || r.raw != want {
		t.Fatalf("declared too large: %d %s", r.Code, r.raw)
	}
	base := serve(t, app)
	up := startUpload(t, base, c, "")
	// Just past the bound: what the server leaves unread fits what it
	// drains before answering (256 KB), so the answer is not lost to a
	// reset connection.
	go func() { _, _ = up.file("big.csv").Write(big.Bytes()[:1<<20+64<<10]) }()
	if got := <-up.done; got.code != http.StatusRequestEntityTooLarge || got.body != want {
		t.Fatalf("streamed too large: %+v", got)
	}
	if open, listed := spoolFiles(t, dir); len(open)+len(listed) != 0 {
		t.Fatalf("open %v, listed %v", open, listed)
	}
	r, rep := upload(t, c, [][2]string{{"contact_type_id", typeID}, {"file", ""}}, "big.csv", big.String())
	expectOK(t, r, "Imported Successfully")
	if rep.Created == 0 || rep.Skipped != 0 {
		t.Fatalf("report: %+v", rep)
	}
}

// Every part order imports: the type in the query string, before the
// file, after it.
func TestUploadPartOrders(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	e := newEnv(t)
	typeID := e.a.newType(t, "Customers")
	for i, fields := range [][][2]string{{{"contact_type_id", typeID}, {"file", ""}}, {{"file", ""}, {"contact_type_id", typeID}}, {{"file", ""}}} {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for _, f := range fields {
			if f[0] == "file" {
				w, _ := mw.CreateFormFile("file", "people.csv")
				fmt.Fprintf(w, "email,first_name\norder%d@example.com,Ann\n", i)
				continue
			}
			_ = mw.WriteField(f[0], f[1])
		}
		mw.Close()
		path := "/api/contacts/upload-csv"
		if len(fields) == 1 {
			path += "?contact_type_id=" + typeID
		}
		r := e.a.send("POST", path, rawBody{mw.FormDataContentType(), b.String()})
		var env struct {
			Import importReport `json:"import"`
		}
		_ = json.Unmarshal([]byte(r.raw), &env)
		expectOK(t, r, "Imported Successfully")
		if env.Import.Created != 1 {
			t.Fatalf("order %d: %+v", i, env.Import)
		}
	}
	if n := len(list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts")); n != 3 {
		t.Fatalf("%d contacts, want 3", n)
	}
	if open, listed := spoolFiles(t, dir); len(open)+len(listed) != 0 {
		t.Fatalf("open %v, listed %v", open, listed)
	}
}

// At most two uploads of one account at once: the third is 429 with the
// envelope; the two finish and import; then another may start.
func TestUploadConcurrencyCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := serve(t, e.app)
	typeID := e.a.newType(t, "Customers")
	var ups []*stream
	for i := 0; i < service.MaxUploads; i++ {
		up := startUpload(t, base, e.a, "")
		up.field("contact_type_id", typeID)
		w := up.file("people.csv")
		fmt.Fprintf(w, "email,first_name\nfirst%d@example.com,Ann\n", i)
		ups = append(ups, up)
		// Wait until its import runs (it waits for the rest of the file).
		eventually.NoError(t, 30*time.Second, func() error {
			recent, err := e.svc.Imports.Recent(context.Background(), e.a.id, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(recent) == i+1 {
				return nil
			}
			return fmt.Errorf("upload %d did not start", i+1)
		})
	}
	fields := [][2]string{{"contact_type_id", typeID}, {"file", ""}}
	r, _ := upload(t, e.a, fields, "third.csv", "email\nthird@example.com\n")
	if r.Code != http.StatusTooManyRequests || r.Status != "failed" || r.text(r.Errors) != "Too many uploads at once. Wait for one to finish and try again." {
		t.Fatalf("third upload: %d %s", r.Code, r.raw)
	}
	// Another account is not limited by this one.
	r, _ = upload(t, e.b, [][2]string{{"contact_type_id", e.b.newType(t, "Theirs")}, {"file", ""}}, "b.csv", "email\nb@example.com\n")
	expectOK(t, r, "Imported Successfully")

	for i, up := range ups {
		if r := up.finish(); r.code != http.StatusOK || !strings.Contains(r.body, `"created":1`) {
			t.Fatalf("upload %d: %d %s", i+1, r.code, r.body)
		}
	}
	r, rep := upload(t, e.a, fields, "fourth.csv", "email\nfourth@example.com\n")
	expectOK(t, r, "Imported Successfully")
	if rep.Created != 1 {
		t.Fatalf("report: %+v", rep)
	}
}
