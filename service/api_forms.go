package service

// Names of the sign-up forms (service/audience/forms*.go) for the edges.

import "herald/service/audience"

type (
	FormInput     = audience.FormInput
	FormLimits    = audience.FormLimits
	SignupInput   = audience.SignupInput
	SignupResult  = audience.SignupResult
	ConfirmResult = audience.ConfirmResult
	ConfirmState  = audience.ConfirmState
)

const (
	ConfirmAsk      = audience.ConfirmAsk
	Confirmed       = audience.Confirmed
	ConfirmExpired  = audience.ConfirmExpired
	MsgCheckInbox   = audience.MsgCheckInbox
	MsgSubscribed   = audience.MsgSubscribed
	MaxFormFields   = audience.MaxFormFields
	MaxFormGroups   = audience.MaxFormGroups
	MinFillTime     = audience.MinFillTime
	ConfirmValidFor = audience.ConfirmValidFor
	ResendAfter     = audience.ResendAfter
	MaxConfirmBody  = audience.MaxConfirmBody
)

var (
	ConsentText       = audience.ConsentText
	FormPageLocale    = audience.PageLocale
	ErrSignupTooFast  = audience.ErrTooFast
	DefaultFormLimits = audience.DefaultFormLimits
)
