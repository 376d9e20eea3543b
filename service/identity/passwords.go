package identity

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"herald/service/core"
	"strings"
	"sync"
	"unicode/utf8"
)

// minPassword is the shortest password accepted (decisions.md 8's
// hardening: 8 characters let "12345678" through).
const minPassword = 10

// maxPasswordBytes is bcrypt's limit: it reads 72 bytes at most, and
// golang.org/x/crypto/bcrypt refuses a longer password.
const maxPasswordBytes = 72

// commonPasswordsGz is Django's list of 20,000 common passwords
// (lowercased, deduplicated; created by Royce Williams), shipped unchanged
// as django/contrib/auth/common-passwords.txt.gz of Debian's python3-django
// 3:3.2.25-0+deb12u7; BSD-3-Clause, see NOTICE.
//
//go:embed common-passwords.txt.gz
var commonPasswordsGz []byte

var commonPasswords = sync.OnceValue(func() map[string]struct{} {
	zr, err := gzip.NewReader(bytes.NewReader(commonPasswordsGz))
	if err != nil {
		panic("service: embedded common password list: " + err.Error())
	}
	set := map[string]struct{}{}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		// Only entries a password of the allowed length could equal are
		// kept: about 1,800 of the 20,000.
		if p := strings.TrimSpace(sc.Text()); utf8.RuneCountInString(p) >= minPassword {
			set[p] = struct{}{}
		}
	}
	if err := sc.Err(); err != nil {
		panic("service: embedded common password list: " + err.Error())
	}
	return set
})

// IsCommonPassword reports whether pw (compared case-insensitively) is on
// the embedded list of common passwords.
func IsCommonPassword(pw string) bool {
	_, ok := commonPasswords()[strings.ToLower(strings.TrimSpace(pw))]
	return ok
}

// msgCommonPassword refuses a password on the common list.
func msgCommonPassword(field string) string {
	return "The " + core.Label(field) + " is too common. Choose one that is harder to guess."
}

// checkNewPassword records in p what is wrong with a password a person chooses: it
// is required, at least minPassword characters, at most maxPasswordBytes
// bytes, and not on the common list.
func checkNewPassword(p core.Problems, field, pw string) {
	if !p.Required(field, pw) {
		return
	}
	switch {
	case utf8.RuneCountInString(strings.TrimSpace(pw)) < minPassword:
		p.AddReason(field, core.ReasonMin, core.MsgMin(field, minPassword))
	case utf8.RuneCountInString(pw) > maxPasswordBytes:
		p.AddReason(field, core.ReasonMax, core.MsgMax(field, maxPasswordBytes))
	case len(pw) > maxPasswordBytes:
		p.AddReason(field, core.ReasonMax, "The "+core.Label(field)+" may not be greater than 72 bytes (letters outside plain ASCII take 2 to 4).")
	case IsCommonPassword(pw):
		p.Add(field, msgCommonPassword(field))
	}
}
