// Package account holds the account page and the one-time display of
// API keys.
package account

import "herald/models"

// Data is the account page.
type Data struct {
	User     *models.User
	CSRF     string
	TimeZone ZoneForm
}

// ZoneForm chooses the account's time zone.
type ZoneForm struct {
	Value  string
	Errors []string
	Saved  bool // just saved: the form says so
	CSRF   string
}

// TimeZoneURL is where the time zone is saved (POST).
const TimeZoneURL = "/account/time-zone"

// Keys are freshly issued API keys, shown once.
type Keys struct {
	PublicKey string
	SecretKey string
	New       bool // true after sign-up, false after a rotation
}
