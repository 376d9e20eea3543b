package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"

	"github.com/gofiber/fiber/v2"
)

// errCSRF refuses a state-changing request without the session's token.
var errCSRF = fiber.NewError(fiber.StatusForbidden, "The form has expired or did not come from this site. Reload the page and try again.")

const (
	csrfHeader = "X-CSRF-Token"
	csrfField  = "_csrf"
	localCSRF  = "web.csrf"
)

// newToken is 32 random bytes, URL-safe base64.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// csrfToken returns the session's token, making one the first time, and
// keeps it in Locals for the pages (body hx-headers, hidden inputs).
func csrfToken(c *fiber.Ctx, s *session) string {
	t := s.str(keyCSRF)
	if t == "" {
		t = newToken()
		s.set(keyCSRF, t)
	}
	c.Locals(localCSRF, t)
	return t
}

// checkCSRF refuses (403) a POST, PUT, PATCH or DELETE whose token, from
// the X-CSRF-Token header (htmx) or the _csrf field (plain forms), is not
// the session's. The comparison takes the same time whatever the input.
func checkCSRF(c *fiber.Ctx, s *session) error {
	want := csrfToken(c, s)
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions, fiber.MethodTrace:
		return nil
	}
	got := c.Get(csrfHeader)
	if got == "" {
		got = c.FormValue(csrfField)
	}
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return errCSRF
	}
	return nil
}

// csrf is the token for the page being rendered.
func csrf(c *fiber.Ctx) string {
	t, _ := c.Locals(localCSRF).(string)
	return t
}
