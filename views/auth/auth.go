// Package auth holds the pages shown before login: log in and sign up.
package auth

import "herald/views"

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
