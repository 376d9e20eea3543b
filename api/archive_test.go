package api_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// archiveRecord is the archive field of a single-send record.
type archiveRecord struct {
	Utr     string `json:"utr"`
	Archive *int   `json:"archive"`
}

func archiveOf(t *testing.T, c *client, utr string) int {
	t.Helper()
	items := list[archiveRecord](t, c.send("GET", "/api/single-send/details?utr="+utr, nil), "singleSend")
	if len(items) != 1 || items[0].Archive == nil {
		t.Fatalf("details of %s: %+v", utr, items)
	}
	return *items[0].Archive
}

func TestArchiveField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	withArchive := s.body()
	withArchive["archive"] = 1 // a JSON number
	on := utrOfReply(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, withArchive)))
	off := utrOfReply(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body())))
	if archiveOf(t, e.a, on) != 1 || archiveOf(t, e.a, off) != 0 {
		t.Fatal("archive not stored on create")
	}
	// Update: a form's 0, then not given (kept).
	fields := []string{"utr", on, "archive", "0"}
	for k, v := range s.body() {
		if str, ok := v.(string); ok {
			fields = append(fields, k, str)
		}
	}
	fields = append(fields, "recipient_id[0]", "contacts_"+itoa(s.ctype))
	utrOfReply(t, e.a.send("POST", "/api/single/send/update", form(fields...)))
	if archiveOf(t, e.a, on) != 0 {
		t.Fatal("archive=0 on update not stored")
	}
	utrOfReply(t, e.a.send("POST", "/api/single/send/update", jsonBody(t, s.body("utr", off, "archive", "1"))))
	utrOfReply(t, e.a.send("POST", "/api/single/send/update", jsonBody(t, s.body("utr", off))))
	if archiveOf(t, e.a, off) != 1 {
		t.Fatal("archive not kept when not given on update")
	}
	// The list carries it too.
	for _, r := range list[archiveRecord](t, e.a.send("GET", "/api/single-send/list", nil), "singleSends") {
		if r.Archive == nil {
			t.Fatalf("list record without archive: %+v", r)
		}
	}
	expectVAL(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body("archive", "maybe"))), map[string][]string{
		"archive": {"The archive field must be true or false."},
	})
}

func TestArchiveURL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	url := func(c *client) string {
		t.Helper()
		r := c.send("GET", "/api/archive", nil)
		var m struct {
			URL string `json:"url"`
		}
		if r.Code != http.StatusOK || r.Status != "success" || json.Unmarshal(r.Message, &m) != nil {
			t.Fatalf("api/archive: %d %s", r.Code, r.raw)
		}
		var keys map[string]json.RawMessage
		if json.Unmarshal(r.Message, &keys) != nil || len(keys) != 1 {
			t.Fatalf("api/archive message: %s", r.raw)
		}
		return m.URL
	}
	a, b := url(e.a), url(e.b)
	shape := regexp.MustCompile(`^http://localhost:8080/archive/[a-z2-7]{26}$`)
	if !shape.MatchString(a) || !shape.MatchString(b) || a == b {
		t.Fatalf("archive urls %q and %q", a, b)
	}
	if again := url(e.a); again != a {
		t.Fatalf("the url changed: %q then %q", a, again)
	}
	if strings.HasSuffix(a, "/"+itoa(e.a.id)) {
		t.Fatalf("the url names the account's id: %q", a)
	}
}
