package delivery

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// DKIM key algorithms accepted by GenerateDKIM.
const (
	DKIMRSA     = "rsa"     // RSA 2048, understood by every verifier
	DKIMEd25519 = "ed25519" // RFC 8463; not yet checked by every receiver, so pair it with RSA
)

// rsaBits is the key size receivers expect today; 1024 is considered weak and
// 4096 does not fit comfortably in DNS.
const rsaBits = 2048

// SignedHeaders are the header fields every DKIM signature covers. Fields that a
// message lacks are still listed, so that adding one later breaks the signature.
var SignedHeaders = []string{
	"From", "Reply-To", "To", "Subject", "Date", "Message-ID", "MIME-Version",
	"Content-Type", "List-Unsubscribe", "List-Unsubscribe-Post",
}

// DKIMKey is a signing key for one domain and selector.
type DKIMKey struct {
	Domain    string
	Selector  string
	Algorithm string // DKIMRSA or DKIMEd25519
	// HeaderCanonicalization and BodyCanonicalization are DKIMRelaxed (the
	// default, when empty) or DKIMSimple.
	HeaderCanonicalization, BodyCanonicalization string

	signer crypto.Signer
	fast   fastRSA // the RSA key in the faster library of an openssl build
}

// ErrInvalidDKIM is wrapped by the errors of GenerateDKIM and ParseDKIMKey for a
// bad domain, selector, algorithm or key.
var ErrInvalidDKIM = errors.New("delivery: invalid DKIM key")

// GenerateDKIM makes a new key pair for domain and selector with algo DKIMRSA
// (2048 bits) or DKIMEd25519. Errors wrap ErrInvalidDKIM.
func GenerateDKIM(domain, selector, algo string) (*DKIMKey, error) {
	domain, selector, err := checkNames(domain, selector)
	if err != nil {
		return nil, err
	}
	k := &DKIMKey{Domain: domain, Selector: selector, Algorithm: algo}
	switch algo {
	case DKIMRSA:
		key, err := rsa.GenerateKey(rand.Reader, rsaBits)
		if err != nil {
			return nil, err
		}
		k.signer, k.fast = key, newFastRSA(key)
	case DKIMEd25519:
		_, key, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		k.signer = key
	default:
		return nil, fmt.Errorf("%w: algorithm %q (want rsa or ed25519)", ErrInvalidDKIM, algo)
	}
	return k, nil
}

// ParseDKIMKey reads a private key exported by PrivateKeyPEM (PKCS #8), or an RSA
// key in PKCS #1 form as opendkim-genkey writes it. Errors wrap ErrInvalidDKIM.
func ParseDKIMKey(domain, selector, pemText string) (*DKIMKey, error) {
	domain, selector, err := checkNames(domain, selector)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrInvalidDKIM)
	}
	var key any
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("%w: PEM block %q", ErrInvalidDKIM, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidDKIM, err)
	}
	k := &DKIMKey{Domain: domain, Selector: selector}
	switch key := key.(type) {
	case *rsa.PrivateKey:
		if key.N.BitLen() < 1024 {
			return nil, fmt.Errorf("%w: RSA key of %d bits (verifiers want at least 1024)", ErrInvalidDKIM, key.N.BitLen())
		}
		k.Algorithm, k.signer, k.fast = DKIMRSA, key, newFastRSA(key)
	case ed25519.PrivateKey:
		k.Algorithm, k.signer = DKIMEd25519, key
	default:
		return nil, fmt.Errorf("%w: unsupported key type %T", ErrInvalidDKIM, key)
	}
	return k, nil
}

// PrivateKeyPEM exports the private key as PKCS #8 PEM text, to be stored in the
// database and read back with ParseDKIMKey.
func (k *DKIMKey) PrivateKeyPEM() (string, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.signer)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}

// DNSRecord returns the TXT record to publish: name "selector._domainkey.domain"
// and value "v=DKIM1; k=rsa; p=…". An RSA value is longer than 255 characters; DNS
// providers split it into several strings of one record, which verifiers join.
func (k *DKIMKey) DNSRecord() (name, value string) {
	var p []byte
	switch pub := k.signer.Public().(type) {
	case ed25519.PublicKey:
		p = pub // RFC 8463: the raw 32-byte key
	default:
		p, _ = x509.MarshalPKIXPublicKey(pub) // cannot fail for an RSA key
	}
	return k.Selector + "._domainkey." + k.Domain,
		"v=DKIM1; k=" + k.Algorithm + "; p=" + base64.StdEncoding.EncodeToString(p)
}

// Sign returns msg with a DKIM-Signature header prepended (relaxed/relaxed
// canonicalization unless the key says otherwise, SHA-256, SignedHeaders).
// msg is not changed.
func (k *DKIMKey) Sign(msg []byte) ([]byte, error) { return SignMessage(msg, k) }

// SignMessage signs msg with every key (for example Ed25519 and RSA for the
// same domain: a receiver checks the algorithms it knows), the last key's
// signature first. The body is canonicalized and hashed once per
// canonicalization, and the signatures are made on the calling goroutine.
// No key: msg as is. A message built here signs faster with BuildSigned,
// which hashes the body while writing it.
func SignMessage(msg []byte, keys ...*DKIMKey) ([]byte, error) {
	if len(keys) == 0 {
		return msg, nil
	}
	fields, body, err := splitHeader(msg)
	if err != nil {
		return nil, err
	}
	bh := newBodyHashes(keys)
	bh.Write(msg[body:])
	sigs, err := bh.signatures(fields, keys)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(sigs)+len(msg))
	return append(append(out, sigs...), msg...), nil
}

// SPFRecord returns the TXT record a sender domain publishes so that receivers
// accept herald's mail: the domain's own A and MX hosts, plus the relay's SPF
// include (for example "_spf.example-relay.com") when one is given; "~all"
// (soft fail) so that a forgotten host is marked rather than rejected.
func SPFRecord(domain, include string) (name, value string) {
	value = "v=spf1 a mx"
	if include = strings.TrimSpace(include); include != "" {
		value += " include:" + include
	}
	return strings.ToLower(strings.TrimSuffix(domain, ".")), value + " ~all"
}

// DMARCRecord returns the TXT record "_dmarc.domain" with policy none (monitor
// only: nothing is rejected while SPF and DKIM are being set up) and aggregate
// reports mailed to dmarc@domain.
func DMARCRecord(domain string) (name, value string) {
	domain = strings.ToLower(strings.TrimSuffix(domain, "."))
	return "_dmarc." + domain, "v=DMARC1; p=none; rua=mailto:dmarc@" + domain
}

// checkNames validates and lowercases a domain and a selector: DNS labels of
// letters, digits and hyphens, a domain with at least two labels.
func checkNames(domain, selector string) (string, string, error) {
	domain = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(domain), "."))
	selector = strings.ToLower(strings.TrimSpace(selector))
	if !validHostname(domain) || !strings.Contains(domain, ".") {
		return "", "", fmt.Errorf("%w: domain %q", ErrInvalidDKIM, domain)
	}
	if !validHostname(selector) {
		return "", "", fmt.Errorf("%w: selector %q", ErrInvalidDKIM, selector)
	}
	return domain, selector, nil
}

func validHostname(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c == '-' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z')) {
				return false
			}
		}
	}
	return true
}
