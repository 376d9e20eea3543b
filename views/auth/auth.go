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
