package service

// Names of record kept under their old names for the packages that use them.

import (
	"herald/models"
	"herald/service/internal/record"
	"time"
)

type (
	ContactMail = record.ContactMail
	MailEvent   = record.MailEvent
)

const (
	ABClicks            = record.ABClicks
	ABOpens             = record.ABOpens
	FeedbackBlock       = record.FeedbackBlock
	FeedbackComplaint   = record.FeedbackComplaint
	FeedbackHardBounce  = record.FeedbackHardBounce
	FeedbackSoftBounce  = record.FeedbackSoftBounce
	FeedbackUnsubscribe = record.FeedbackUnsubscribe
	MailBlockReport     = record.MailBlockReport
	MailBlocked         = record.MailBlocked
	MailClick           = record.MailClick
	MailComplaint       = record.MailComplaint
	MailDelivered       = record.MailDelivered
	MailFailed          = record.MailFailed
	MailHardBounce      = record.MailHardBounce
	MailOpen            = record.MailOpen
	MailRefused         = record.MailRefused
	MailSkipped         = record.MailSkipped
	MailSoftBounce      = record.MailSoftBounce
	MailUnsubscribe     = record.MailUnsubscribe
	MailWaiting         = record.MailWaiting
	MaxMailEvents       = record.MaxMailEvents
	SourceSMTP          = record.SourceSMTP
)

var (
	EventNames = record.EventNames
)

// StepWait is record.StepWait.
func StepWait(r *models.AutomationSchedule) time.Duration {
	return record.StepWait(r)
}
