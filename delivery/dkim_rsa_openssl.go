//go:build openssl && cgo

package delivery

/*
#cgo LDFLAGS: -lcrypto
#include <openssl/evp.h>
#include <openssl/rsa.h>

static EVP_PKEY *herald_rsa_key(const unsigned char *der, long len) {
	const unsigned char *p = der;
	return d2i_PrivateKey(EVP_PKEY_RSA, NULL, &p, len);
}

// herald_rsa_ctx is a context ready to sign SHA-256 digests with PKCS #1
// v1.5 padding; it signs any number of them, one at a time.
static EVP_PKEY_CTX *herald_rsa_ctx(EVP_PKEY *key) {
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
	if (ctx == NULL) return NULL;
	if (EVP_PKEY_sign_init(ctx) <= 0
		|| EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0
		|| EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) <= 0) {
		EVP_PKEY_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

static int herald_rsa_sign(EVP_PKEY_CTX *ctx, const unsigned char *digest, size_t dlen, unsigned char *sig, size_t *siglen) {
	return EVP_PKEY_sign(ctx, sig, siglen, digest, dlen) > 0;
}
*/
import "C"

import (
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"runtime"
	"unsafe"
)

// RSAEngine names the code that makes the RSA signatures of this build:
// OpenSSL's libcrypto (built with -tags openssl), which uses the CPU's
// wide multiply instructions (AVX-512 IFMA where there are) that
// crypto/rsa does not.
const RSAEngine = "openssl"

// fastRSA is the key in OpenSSL, nil when OpenSSL could not read it
// (crypto/rsa signs then).
type fastRSA struct{ k *opensslKey }

// opensslKey holds an EVP_PKEY and a pool of signing contexts (one per
// concurrent signer; a context is not safe for concurrent use), freed
// when the key is no longer reachable.
type opensslKey struct {
	pkey *C.EVP_PKEY
	ctxs chan *C.EVP_PKEY_CTX
}

type opensslHandles struct {
	pkey *C.EVP_PKEY
	ctxs chan *C.EVP_PKEY_CTX
}

func newFastRSA(key *rsa.PrivateKey) fastRSA {
	der := x509.MarshalPKCS1PrivateKey(key)
	pkey := C.herald_rsa_key((*C.uchar)(unsafe.Pointer(&der[0])), C.long(len(der)))
	clear(der)
	if pkey == nil {
		return fastRSA{}
	}
	o := &opensslKey{pkey: pkey, ctxs: make(chan *C.EVP_PKEY_CTX, 4*runtime.GOMAXPROCS(0))}
	runtime.AddCleanup(o, func(h opensslHandles) {
		for {
			select {
			case ctx := <-h.ctxs:
				C.EVP_PKEY_CTX_free(ctx)
			default:
				C.EVP_PKEY_free(h.pkey)
				return
			}
		}
	}, opensslHandles{pkey, o.ctxs})
	return fastRSA{o}
}

var errOpenSSL = errors.New("delivery: OpenSSL RSA signature failed")

// signRSA signs a SHA-256 digest (PKCS #1 v1.5, as DKIM's rsa-sha256 says).
func (k *DKIMKey) signRSA(digest []byte) ([]byte, error) {
	o := k.fast.k
	if o == nil {
		key, ok := k.signer.(*rsa.PrivateKey)
		if !ok {
			return k.signer.Sign(nil, digest, crypto.SHA256)
		}
		return rsa.SignPKCS1v15(nil, key, crypto.SHA256, digest)
	}
	var ctx *C.EVP_PKEY_CTX
	select {
	case ctx = <-o.ctxs:
	default:
		if ctx = C.herald_rsa_ctx(o.pkey); ctx == nil {
			return nil, errOpenSSL
		}
	}
	sig := make([]byte, k.signer.Public().(*rsa.PublicKey).Size())
	n := C.size_t(len(sig))
	ok := C.herald_rsa_sign(ctx, (*C.uchar)(unsafe.Pointer(&digest[0])), C.size_t(len(digest)),
		(*C.uchar)(unsafe.Pointer(&sig[0])), &n) == 1
	select {
	case o.ctxs <- ctx:
	default:
		C.EVP_PKEY_CTX_free(ctx)
	}
	runtime.KeepAlive(o)
	if !ok {
		return nil, errOpenSSL
	}
	return sig[:n], nil
}
