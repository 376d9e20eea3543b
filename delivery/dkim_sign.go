package delivery

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"
)

// DKIM canonicalizations (RFC 6376 section 3.4). Herald signs relaxed/relaxed,
// which survives the header refolding and trailing-space trimming of relays.
const (
	DKIMRelaxed = "relaxed"
	DKIMSimple  = "simple"
)

// The signer below is herald's own (RFC 6376), written for the send path:
// the body is canonicalized and hashed in one pass as it is written (by
// Build's encoder, see BuildSigned) or over the message bytes (SignMessage),
// without go-msgauth's pipe and goroutine; the header is read once; the
// signature is made on the calling goroutine, so the engine's sending
// workers (EngineConfig.Conns of them) sign on all cores. Its output is
// checked by go-msgauth's verifier and by python3-dkim's dkimverify in the
// tests.

// bodyHasher canonicalizes a message body (relaxed or simple, RFC 6376
// section 3.4.3 and 3.4.4) while it is written and hashes it with SHA-256.
// Like go-msgauth, a bare LF counts as CRLF (a relay sends it as one).
type bodyHasher struct {
	relaxed bool
	h       hash.Hash
	out     []byte // canonical bytes not yet hashed
	cr      bool   // the last input byte was CR
	// relaxed: wsp says white space is pending (one SP if more text follows
	// on the line); breaks are the CR and LF bytes held until text follows,
	// so that empty lines at the end vanish; wrote says the body has text.
	wsp    bool
	breaks []byte
	wrote  bool
	// simple: pairs is the number of CRLFs held (dropped at the end of the
	// body), crHeld a CR after them not yet known to start a CRLF.
	pairs  int
	crHeld bool
}

func newBodyHasher(canon string) *bodyHasher {
	return &bodyHasher{relaxed: canon != DKIMSimple, h: sha256.New(), out: make([]byte, 0, 4096)}
}

// Write canonicalizes and hashes b; it never fails.
func (c *bodyHasher) Write(b []byte) (int, error) {
	n := len(b)
	plain := &simplePlain
	if c.relaxed {
		plain = &relaxedPlain
	}
	for len(b) > 0 {
		// A run of bytes that the canonicalization keeps as they are, when
		// nothing is held before it, goes in at once: plain bytes, and
		// between two of them a single SP (relaxed) or a CRLF.
		if !c.cr && !c.wsp && len(c.breaks) == 0 && c.pairs == 0 && !c.crHeld && plain[b[0]] {
			i := 1
		run:
			for i < len(b) {
				switch {
				case plain[b[i]]:
					i++
				case b[i] == ' ' && i+1 < len(b) && plain[b[i+1]]: // plain[' '] when simple
					i += 2
				case b[i] == '\r' && i+2 < len(b) && b[i+1] == '\n' && plain[b[i+2]]:
					i += 3
				default:
					break run
				}
			}
			c.flush(b[:i])
			c.wrote = true
			b = b[i:]
			continue
		}
		ch := b[0]
		b = b[1:]
		if ch == '\n' && !c.cr {
			c.put('\r') // a bare LF is a line break
		}
		c.cr = ch == '\r'
		c.put(ch)
	}
	return n, nil
}

// relaxedPlain and simplePlain are the bytes that the canonicalization
// passes through unchanged and that change no state: all but white space
// and line breaks (relaxed), all but CR and LF (simple).
var relaxedPlain, simplePlain = plainBytes(" \t\r\n"), plainBytes("\r\n")

func plainBytes(special string) (t [256]bool) {
	for i := range t {
		t[i] = !strings.ContainsRune(special, rune(i))
	}
	return t
}

func (c *bodyHasher) put(ch byte) {
	if len(c.out) >= cap(c.out)-8 {
		c.h.Write(c.out)
		c.out = c.out[:0]
	}
	if c.relaxed {
		switch ch {
		case ' ', '\t':
			c.wsp = true
		case '\r', '\n':
			c.wsp = false // white space at the end of a line goes
			c.breaks = append(c.breaks, ch)
		default:
			if len(c.breaks) > 0 {
				c.flush(c.breaks)
				c.breaks = c.breaks[:0]
			}
			if c.wsp {
				c.out = append(c.out, ' ')
				c.wsp = false
			}
			c.out = append(c.out, ch)
			c.wrote = true
		}
		return
	}
	switch {
	case ch == '\r':
		if c.crHeld { // the held CR did not start a CRLF
			c.flushPairs()
			c.out = append(c.out, '\r')
		}
		c.crHeld = true
	case ch == '\n' && c.crHeld:
		c.pairs++
		c.crHeld = false
	default:
		c.flushPairs()
		if c.crHeld {
			c.out = append(c.out, '\r')
			c.crHeld = false
		}
		c.out = append(c.out, ch)
	}
}

func (c *bodyHasher) flushPairs() {
	for ; c.pairs > 0; c.pairs-- {
		c.flush([]byte("\r\n"))
	}
}

// flush appends p to the pending output, hashing what is pending first when
// p does not fit.
func (c *bodyHasher) flush(p []byte) {
	if len(c.out)+len(p) > cap(c.out) {
		c.h.Write(c.out)
		c.out = c.out[:0]
	}
	if len(p) > cap(c.out) {
		c.h.Write(p)
		return
	}
	c.out = append(c.out, p...)
}

// sum ends the body and returns its hash: relaxed, one CRLF after the last
// text (nothing for an empty body); simple, exactly one CRLF at the end.
func (c *bodyHasher) sum() []byte {
	if c.relaxed {
		if c.wrote {
			c.out = append(c.out, '\r', '\n')
		}
	} else {
		if c.crHeld {
			c.flushPairs()
			c.out = append(c.out, '\r')
		}
		c.out = append(c.out, '\r', '\n')
	}
	c.h.Write(c.out)
	c.out = c.out[:0]
	return c.h.Sum(nil)
}

// headerField is one field of a message header: its name and its whole
// text, continuation lines included, each line ending in CRLF.
type headerField struct {
	name string
	raw  []byte
}

var errNoHeaderEnd = errors.New("delivery: DKIM: message has no empty line after its header")

// splitHeader reads the header fields of msg and returns them with the
// offset of the body (after the empty line). Lines may end in CRLF or LF;
// a header with bare LFs is read from a copy with CRLFs, which is what a
// relay sends.
func splitHeader(msg []byte) ([]headerField, int, error) {
	end := -1 // offset of the body
	for off := 0; off < len(msg); {
		nl := bytes.IndexByte(msg[off:], '\n')
		if nl < 0 {
			break
		}
		if nl == 0 || (nl == 1 && msg[off] == '\r') {
			end = off + nl + 1
			break
		}
		off += nl + 1
	}
	if end < 0 {
		return nil, 0, errNoHeaderEnd
	}
	head := msg[:end]
	if bytes.Count(head, []byte("\n")) != bytes.Count(head, []byte("\r\n")) {
		head = bytes.ReplaceAll(bytes.ReplaceAll(head, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
	}
	fields := make([]headerField, 0, 16)
	for off := 0; ; {
		nl := bytes.IndexByte(head[off:], '\n') // every line ends in CRLF now
		if nl == 1 {
			return fields, end, nil // the empty line
		}
		line := head[off : off+nl+1]
		if (line[0] == ' ' || line[0] == '\t') && len(fields) > 0 {
			f := &fields[len(fields)-1]
			f.raw = head[off-len(f.raw) : off+nl+1]
		} else {
			name, _, _ := bytes.Cut(line, []byte(":"))
			fields = append(fields, headerField{name: string(bytes.TrimSpace(name)), raw: line})
		}
		off += nl + 1
	}
}

// appendCanonHeader appends the field raw canonicalized (relaxed: lowercased name,
// white space runs and line folds as one SP, none at the ends of the value;
// simple: as is).
func appendCanonHeader(dst []byte, raw []byte, relaxed bool) []byte {
	if !relaxed {
		return append(dst, raw...)
	}
	name, value, ok := bytes.Cut(raw, []byte(":"))
	if !ok {
		name, value = raw, nil
	}
	for _, ch := range bytes.TrimSpace(name) {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		dst = append(dst, ch)
	}
	dst = append(dst, ':')
	wsp, started := false, false
	for _, ch := range value {
		switch ch {
		case ' ', '\t', '\r', '\n':
			wsp = started
		default:
			if wsp {
				dst = append(dst, ' ')
				wsp = false
			}
			dst = append(dst, ch)
			started = true
		}
	}
	return append(dst, '\r', '\n') // a line without a colon: "name:", as go-msgauth
}

// canon is the c= value of k: header/body.
func (k *DKIMKey) canon() (header, body string) {
	header, body = DKIMRelaxed, DKIMRelaxed
	if k.HeaderCanonicalization == DKIMSimple {
		header = DKIMSimple
	}
	if k.BodyCanonicalization == DKIMSimple {
		body = DKIMSimple
	}
	return header, body
}

// signatureHeader makes k's DKIM-Signature field (ending in CRLF) over the
// header fields (the message's own, the bottom instance of each signed name
// first) and the body hash bh.
func (k *DKIMKey) signatureHeader(fields []headerField, bh []byte, now time.Time) ([]byte, error) {
	hc, bc := k.canon()
	algo := "rsa-sha256"
	if k.Algorithm == DKIMEd25519 {
		algo = "ed25519-sha256"
	}
	sig := make([]byte, 0, 768)
	sig = append(sig, "DKIM-Signature: v=1; a="...)
	sig = append(sig, algo...)
	sig = append(sig, "; c="...)
	sig = append(sig, hc...)
	sig = append(sig, '/')
	sig = append(sig, bc...)
	sig = append(sig, "; d="...)
	sig = append(sig, k.Domain...)
	sig = append(sig, "; s="...)
	sig = append(sig, k.Selector...)
	sig = append(sig, ";\r\n t="...)
	sig = strconv.AppendInt(sig, now.Unix(), 10)
	sig = append(sig, "; h="...)
	for i, n := range SignedHeaders {
		if i > 0 {
			sig = append(sig, ':')
		}
		sig = append(sig, n...)
	}
	sig = append(sig, ";\r\n bh="...)
	sig = base64.StdEncoding.AppendEncode(sig, bh)
	sig = append(sig, ";\r\n b="...)

	// The header hash: the signed fields, then this field with b= empty and
	// without its CRLF (RFC 6376 section 3.7).
	relaxed := hc == DKIMRelaxed
	used := make([]bool, len(fields)) // fields taken, bottom up: one instance per h= name
	data := make([]byte, 0, 2048)
	for _, n := range SignedHeaders {
		for i := len(fields) - 1; i >= 0; i-- {
			if !used[i] && strings.EqualFold(fields[i].name, n) {
				used[i] = true
				data = appendCanonHeader(data, fields[i].raw, relaxed)
				break
			}
		}
	}
	data = appendCanonHeader(data, append(sig, '\r', '\n'), relaxed)
	data = data[:len(data)-2]
	digest := sha256.Sum256(data)

	var b []byte
	var err error
	if k.Algorithm == DKIMEd25519 {
		b, err = k.signer.Sign(rand.Reader, digest[:], crypto.Hash(0))
	} else {
		b, err = k.signRSA(digest[:])
	}
	if err != nil {
		return nil, fmt.Errorf("delivery: DKIM signing for %s: %w", k.Domain, err)
	}
	// b= folded into lines of at most 76 characters (FWS is allowed in it).
	enc := base64.StdEncoding.AppendEncode(nil, b)
	first := 76 - len(" b=")
	for len(enc) > 0 {
		n := min(len(enc), first)
		sig = append(sig, enc[:n]...)
		enc = enc[n:]
		if len(enc) > 0 {
			sig = append(sig, "\r\n "...)
		}
		first = 75
	}
	return append(sig, '\r', '\n'), nil
}

// bodyHashes hashes one body in every canonicalization the keys ask for.
type bodyHashes struct {
	relaxed, simple *bodyHasher
}

func newBodyHashes(keys []*DKIMKey) *bodyHashes {
	var b bodyHashes
	for _, k := range keys {
		switch _, bc := k.canon(); bc {
		case DKIMSimple:
			if b.simple == nil {
				b.simple = newBodyHasher(DKIMSimple)
			}
		default:
			if b.relaxed == nil {
				b.relaxed = newBodyHasher(DKIMRelaxed)
			}
		}
	}
	return &b
}

func (b *bodyHashes) Write(p []byte) (int, error) {
	if b.relaxed != nil {
		b.relaxed.Write(p)
	}
	if b.simple != nil {
		b.simple.Write(p)
	}
	return len(p), nil
}

// signatures returns the DKIM-Signature fields of keys for a message with
// header fields and the body hashed into b, the last key's first (as if each
// key had signed the message the previous one returned).
func (b *bodyHashes) signatures(fields []headerField, keys []*DKIMKey) ([]byte, error) {
	var relaxedSum, simpleSum []byte
	if b.relaxed != nil {
		relaxedSum = b.relaxed.sum()
	}
	if b.simple != nil {
		simpleSum = b.simple.sum()
	}
	now := time.Now()
	var out []byte
	for i := len(keys) - 1; i >= 0; i-- {
		k := keys[i]
		bh := relaxedSum
		if _, bc := k.canon(); bc == DKIMSimple {
			bh = simpleSum
		}
		h, err := k.signatureHeader(fields, bh, now)
		if err != nil {
			return nil, err
		}
		out = append(out, h...)
	}
	return out, nil
}

// signatureRoom is an upper bound of the length of k's DKIM-Signature field.
func (k *DKIMKey) signatureRoom() int {
	n := 64 // ed25519
	if pub, ok := k.signer.Public().(*rsa.PublicKey); ok {
		n = pub.Size()
	}
	b64 := (n + 2) / 3 * 4
	h := 0
	for _, name := range SignedHeaders {
		h += len(name) + 1
	}
	return 160 + len(k.Domain) + len(k.Selector) + h + b64 + 3*(b64/70+1)
}
