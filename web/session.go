package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gorilla/sessions"

	"herald/models"
	"herald/service"
)

// This file is the one bridge between gorilla/sessions, which speaks
// net/http, and Fiber: the request is converted with Fiber's adaptor, and
// a small ResponseWriter carries the Set-Cookie header back.

const (
	sessionName   = "herald_session"
	sessionMaxAge = int(service.SessionLifetime / time.Second) // the cookie lives no longer than a login

	// Keys of the session's values.
	keySession   = "sid" // the token naming the server-side session (service.Sessions)
	keyKnown     = "known"
	keyCSRF      = "csrf"
	keyFlashKind = "flash_kind"
	keyFlashText = "flash_text"
	keyPublicKey = "new_public_key"
	keySecretKey = "new_secret_key"
	keyKeysNew   = "new_keys_signup"
	// keyRecoveryCodes holds two-factor recovery codes just made, until
	// the account page shows them once.
	keyRecoveryCodes = "new_recovery_codes"

	// maxKnown bounds the addresses a browser remembers having logged in to.
	maxKnown = 5

	localSession = "web.session"
)

// newStore makes the cookie store from the two keys kept in the database,
// so that every process sharing it reads the others' cookies. The cookie
// is signed (HMAC-SHA256) and encrypted (AES-256).
func newStore(ctx context.Context, settings *service.Settings, secure bool) (*sessions.CookieStore, error) {
	var keys [][]byte
	for _, name := range []string{"session_hash_key", "session_block_key"} {
		v, err := settings.Secret(ctx, name, 32)
		if err != nil {
			return nil, fmt.Errorf("session key %s: %w", name, err)
		}
		k, err := hex.DecodeString(v)
		if err != nil || len(k) != 32 {
			return nil, fmt.Errorf("session key %s: not 32 bytes of hex", name)
		}
		keys = append(keys, k)
	}
	store := sessions.NewCookieStore(keys...)
	store.Options = &sessions.Options{
		Path:     "/",
		MaxAge:   sessionMaxAge,
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	}
	store.MaxAge(sessionMaxAge)
	return store, nil
}

// session is one request's session; it is saved once, after the handler,
// when something changed. The cookie (signed and encrypted) carries the
// flash, the CSRF token, keys shown once and the token of the server-side
// session; a person is logged in only while that session's row lives
// (service.Sessions.Check), so ending it takes effect at once everywhere.
type session struct {
	s     *sessions.Session
	r     *http.Request
	dirty bool
	live  *models.Session // the checked server-side session; nil when logged out
}

// loadSession reads the session cookie. A missing, expired or forged
// cookie gives a new, empty session.
func (w *Web) loadSession(c *fiber.Ctx) (*session, error) {
	r, err := adaptor.ConvertRequest(c, false)
	if err != nil {
		return nil, err
	}
	s, err := w.store.New(r, sessionName)
	if err != nil {
		s, _ = w.store.New(&http.Request{Header: http.Header{}}, sessionName)
	}
	ss := &session{s: s, r: r}
	return ss, w.checkLogin(c, ss)
}

// checkLogin looks the cookie's session token up: a live session logs the
// request in; an ended or expired one is forgotten (and the CSRF token
// changes). Anonymous visitors cost no database access.
func (w *Web) checkLogin(c *fiber.Ctx, s *session) error {
	token := s.str(keySession)
	if token == "" {
		return nil
	}
	live, err := w.svc.Sessions.Check(c.UserContext(), token)
	if service.IsNotFound(err) {
		s.logout()
		return nil
	}
	if err != nil {
		return err
	}
	s.live = live
	return nil
}

// save writes the session's cookie to the response when it changed.
func (s *session) save(c *fiber.Ctx) error {
	if !s.dirty {
		return nil
	}
	hw := headerWriter{h: http.Header{}}
	if err := s.s.Save(s.r, hw); err != nil {
		return err
	}
	for _, v := range hw.h.Values("Set-Cookie") {
		c.Response().Header.Add(fiber.HeaderSetCookie, v)
	}
	s.dirty = false
	return nil
}

// headerWriter is the http.ResponseWriter gorilla/sessions writes the
// cookie to; only its header is used.
type headerWriter struct{ h http.Header }

func (w headerWriter) Header() http.Header       { return w.h }
func (headerWriter) Write(b []byte) (int, error) { return len(b), nil }
func (headerWriter) WriteHeader(int)             {}

func (s *session) str(key string) string {
	v, _ := s.s.Values[key].(string)
	return v
}

func (s *session) set(key string, v any) {
	s.s.Values[key] = v
	s.dirty = true
}

func (s *session) del(keys ...string) {
	for _, k := range keys {
		if _, ok := s.s.Values[k]; ok {
			delete(s.s.Values, k)
			s.dirty = true
		}
	}
}

// accountID is the logged-in account, 0 when nobody is.
func (s *session) accountID() int64 {
	if s.live == nil {
		return 0
	}
	return s.live.UserID
}

// reset empties the session but for the addresses the browser logged in
// to, and gives it a new CSRF token.
func (s *session) reset() {
	known := s.s.Values[keyKnown]
	clear(s.s.Values)
	if known != nil {
		s.s.Values[keyKnown] = known
	}
	s.set(keyCSRF, newToken())
	s.live = nil
}

// login puts the token of a new server-side session in a fresh cookie
// session: nothing of the session before (flash, keys, token) survives,
// and the CSRF token is new.
func (s *session) login(token string) {
	s.reset()
	s.set(keySession, token)
}

// logout forgets the login and changes the CSRF token (the server-side
// session is ended by the caller).
func (s *session) logout() { s.reset() }

// knownID is how the cookie remembers an address: a short hash, not the
// address itself.
func knownID(email string) string {
	e, _ := service.NormalizeEmail(email)
	sum := sha256.Sum256([]byte(e))
	return hex.EncodeToString(sum[:8])
}

// knows reports whether this browser logged in to the address before.
func (s *session) knows(email string) bool {
	list, _ := s.s.Values[keyKnown].([]string)
	return slices.Contains(list, knownID(email))
}

// remember records a successful login to the address (the last maxKnown).
func (s *session) remember(email string) {
	id := knownID(email)
	list, _ := s.s.Values[keyKnown].([]string)
	list = slices.DeleteFunc(slices.Clone(list), func(v string) bool { return v == id })
	list = append(list, id)
	if len(list) > maxKnown {
		list = list[len(list)-maxKnown:]
	}
	s.set(keyKnown, list)
}

// sess returns the request's session, loaded by the console middleware.
func sess(c *fiber.Ctx) *session {
	s, _ := c.Locals(localSession).(*session)
	if s == nil {
		// Only reached by a route mounted outside the console middleware:
		// an empty session that is never saved.
		s = &session{s: sessions.NewSession(nil, sessionName), r: &http.Request{}}
		s.s.Values = map[any]any{}
	}
	return s
}

// flash keeps a message for the next full page shown.
func (w *Web) flash(c *fiber.Ctx, kind, message string) {
	s := sess(c)
	s.set(keyFlashKind, kind)
	s.set(keyFlashText, strings.Clone(message))
}
