package delivery

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/mail"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-msgauth/dkim"

	"herald/templates"
)

// dkimverifyScript runs python3-dkim's dkimverify (its main, as
// /usr/bin/dkimverify does) with the DNS answered from the records given
// as JSON in argv[1] instead of the resolver; argv[2] is the --index of
// the signature to check.
const dkimverifyScript = `
import json, sys
import dkim, dkim.dkimverify
records = json.loads(sys.argv[1])
def txt(name, timeout=5):
    name = name.decode() if isinstance(name, bytes) else name
    v = records.get(name.rstrip('.'))
    return v.encode() if v is not None else None
dkim.DKIM.verify.__defaults__ = (0, txt)
sys.argv = ['dkimverify', '--index', sys.argv[2]]
dkim.dkimverify.main()
`

// dkimverify checks signature idx of msg with python3-dkim's dkimverify.
func dkimverify(t *testing.T, msg []byte, idx int, ks ...*DKIMKey) error {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import dkim").Run(); err != nil {
		skipOrFail(t, "python3-dkim is not installed (apt-get install python3-dkim): the signatures cannot be checked by dkimverify")
	}
	records := map[string]string{}
	for _, k := range ks {
		name, value := k.DNSRecord()
		records[name] = value
	}
	js, _ := json.Marshal(records)
	cmd := exec.Command("/usr/bin/python3", "-c", dkimverifyScript, string(js), fmt.Sprint(idx))
	cmd.Stdin = bytes.NewReader(msg)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("dkimverify: %v: %s", err, out)
	}
	if string(out) != "signature ok\n" {
		return fmt.Errorf("dkimverify: %s", out)
	}
	return nil
}

// verifyBoth checks every signature of msg with go-msgauth's verifier and
// with dkimverify, and that there are want of them.
func verifyBoth(t *testing.T, msg []byte, want int, ks ...*DKIMKey) {
	t.Helper()
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(msg), &dkim.VerifyOptions{LookupTXT: lookupFor(ks...)})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != want {
		t.Fatalf("%d signatures, want %d", len(vs), want)
	}
	for i, v := range vs {
		if v.Err != nil {
			t.Errorf("go-msgauth: signature %d (%s): %v", i, v.Domain, v.Err)
		}
		if err := dkimverify(t, msg, i, ks...); err != nil {
			t.Errorf("signature %d: %v", i, err)
		}
	}
}

// keyWith is the package's test key of algo with other canonicalizations.
func keyWith(t testing.TB, algo, header, body string) *DKIMKey {
	k := *testKey(t, algo)
	k.HeaderCanonicalization, k.BodyCanonicalization = header, body
	return &k
}

var canons = [][2]string{{DKIMRelaxed, DKIMRelaxed}, {DKIMSimple, DKIMSimple}, {DKIMRelaxed, DKIMSimple}, {DKIMSimple, DKIMRelaxed}}

// TestDKIMLibraryDesigns signs every library design as herald builds it,
// both ways (BuildSigned, and SignMessage over what it built), relaxed and
// simple, and has both verifiers check it.
func TestDKIMLibraryDesigns(t *testing.T) {
	t.Parallel()
	designs, err := templates.Library()
	if err != nil {
		t.Fatal(err)
	}
	values := templates.SampleValues()
	for _, d := range designs {
		for _, c := range canons[:2] { // the mixed ones: TestDKIMEdgeCases
			t.Run(fmt.Sprintf("%d/%s-%s", d.ID, c[0], c[1]), func(t *testing.T) {
				t.Parallel() // each one waits on python3 verifiers: overlap them
				k := keyWith(t, DKIMRSA, c[0], c[1])
				m := sampleMessage()
				m.HTML = Compile(d.HTML).Render(HTMLEscaped(func(n string) string { return values[n] }))
				signed, err := BuildSigned(m, k)
				if err != nil {
					t.Fatal(err)
				}
				checkLines(t, signed)
				verifyBoth(t, signed, 1, k)

				// The message BuildSigned signed, through SignMessage: the
				// same body hash, and a signature that verifies too.
				fields, _, err := splitHeader(signed)
				if err != nil || fields[0].name != "DKIM-Signature" {
					t.Fatalf("first field %v: %v", fields, err)
				}
				raw := signed[len(fields[0].raw):]
				if bytes.Contains(raw, []byte("DKIM-Signature")) {
					t.Fatal("two signatures")
				}
				signed2, err := SignMessage(raw, k)
				if err != nil {
					t.Fatal(err)
				}
				verifyBoth(t, signed2, 1, k)
				if bh(t, signed) != bh(t, signed2) {
					t.Errorf("body hashes differ: %s and %s", bh(t, signed), bh(t, signed2))
				}
			})
		}
	}
}

// bh is the bh= tag of the first DKIM-Signature of msg.
func bh(t *testing.T, msg []byte) string {
	t.Helper()
	_, rest, ok := bytes.Cut(msg, []byte(" bh="))
	if !ok {
		t.Fatal("no bh=")
	}
	v, _, _ := bytes.Cut(rest, []byte(";"))
	return string(v)
}

// TestDKIMEdgeCases signs messages that are not Build's: long folded
// headers, non-ASCII (UTF-8) header values, an empty body, bodies with
// trailing empty lines, white space at the ends of lines, bare LFs, a
// header with LF line ends, repeated signed fields; every canonicalization,
// RSA and Ed25519 together, both verifiers.
func TestDKIMEdgeCases(t *testing.T) {
	t.Parallel()
	long := "Subject: " + strings.Repeat("a very long subject that folds ", 12)
	folded := strings.ReplaceAll(strings.TrimSpace(long), "folds a", "folds\r\n\t a")
	head := "From: =?utf-8?q?Caf=C3=A9?= <news@shop.example.com>\r\nTo: ana@example.net\r\nDate: Mon, 02 Jan 2006 15:04:05 +0000\r\nMessage-ID: <1@shop.example.com>\r\n"
	cases := []struct{ name, msg string }{
		{"empty body", head + "Subject: nothing\r\n\r\n"},
		{"empty lines only", head + "Subject: blank\r\n\r\n\r\n\r\n\r\n"},
		{"no final CRLF", head + "Subject: x\r\n\r\nlast line without CRLF"},
		{"trailing empty lines", head + "Subject: x\r\n\r\nline\r\n\r\n\r\n"},
		{"white space", head + "Subject:   spaced \t out  \r\n\r\n  leading\r\ntrailing  \t\r\nin  the \t middle\r\n \t \r\nend\r\n"},
		{"long folded header", head + folded + "\r\n\r\nbody\r\n"},
		{"unfolded long header", head + long + "\r\n\r\nbody\r\n"},
		{"non-ASCII header value", head + "Subject: Crème brûlée für Zoë ☀️\r\nX-Note: naïve\r\n\r\nbody é\r\n"},
		{"bare LF in body", head + "Subject: x\r\n\r\nline one\nline two\r\nline three\n\n"},
		{"LF header", strings.ReplaceAll(head, "\r\n", "\n") + "Subject: lf\n\nbody\nmore\n"},
		{"repeated fields", head + "Subject: first\r\nSubject: second\r\nReply-To: a@example.org\r\nreply-to: b@example.org\r\n\r\nbody\r\n"},
		{"odd names", head + "SUBJECT:  upper  \r\nlist-unsubscribe:<https://x.example/u>\r\n\r\nbody\r\n"},
		{"lone CR", head + "Subject: x\r\n\r\nbefore\rafter\r\n"},
	}
	for _, tc := range cases {
		for _, c := range canons {
			t.Run(tc.name+"/"+c[0]+"-"+c[1], func(t *testing.T) {
				t.Parallel() // each one waits on python3 verifiers: overlap them
				rsaKey := keyWith(t, DKIMRSA, c[0], c[1])
				edKey := keyWith(t, DKIMEd25519, c[0], c[1])
				signed, err := SignMessage([]byte(tc.msg), edKey, rsaKey)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasSuffix(signed, []byte(tc.msg)) {
					t.Fatal("message changed")
				}
				// go-msgauth's signer is the reference for the body hash.
				ref := msgauthSign(t, []byte(tc.msg), rsaKey)
				if bh(t, signed) != bh(t, ref) {
					t.Errorf("bh= %s, go-msgauth's %s", bh(t, signed), bh(t, ref))
				}
				verifyBoth(t, signed, 2, rsaKey, edKey)
			})
		}
	}
}

// msgauthSign signs msg with go-msgauth's signer, as herald did before.
func msgauthSign(t testing.TB, msg []byte, k *DKIMKey) []byte {
	t.Helper()
	hc, bc := k.canon()
	var out bytes.Buffer
	err := dkim.Sign(&out, bytes.NewReader(msg), &dkim.SignOptions{
		Domain: k.Domain, Selector: k.Selector, Signer: k.signer,
		HeaderCanonicalization: dkim.Canonicalization(hc), BodyCanonicalization: dkim.Canonicalization(bc),
		HeaderKeys: SignedHeaders,
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestDKIMBodyHash checks the canonical bodies against RFC 6376's own
// example (section 3.4.5) and the empty body's hashes.
func TestDKIMBodyHash(t *testing.T) {
	t.Parallel()
	sum := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return base64.StdEncoding.EncodeToString(h[:])
	}
	body := " C \r\nD \t E\r\n\r\n\r\n"
	for _, tc := range []struct{ canon, in, want string }{
		{DKIMRelaxed, body, " C\r\nD E\r\n"},
		{DKIMSimple, body, " C \r\nD \t E\r\n"},
		{DKIMRelaxed, "", ""},
		{DKIMSimple, "", "\r\n"},
		{DKIMRelaxed, "\r\n\r\n", ""},
		{DKIMSimple, "\r\n\r\n", "\r\n"},
		{DKIMSimple, "x", "x\r\n"},
		{DKIMRelaxed, "a\nb", "a\r\nb\r\n"},
	} {
		// Whole, and written a byte at a time: the state carries across writes.
		for _, split := range []bool{false, true} {
			h := newBodyHasher(tc.canon)
			if split {
				for i := range len(tc.in) {
					h.Write([]byte{tc.in[i]})
				}
			} else {
				h.Write([]byte(tc.in))
			}
			if got := base64.StdEncoding.EncodeToString(h.sum()); got != sum(tc.want) {
				t.Errorf("%s %q (split %v): hash of something else than %q", tc.canon, tc.in, split, tc.want)
			}
		}
	}
}

// TestBuildSignedSeveralKeys: Ed25519 and RSA on one message.
func TestBuildSignedSeveralKeys(t *testing.T) {
	t.Parallel()
	rsaKey, edKey := testKey(t, DKIMRSA), testKey(t, DKIMEd25519)
	m := sampleMessage()
	signed, err := BuildSigned(m, edKey, rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	checkLines(t, signed)
	verifyBoth(t, signed, 2, rsaKey, edKey)
	if !bytes.HasPrefix(signed, []byte("DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=shop.example.com; s=heraldrsa;")) {
		t.Errorf("first field %.100q", signed)
	}
	if !bytes.Contains(signed, []byte("\r\nDKIM-Signature: v=1; a=ed25519-sha256;")) {
		t.Errorf("no Ed25519 signature after the RSA one")
	}
	if _, err := mail.ReadMessage(bytes.NewReader(signed)); err != nil {
		t.Fatal(err)
	}
	// No key: the message as Build writes it.
	plain, err := BuildSigned(sampleMessage())
	if err != nil || bytes.Contains(plain, []byte("DKIM-Signature")) {
		t.Fatalf("unsigned: %v", err)
	}
}

// TestRSAEngine: this build's RSA code (OpenSSL with -tags openssl) makes
// the very signature crypto/rsa makes (PKCS #1 v1.5 is deterministic), for
// a generated key and for one read back from PEM, also from many
// goroutines at once (the contexts of the OpenSSL pool); both keys carry
// crypto/rsa's precomputed values.
func TestRSAEngine(t *testing.T) {
	t.Parallel()
	k := testKey(t, DKIMRSA)
	pemText, err := k.PrivateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseDKIMKey(k.Domain, k.Selector, pemText)
	if err != nil {
		t.Fatal(err)
	}
	// crypto/rsa signs with the CRT values, computed once per key.
	for _, key := range []*DKIMKey{k, parsed} {
		if pre := key.signer.(*rsa.PrivateKey).Precomputed; pre.Dp == nil || pre.Qinv == nil {
			t.Fatal("RSA key without precomputed CRT values")
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				digest := sha256.Sum256([]byte(fmt.Sprint(g, i)))
				want, err := rsa.SignPKCS1v15(nil, k.signer.(*rsa.PrivateKey), crypto.SHA256, digest[:])
				if err != nil {
					t.Error(err)
					return
				}
				for _, key := range []*DKIMKey{k, parsed} {
					got, err := key.signRSA(digest[:])
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("%s: signature differs from crypto/rsa's (%v)", RSAEngine, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestDKIMBodyHashRandom compares the body hash with go-msgauth's signer's
// on random bodies of plain bytes, SP, HTAB, CR and LF, written whole and in
// random pieces, in both canonicalizations.
func TestDKIMBodyHashRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab  \t\r\n\r\n")
	for n := range 400 {
		body := make([]byte, r.IntN(60))
		for i := range body {
			body[i] = alphabet[r.IntN(len(alphabet))]
		}
		msg := append([]byte("From: a@example.com\r\n\r\n"), body...)
		for _, canon := range []string{DKIMRelaxed, DKIMSimple} {
			k := keyWith(t, DKIMEd25519, DKIMRelaxed, canon)
			want := bh(t, msgauthSign(t, msg, k))
			h := newBodyHasher(canon)
			for rest := body; len(rest) > 0; {
				cut := min(len(rest), 1+r.IntN(8))
				if n%2 == 0 {
					cut = len(rest)
				}
				h.Write(rest[:cut])
				rest = rest[cut:]
			}
			if got := base64.StdEncoding.EncodeToString(h.sum()); got != want {
				t.Fatalf("%s body %q: bh=%s, go-msgauth's %s", canon, body, got, want)
			}
		}
	}
}
