package delivery

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/mail"
	"strings"
)

// VERP makes and reads the addresses and Message-IDs that name one ledger
// row of a sent message (decisions.md 7): the return path
// `<local>+b<token>@<domain>` a DSN comes back to, the List-Unsubscribe
// mailto: address `<local>+u<token>@<domain>`, and the Message-ID
// `<b<token>@<sender's domain>>` that feedback reports and providers quote.
// A token is the row's id and a 80-bit HMAC-SHA256 under the key, base32
// in lower case (mail software may lower-case a local part): 20 to 30
// characters. Build it with NewVERP.
type VERP struct {
	local, domain string
	key           []byte
}

// Purposes of a token: the first letter after the "+" (and of a
// Message-ID). Each is a MAC of its own, so one cannot stand for another.
const (
	verpBounce      = 'b'
	verpUnsubscribe = 'u'
)

// verpMAC is how many bytes of HMAC-SHA256 a token carries.
const verpMAC = 10

var verpEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewVERP reads the bounce address (HERALD_BOUNCE_ADDRESS, local@domain)
// and keeps key for the tokens. Errors: an address that is not plain
// local@domain, or whose local part already holds a "+".
func NewVERP(bounceAddress string, key []byte) (*VERP, error) {
	a, err := mail.ParseAddress(strings.TrimSpace(bounceAddress))
	if err != nil || a.Name != "" {
		return nil, fmt.Errorf("delivery: bounce address %q is not an address", bounceAddress)
	}
	at := strings.LastIndexByte(a.Address, '@')
	local, domain := strings.ToLower(a.Address[:at]), strings.ToLower(a.Address[at+1:])
	if local == "" || domain == "" || strings.ContainsAny(local, "+\"") || !strings.Contains(domain, ".") && domain != "localhost" {
		return nil, fmt.Errorf("delivery: bounce address %q must be plain local@domain, without \"+\"", bounceAddress)
	}
	return &VERP{local: local, domain: domain, key: key}, nil
}

// Address is the plain bounce address: the envelope sender of herald's own
// mail.
func (v *VERP) Address() string { return v.local + "@" + v.domain }

// Domain is the bounce domain, the one the inbound server answers for.
func (v *VERP) Domain() string { return v.domain }

// ReturnPath is the envelope sender of ledger row id's message.
func (v *VERP) ReturnPath(id int64) string {
	return v.local + "+" + string(verpBounce) + v.token(verpBounce, id) + "@" + v.domain
}

// Unsubscribe is the List-Unsubscribe mailto: address of row id's message.
func (v *VERP) Unsubscribe(id int64) string {
	return v.local + "+" + string(verpUnsubscribe) + v.token(verpUnsubscribe, id) + "@" + v.domain
}

// MessageID is the Message-ID of row id's message, with its brackets, on
// the sender's domain.
func (v *VERP) MessageID(id int64, domain string) string {
	return "<" + string(verpBounce) + v.token(verpBounce, id) + "@" + domain + ">"
}

// Token is ledger row id's bounce token: what its return path carries
// after "+b" and its Message-ID after "b". A provider that keeps metadata
// of a message (Postmark's X-PM-Metadata-*) carries it back in its
// webhooks; BounceToken reads it.
func (v *VERP) Token(id int64) string { return v.token(verpBounce, id) }

// MetadataKey is the key a message's bounce token goes under in a
// provider's metadata: Postmark turns the header X-PM-Metadata-herald
// into its webhooks' Metadata {"herald": token}.
const MetadataKey = "herald"

func (v *VERP) token(purpose byte, id int64) string {
	var buf [binary.MaxVarintLen64 + verpMAC]byte
	n := binary.PutUvarint(buf[:], uint64(id))
	copy(buf[n:], v.mac(purpose, buf[:n]))
	return verpEncoding.EncodeToString(buf[:n+verpMAC])
}

func (v *VERP) mac(purpose byte, payload []byte) []byte {
	m := hmac.New(sha256.New, v.key)
	m.Write([]byte{'v', 'e', 'r', 'p', purpose})
	m.Write(payload)
	return m.Sum(nil)[:verpMAC]
}

// readToken returns the row id of a token made for purpose, and whether it
// verifies.
func (v *VERP) readToken(purpose byte, tok string) (int64, bool) {
	buf, err := verpEncoding.DecodeString(strings.ToLower(tok))
	if err != nil || len(buf) <= verpMAC {
		return 0, false
	}
	payload := buf[:len(buf)-verpMAC]
	id, n := binary.Uvarint(payload)
	if n != len(payload) || id == 0 || id > 1<<63-1 {
		return 0, false
	}
	if !hmac.Equal(v.mac(purpose, payload), buf[len(buf)-verpMAC:]) {
		return 0, false
	}
	return int64(id), true
}

// Recipient is what an address at the bounce domain names.
type Recipient struct {
	Bounce      bool   // the plain address or a return path (a report comes back to it)
	Unsubscribe bool   // a List-Unsubscribe mailto: address
	Token       string // the token it carries ("" for the plain address)
	ID          int64  // the row its token names; 0 when none or forged
}

// Parse reads an address: ok when it is the bounce address, a return path
// or an unsubscribe address of the bounce domain, whatever its token (a
// forged token is accepted, and names no row: ID 0).
func (v *VERP) Parse(addr string) (Recipient, bool) {
	addr = strings.ToLower(strings.Trim(strings.TrimSpace(addr), "<>"))
	at := strings.LastIndexByte(addr, '@')
	if at < 0 || addr[at+1:] != v.domain {
		return Recipient{}, false
	}
	local := addr[:at]
	if local == v.local {
		return Recipient{Bounce: true}, true
	}
	rest, ok := strings.CutPrefix(local, v.local+"+")
	if !ok || rest == "" {
		return Recipient{}, false
	}
	r := Recipient{Token: rest[1:]}
	switch rest[0] {
	case verpBounce:
		r.Bounce = true
		r.ID, _ = v.readToken(verpBounce, r.Token)
	case verpUnsubscribe:
		r.Unsubscribe = true
		r.ID, _ = v.readToken(verpUnsubscribe, r.Token)
	default:
		return Recipient{}, false
	}
	return r, true
}

// BounceToken returns the row a return path's token names (the part after
// "+b", also the Message-ID's after its "b"), when it verifies.
func (v *VERP) BounceToken(tok string) (int64, bool) { return v.readToken(verpBounce, tok) }

// UnsubscribeToken returns the row an unsubscribe address's token names
// (the part after "+u"), when it verifies.
func (v *VERP) UnsubscribeToken(tok string) (int64, bool) { return v.readToken(verpUnsubscribe, tok) }

// ParseMessageID returns the row a Message-ID made by MessageID names,
// and its token: with or without brackets, on any domain.
func (v *VERP) ParseMessageID(mid string) (id int64, token string, ok bool) {
	mid = strings.Trim(strings.TrimSpace(mid), "<>")
	at := strings.LastIndexByte(mid, '@')
	if at < 2 || mid[0] != verpBounce && mid[0] != 'B' {
		return 0, "", false
	}
	token = mid[1:at]
	id, ok = v.readToken(verpBounce, token)
	return id, token, ok
}
