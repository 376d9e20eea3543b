package delivery

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseRelays(t *testing.T) {
	t.Parallel()
	got, err := ParseRelays("smtp://u:p@a.example.net:587?name=ses&weight=3&rate=14/s,50000/d&max_conns=4  \n smtp://b.example.net?tls=none&from_domains=Shop.example|news.example&helo=herald.example " +
		"smtp://c.example.net:2525?tls=none")
	if err != nil {
		t.Fatal(err)
	}
	want := []RelayConfig{
		{Name: "ses", SMTP: SMTPConfig{Host: "a.example.net", Port: 587, Username: "u", Password: "p", TLS: TLSStartTLS}, Weight: 3, MaxConns: 4,
			Limits: []RateLimit{{14, time.Second}, {50000, 24 * time.Hour}}},
		{Name: "b.example.net:25", SMTP: SMTPConfig{Host: "b.example.net", Port: 25, TLS: TLSNone, LocalName: "herald.example"}, Weight: 1,
			FromDomains: []string{"shop.example", "news.example"}},
		{Name: "c.example.net:2525", SMTP: SMTPConfig{Host: "c.example.net", Port: 2525, TLS: TLSNone}, Weight: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if got[0].plain() || got[1].plain() || !got[2].plain() {
		t.Fatal("only the third relay is plain")
	}
	if got[0].Limits[0].String() != "14/s" || got[0].Limits[1].String() != "50000/d" {
		t.Fatalf("limits print as %v", got[0].Limits)
	}
}

// One URL, as HERALD_SMTP_URL always was, is one plain relay, and its
// errors read as they always did.
func TestParseRelaysOneURL(t *testing.T) {
	t.Parallel()
	got, err := ParseRelays("smtp://user:pass@mail.example.com:587?tls=starttls")
	if err != nil || len(got) != 1 || !got[0].plain() {
		t.Fatalf("got %+v, %v", got, err)
	}
	one, _ := ParseSMTPURL("smtp://user:pass@mail.example.com:587?tls=starttls")
	if got[0].SMTP != one {
		t.Fatalf("SMTP %+v, want %+v", got[0].SMTP, one)
	}
	_, err = ParseRelays("smtp://mail.example.com?tls=maybe")
	_, err1 := ParseSMTPURL("smtp://mail.example.com?tls=maybe")
	if err == nil || err.Error() != err1.Error() {
		t.Fatalf("error %v, want %v", err, err1)
	}
	// ParseSMTPURL alone still refuses the relay parameters.
	if _, err := ParseSMTPURL("smtp://mail.example.com?weight=2"); err == nil {
		t.Fatal("ParseSMTPURL took weight=")
	}
}

func TestParseRelaysErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ raw, want string }{
		{"", "no relay"},
		{"smtp://a.example?name=a smtp://b.example?name=b&weight=0", `relay 2 (b): weight="0"`},
		{"smtp://a.example smtp://b.example?weight=x", `relay 2: weight="x"`},
		{"smtp://a.example?rate=14/x", `rate="14/x"`},
		{"smtp://a.example?rate=14/s,20/s", "two limits per s"},
		{"smtp://a.example?rate=0/s", `rate="0/s"`},
		{"smtp://a.example?max_conns=-1", `max_conns="-1"`},
		{"smtp://a.example?name=a smtp://b.example?name=x&from_domains=a..com", `relay 2 (x): from_domains="a..com"`},
		{"smtp://a.example?name=bad%20name", `name="bad name"`},
		{"smtp://a.example?name=a smtp://b.example?name=a", `relay 2 (a): name "a" is also relay 1's`},
		{"smtp://a.example smtp://a.example", `relay 2 (a.example:587): name "a.example:587" is also relay 1's`},
		{"smtp://a.example?from_domains=x.com", "at least one must be without"},
		{"smtp://a.example?name=a smtp://b.example?name=b&tls=maybe", `relay 2 (b): tls="maybe"`},
		{"smtp://a.example?name=a smtp://b.example?name=b&wieght=2", `relay 2 (b): unknown parameter "wieght"`},
	}
	for _, tt := range tests {
		_, err := ParseRelays(tt.raw)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseRelays(%q) = %v, want an error with %q", tt.raw, err, tt.want)
		}
	}
}

func TestOpenPicksTransport(t *testing.T) {
	t.Parallel()
	tr, err := Open("smtp://mail.example.com:2525?tls=none", OpenOptions{MaxConns: 3})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := tr.(*SMTPPool); !ok || cap(p.slots) != 3 {
		t.Fatalf("one plain URL: %T, want the SMTP pool of 3", tr)
	}
	tr, err = Open("smtp://mail.example.com:2525?tls=none&rate=5/s", OpenOptions{MaxConns: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rs, ok := tr.(*Relays); !ok || rs.Conns() != 3 {
		t.Fatalf("one URL with rate=: %T", tr)
	}
	tr, err = Open("smtp://a.example?max_conns=2 smtp://b.example", OpenOptions{MaxConns: 5})
	if err != nil {
		t.Fatal(err)
	}
	if rs, ok := tr.(*Relays); !ok || rs.Conns() != 7 {
		t.Fatalf("two URLs: %T", tr)
	}
}
