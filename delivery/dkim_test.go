package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-msgauth/dkim"
)

// Keys are slow to make (RSA): one per algorithm for the whole package.
var (
	keysOnce sync.Once
	keys     map[string]*DKIMKey
	keysErr  error
)

func testKey(t testing.TB, algo string) *DKIMKey {
	t.Helper()
	keysOnce.Do(func() {
		keys = map[string]*DKIMKey{}
		for _, a := range []string{DKIMRSA, DKIMEd25519} {
			k, err := GenerateDKIM("Shop.Example.com.", "herald"+a, a)
			if err != nil {
				keysErr = err
				return
			}
			keys[a] = k
		}
	})
	if keysErr != nil {
		t.Fatal(keysErr)
	}
	return keys[algo]
}

// lookupFor answers DKIM key queries from the published records, without DNS.
func lookupFor(ks ...*DKIMKey) func(string) ([]string, error) {
	return func(domain string) ([]string, error) {
		for _, k := range ks {
			if name, value := k.DNSRecord(); name == domain {
				return []string{value}, nil
			}
		}
		return nil, fmt.Errorf("no TXT record for %s", domain)
	}
}

func verify(t *testing.T, msg []byte, ks ...*DKIMKey) []*dkim.Verification {
	t.Helper()
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(msg), &dkim.VerifyOptions{LookupTXT: lookupFor(ks...)})
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestDKIMSignVerify(t *testing.T) {
	t.Parallel()
	for _, algo := range []string{DKIMRSA, DKIMEd25519} {
		t.Run(algo, func(t *testing.T) {
			k := testKey(t, algo)
			raw, err := Build(sampleMessage())
			if err != nil {
				t.Fatal(err)
			}
			signed, err := k.Sign(raw)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(signed, raw) || !bytes.HasPrefix(signed, []byte("DKIM-Signature: ")) {
				t.Fatalf("signature not prepended to the unchanged message")
			}
			checkLines(t, signed)

			vs := verify(t, signed, k)
			if len(vs) != 1 || vs[0].Err != nil {
				t.Fatalf("verifications %+v", vs[0])
			}
			if vs[0].Domain != "shop.example.com" {
				t.Errorf("d= %q", vs[0].Domain)
			}
			for _, h := range []string{"from", "to", "subject", "date", "message-id", "mime-version", "content-type", "reply-to", "list-unsubscribe", "list-unsubscribe-post"} {
				if !slices.ContainsFunc(vs[0].HeaderKeys, func(k string) bool { return strings.EqualFold(k, h) }) {
					t.Errorf("%s not signed (h=%v)", h, vs[0].HeaderKeys)
				}
			}

			// Altering any signed header, or the body, breaks the signature.
			for _, tamper := range []struct{ old, new string }{
				{"Subject: ", "Subject: Re: "},
				{"List-Unsubscribe: <https://herald.example.com/u/abc123", "List-Unsubscribe: <https://evil.example/u/abc123"},
				{"Reply-To: <help@", "Reply-To: <phish@"},
				{"spring offer", "spring 0ffer"},
			} {
				bad := bytes.Replace(signed, []byte(tamper.old), []byte(tamper.new), 1)
				if bytes.Equal(bad, signed) {
					t.Fatalf("%q not found", tamper.old)
				}
				if vs := verify(t, bad, k); vs[0].Err == nil {
					t.Errorf("altered %q still verifies", tamper.old)
				}
			}
			// Adding a signed header the message lacked breaks it too.
			added := append([]byte("Cc: extra@example.org\r\n"), signed...)
			if vs := verify(t, added, k); vs[0].Err != nil {
				t.Errorf("Cc is not signed, adding it must not break: %v", vs[0].Err)
			}
		})
	}
}

func TestDKIMPEMRoundTrip(t *testing.T) {
	t.Parallel()
	for _, algo := range []string{DKIMRSA, DKIMEd25519} {
		t.Run(algo, func(t *testing.T) {
			k := testKey(t, algo)
			text, err := k.PrivateKeyPEM()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(text, "-----BEGIN PRIVATE KEY-----\n") {
				t.Fatalf("PEM %q…", text[:40])
			}
			back, err := ParseDKIMKey(k.Domain, k.Selector, text)
			if err != nil {
				t.Fatal(err)
			}
			if back.Algorithm != algo {
				t.Fatalf("algorithm %q", back.Algorithm)
			}
			n1, v1 := k.DNSRecord()
			n2, v2 := back.DNSRecord()
			if n1 != n2 || v1 != v2 {
				t.Fatalf("records differ after the round trip")
			}
			raw, _ := Build(sampleMessage())
			signed, err := back.Sign(raw)
			if err != nil {
				t.Fatal(err)
			}
			// The stored key signs what the original key's record verifies.
			if vs := verify(t, signed, k); vs[0].Err != nil {
				t.Fatal(vs[0].Err)
			}
		})
	}
}

func TestDKIMDualSignature(t *testing.T) {
	t.Parallel()
	rsaKey, edKey := testKey(t, DKIMRSA), testKey(t, DKIMEd25519)
	raw, _ := Build(sampleMessage())
	signed, err := SignMessage(raw, edKey, rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	vs := verify(t, signed, rsaKey, edKey)
	if len(vs) != 2 {
		t.Fatalf("%d signatures", len(vs))
	}
	for _, v := range vs {
		if v.Err != nil {
			t.Errorf("signature of %s: %v", v.Domain, v.Err)
		}
	}
	if same, _ := SignMessage(raw); !bytes.Equal(same, raw) {
		t.Errorf("no key must leave the message as is")
	}
}

func TestDKIMRecords(t *testing.T) {
	t.Parallel()
	k := testKey(t, DKIMEd25519)
	name, value := k.DNSRecord()
	if name != "heralded25519._domainkey.shop.example.com" || !strings.HasPrefix(value, "v=DKIM1; k=ed25519; p=") {
		t.Errorf("ed25519 record %q %q", name, value)
	}
	name, value = testKey(t, DKIMRSA).DNSRecord()
	if name != "heraldrsa._domainkey.shop.example.com" || !strings.HasPrefix(value, "v=DKIM1; k=rsa; p=MIIBIjAN") {
		t.Errorf("rsa record %q %q", name, value)
	}

	if n, v := SPFRecord("Shop.Example.com", ""); n != "shop.example.com" || v != "v=spf1 a mx ~all" {
		t.Errorf("SPF %q %q", n, v)
	}
	if _, v := SPFRecord("shop.example.com", "_spf.relay.example"); v != "v=spf1 a mx include:_spf.relay.example ~all" {
		t.Errorf("SPF with include %q", v)
	}
	if n, v := DMARCRecord("Shop.Example.com"); n != "_dmarc.shop.example.com" || v != "v=DMARC1; p=none; rua=mailto:dmarc@shop.example.com" {
		t.Errorf("DMARC %q %q", n, v)
	}
}

func TestDKIMInvalid(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ domain, selector, algo string }{
		{"localhost", "s1", DKIMRSA},
		{"exa mple.com", "s1", DKIMRSA},
		{"example.com", "", DKIMRSA},
		{"example.com", "s_1", DKIMRSA},
		{"example.com", "s1", "dsa"},
		{"-bad.example.com", "s1", DKIMEd25519},
	} {
		if _, err := GenerateDKIM(tt.domain, tt.selector, tt.algo); !errors.Is(err, ErrInvalidDKIM) {
			t.Errorf("GenerateDKIM(%q, %q, %q) = %v", tt.domain, tt.selector, tt.algo, err)
		}
	}
	for _, text := range []string{"", "not pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"} {
		if _, err := ParseDKIMKey("example.com", "s1", text); !errors.Is(err, ErrInvalidDKIM) {
			t.Errorf("ParseDKIMKey(%q) = %v", text, err)
		}
	}
}

// TestBuildSignSend is the whole path: build, sign, relay over STARTTLS with
// AUTH, and verify what the server received.
func TestBuildSignSend(t *testing.T) {
	t.Parallel()
	k := testKey(t, DKIMRSA)
	s := startServer(t, serverOpts{tls: TLSStartTLS, user: "relay", pass: "secret"})
	p := NewSMTPPool(s.config(TLSStartTLS), 2)
	defer p.Close()

	m := sampleMessage()
	raw, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := k.Sign(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Send(context.Background(), "bounces@shop.example.com", []string{m.To.Address}, signed); err != nil {
		t.Fatal(err)
	}
	got := s.messages()
	if len(got) != 1 {
		t.Fatalf("%d messages", len(got))
	}
	if vs := verify(t, got[0].Data, k); vs[0].Err != nil {
		t.Fatalf("received message does not verify: %v", vs[0].Err)
	}
	parse(t, got[0].Data)
}
