// Package auth holds the pages shown before login: log in and sign up.
package auth

import (
	"github.com/a-h/templ"

	"herald/views"
)

// LoginForm is the login page's input (never the password) and errors.
type LoginForm struct {
	Email  string
	Next   string // where to go after login
	Errors views.Errors
	Alert  string // a message of the whole form (rate limited)
	CSRF   string
	// SignupOpen shows the sign-up link (HERALD_SIGNUP is not off).
	SignupOpen bool
}

// CodeForm is the second step of a login: the authenticator's code.
type CodeForm struct {
	Errors views.Errors
	Alert  string
	CSRF   string
	// Recovery: the recovery code's form was sent (its errors show there,
	// and it is open).
	Recovery bool
}

// ForgotForm asks for a password reset link.
type ForgotForm struct {
	Email  string
	Errors views.Errors
	CSRF   string
}

// ResetForm sets a new password from a mailed link.
type ResetForm struct {
	Email  string
	Action string // the link's own path (POST)
	Errors views.Errors
	CSRF   string
}

// SignupForm is the sign-up page's input (never the password) and errors.
type SignupForm struct {
	Name   string
	Email  string
	Errors views.Errors
	CSRF   string
}

// ConfirmForm finishes a pending sign-up.
type ConfirmForm struct {
	Name   string
	Email  string
	Action string // the link's own path (POST)
	CSRF   string
}

func alerts(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// CodeField is the authenticator's code: focused, and showing the error,
// unless the recovery code's form was sent.
func (f CodeForm) CodeField() views.Field {
	v := views.Field{ID: "login-code", Name: "code", Label: "Code", Autocomplete: "one-time-code", Autofocus: !f.Recovery,
		Attrs: templ.Attributes{"inputmode": "numeric", "maxlength": "7"}}
	if !f.Recovery {
		v.Errors = f.Errors.For("code")
	}
	return v
}

// RecoveryField is a recovery code: letters and digits, so no numeric
// keyboard.
func (f CodeForm) RecoveryField() views.Field {
	v := views.Field{ID: "login-recovery", Name: "code", Label: "Recovery code", Autocomplete: "off", Autofocus: f.Recovery,
		Help:  "One of the ten codes you saved when you turned two-factor login on, such as abcde-12345. Each works once.",
		Attrs: templ.Attributes{"autocapitalize": "none", "spellcheck": "false", "maxlength": "20"}}
	if f.Recovery {
		v.Errors = f.Errors.For("code")
	}
	return v
}
