//go:build !(openssl && cgo)

package delivery

import (
	"crypto"
	"crypto/rsa"
)

// fastRSA is empty in a build without the openssl tag: signatures are
// made by crypto/rsa (with the key's precomputed CRT values).
type fastRSA struct{}

func newFastRSA(*rsa.PrivateKey) fastRSA { return fastRSA{} }

// RSAEngine names the code that makes the RSA signatures of this build.
const RSAEngine = "crypto/rsa"

// signRSA signs a SHA-256 digest (PKCS #1 v1.5, as DKIM's rsa-sha256 says).
func (k *DKIMKey) signRSA(digest []byte) ([]byte, error) {
	key, ok := k.signer.(*rsa.PrivateKey)
	if !ok {
		return k.signer.Sign(nil, digest, crypto.SHA256)
	}
	return rsa.SignPKCS1v15(nil, key, crypto.SHA256, digest)
}
