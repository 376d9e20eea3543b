package delivery

import (
	"errors"
	"mime"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readListID splits a List-Id header into its decoded name and its id, as
// a mail client would read it.
func readListID(t *testing.T, v string) (name, id string) {
	t.Helper()
	i := strings.LastIndexByte(v, '<')
	if i < 0 || !strings.HasSuffix(v, ">") {
		t.Fatalf("List-Id %q has no <id>", v)
	}
	id = v[i+1 : len(v)-1]
	phrase := strings.TrimSpace(v[:i])
	if strings.HasPrefix(phrase, `"`) {
		u, err := strconv.Unquote(phrase) // the \" and \\ escapes are Go's too
		if err != nil {
			t.Fatalf("List-Id phrase %q: %v", phrase, err)
		}
		return u, id
	}
	name, err := new(mime.WordDecoder).DecodeHeader(phrase)
	if err != nil {
		t.Fatalf("List-Id phrase %q: %v", phrase, err)
	}
	return name, id
}

var phraseWordsRE = regexp.MustCompile(`^=\?utf-8\?q\?[A-Za-z0-9!*+\-/=_]{1,63}\?=( =\?utf-8\?q\?[A-Za-z0-9!*+\-/=_]{1,63}\?=)*$`)

// List-Id and Feedback-ID are written as given; a name beyond ASCII is
// RFC 2047-encoded; a name's line breaks never start another header.
func TestBuildListIDAndFeedbackID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, want string
	}{
		{"Customers", "Customers"},
		{`VIP "gold" \ club`, `VIP "gold" \ club`},
		{"Clientes de Zoë ☕", "Clientes de Zoë ☕"},
		{`Frères "VIP" (été)`, `Frères "VIP" (été)`},
		{"Evil\r\nBcc: all@example.com", "Evil Bcc: all@example.com"},
		{"Tab\tand\x00nul", "Tab andnul"},
		{strings.Repeat("Très long nom ", 12), strings.TrimSpace(strings.Repeat("Très long nom ", 12))},
		{"", ""},
	} {
		t.Run(tc.want, func(t *testing.T) {
			m := sampleMessage()
			m.ListID, m.ListName = "type1.a1.shop.example.com", tc.name
			m.FeedbackID = "s12:1:herald"
			raw, err := Build(m)
			if err != nil {
				t.Fatal(err)
			}
			p := parse(t, raw)
			if strings.Contains(string(raw), "\r\nBcc:") {
				t.Fatalf("a name started a header:\n%s", raw)
			}
			name, id := readListID(t, p.header.Get("List-Id"))
			if id != "type1.a1.shop.example.com" || name != tc.want {
				t.Errorf("List-Id %q reads as name %q id %q", p.header.Get("List-Id"), name, id)
			}
			// RFC 2047 section 5 (3): an encoded word in a phrase holds
			// only letters, digits, !*+-/=_ between its delimiters.
			if phrase := strings.TrimSpace(p.header.Get("List-Id")[:strings.LastIndexByte(p.header.Get("List-Id"), '<')]); strings.HasPrefix(phrase, "=?") &&
				!phraseWordsRE.MatchString(phrase) {
				t.Errorf("encoded phrase %q holds characters a phrase may not", phrase)
			}
			if got := p.header.Get("Feedback-ID"); got != "s12:1:herald" {
				t.Errorf("Feedback-ID %q", got)
			}
		})
	}
}

// Neither header is written when unset; a malformed id is refused, never
// written.
func TestBuildListIDRefused(t *testing.T) {
	t.Parallel()
	m := sampleMessage()
	raw, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	if h := parse(t, raw).header; h.Get("List-Id") != "" || h.Get("Feedback-ID") != "" {
		t.Errorf("unset headers written: %q %q", h.Get("List-Id"), h.Get("Feedback-ID"))
	}
	for _, bad := range []*Message{
		{ListID: "type1.a1.shop.example.com>\r\nBcc: x@y.z"},
		{ListID: "has space.example.com"},
		{ListID: ".dot.example.com"},
		{FeedbackID: "s1:1:herald\r\nBcc: x@y.z"},
		{FeedbackID: "s1 1"},
	} {
		m := sampleMessage()
		m.ListID, m.FeedbackID = bad.ListID, bad.FeedbackID
		if _, err := Build(m); !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("%q / %q: %v, want ErrInvalidMessage", bad.ListID, bad.FeedbackID, err)
		}
	}
	m = sampleMessage()
	m.Headers = append(m.Headers, Header{Name: "List-Id", Value: "<x.example.com>"})
	if _, err := Build(m); !errors.Is(err, ErrInvalidMessage) {
		t.Errorf("List-Id as an extra header: %v", err)
	}
}

// The EHLO name follows HERALD_BASE_URL's host; an IP becomes an address
// literal (RFC 5321 4.1.3).
func TestHeloName(t *testing.T) {
	t.Parallel()
	for base, want := range map[string]string{
		"https://herald.example.com":     "herald.example.com",
		"http://Mail.Example.COM:8080/x": "mail.example.com",
		"http://localhost:8080":          "localhost",
		"http://192.0.2.7:8080":          "[192.0.2.7]",
		"http://[2001:db8::1]:8080":      "[IPv6:2001:db8::1]",
		"http://[::ffff:192.0.2.9]":      "[192.0.2.9]",
		"http://under_score.example.com": "",
		"::not a url":                    "",
	} {
		if got := HeloName(base); got != want {
			t.Errorf("HeloName(%q) = %q, want %q", base, got, want)
		}
	}
	for name, ok := range map[string]bool{
		"mta1.example.com": true, "[192.0.2.1]": true, "[IPv6:2001:db8::1]": true, "localhost": true,
		"": false, "a b": false, "x\r\nMAIL FROM:<a@b>": false, "[2001:db8::1]": false, "-a.example.com": false, "a..b": false,
	} {
		if ValidHeloName(name) != ok {
			t.Errorf("ValidHeloName(%q) = %v", name, !ok)
		}
	}
	if _, err := ParseSMTPURL("smtp://relay.example.com?helo=a%0d%0aRSET"); err == nil {
		t.Error("a helo= with a line break was accepted")
	}
}
