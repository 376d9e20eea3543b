package web

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gorilla/sessions"

	"herald/service"
)

// This file is the one bridge between gorilla/sessions, which speaks
// net/http, and Fiber: the request is converted with Fiber's adaptor, and
// a small ResponseWriter carries the Set-Cookie header back.

const (
	sessionName   = "herald_session"
	sessionMaxAge = 7 * 24 * 60 * 60 // seconds; renewed while in use

	// Keys of the session's values.
	keyAccount   = "account"
	keyCSRF      = "csrf"
	keyFlashKind = "flash_kind"
	keyFlashText = "flash_text"
	keyPublicKey = "new_public_key"
	keySecretKey = "new_secret_key"
	keyKeysNew   = "new_keys_signup"
	keyDay       = "day"

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
// when something changed.
type session struct {
	s     *sessions.Session
	r     *http.Request
	dirty bool
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
	// Renew the cookie once a day while it is used, so an active person
	// stays logged in and an idle one is logged out after sessionMaxAge.
	if day := time.Now().UTC().Format(time.DateOnly); ss.str(keyDay) != day && ss.accountID() != 0 {
		ss.set(keyDay, day)
	}
	return ss, nil
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
	id, _ := s.s.Values[keyAccount].(int64)
	return id
}

// login starts a fresh session for the account: nothing of the session
// before (flash, keys, token) survives, and the CSRF token is new.
func (s *session) login(accountID int64) {
	clear(s.s.Values)
	s.set(keyAccount, accountID)
	s.set(keyCSRF, newToken())
	s.set(keyDay, time.Now().UTC().Format(time.DateOnly))
}

// logout forgets the account and changes the CSRF token.
func (s *session) logout() {
	clear(s.s.Values)
	s.set(keyCSRF, newToken())
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
