package service

// Names of engine kept under their old names for the packages that use them.

import "herald/service/engine"

type (
	Hit             = engine.Hit
	PreferenceGroup = engine.PreferenceGroup
	Preferences     = engine.Preferences
	Sending         = engine.Sending
	SendingConfig   = engine.SendingConfig
)

// SafeRedirect is engine.SafeRedirect.
func SafeRedirect(target string) (string, bool) {
	return engine.SafeRedirect(target)
}
