package service

// Names of campaign kept under their old names for the packages that use them.

import (
	"herald/service/campaign"
	"herald/service/core"
	"time"
)

type (
	ABTestInput      = campaign.ABTestInput
	ResendInput      = campaign.ResendInput
	AccountRates     = campaign.AccountRates
	AutomationInput  = campaign.AutomationInput
	BlockInput       = campaign.BlockInput
	TriggerInput     = campaign.TriggerInput
	BranchInput      = campaign.BranchInput
	StepContact      = campaign.StepContact
	PreviewOf        = campaign.PreviewOf
	Audience         = campaign.Audience
	CheckItem        = campaign.CheckItem
	ClassCount       = campaign.ClassCount
	Compared         = campaign.Compared
	ChecklistSubject = campaign.ChecklistSubject
	ChosenDesign     = campaign.ChosenDesign
	DesignInput      = campaign.DesignInput
	LocalTimeInput   = campaign.LocalTimeInput
	MessageInput     = campaign.MessageInput
	MessageRow       = campaign.MessageRow
	MessageOutcome   = campaign.MessageOutcome
	Progress         = campaign.Progress
	ScheduleInput    = campaign.ScheduleInput
	Severity         = campaign.Severity
	SingleSendInput  = campaign.SingleSendInput
	StepStats        = campaign.StepStats
	Wave             = campaign.Wave
)

const (
	ABTime               = campaign.ABTime
	CompareHours         = campaign.CompareHours
	CompareMax           = campaign.CompareMax
	ChecklistField       = campaign.ChecklistField
	ChoiceDesign         = campaign.ChoiceDesign
	ChoiceHTML           = campaign.ChoiceHTML
	MsgGroupRequired     = campaign.MsgGroupRequired
	RuleBounceRate       = campaign.RuleBounceRate
	RuleComplaintRate    = campaign.RuleComplaintRate
	RuleFromDomain       = campaign.RuleFromDomain
	RuleImageOnly        = campaign.RuleImageOnly
	RulePostalAddress    = campaign.RulePostalAddress
	RuleText             = campaign.RuleText
	RuleUnsubscribe      = campaign.RuleUnsubscribe
	SeverityFailure      = campaign.SeverityFailure
	SeverityOK           = campaign.SeverityOK
	SeverityWarning      = campaign.SeverityWarning
	StepContactsPageSize = campaign.StepContactsPageSize
)

var (
	AutomationStatuses = campaign.AutomationStatuses
	SendStatuses       = campaign.SendStatuses
)

// Failures is campaign.Failures.
func Failures(items []campaign.CheckItem) []string {
	return campaign.Failures(items)
}

// NewChecklist is campaign.NewChecklist.
func NewChecklist(db *core.DB, now func() time.Time, auth campaign.DomainAuthFunc) *campaign.Checklist {
	return campaign.NewChecklist(db, now, auth)
}
