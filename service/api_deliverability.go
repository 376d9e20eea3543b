package service

// Names of deliverability kept under their old names for the packages that use them.

import (
	"herald/service/core"
	"herald/service/deliverability"
)

type (
	Bounces           = deliverability.Bounces
	DNSRecord         = deliverability.DNSRecord
	Dashboard         = deliverability.Dashboard
	Day               = deliverability.Day
	DomainCheckConfig = deliverability.DomainCheckConfig
	DomainCheckResult = deliverability.DomainCheckResult
	DomainReport      = deliverability.DomainReport
	EventStore        = deliverability.EventStore
	EventWebhookInput = deliverability.EventWebhookInput
	Feedback          = deliverability.Feedback
	FeedbackFilter    = deliverability.FeedbackFilter
	Mail              = deliverability.Mail
	NotificationInput = deliverability.NotificationInput
	Overview          = deliverability.Overview
	RecentSend        = deliverability.RecentSend
	Report            = deliverability.Report
	SenderInput       = deliverability.SenderInput
	UntiedCount       = deliverability.UntiedCount
	UntiedSender      = deliverability.UntiedSender
	UntiedSummary     = deliverability.UntiedSummary
	WarmupDay         = deliverability.WarmupDay
	WarmupInput       = deliverability.WarmupInput
	WarmupPlan        = deliverability.WarmupPlan
)

const (
	BounceRateLimit       = deliverability.BounceRateLimit
	BounceRateWarn        = deliverability.BounceRateWarn
	CheckAlignment        = deliverability.CheckAlignment
	CheckBounce           = deliverability.CheckBounce
	CheckDKIM             = deliverability.CheckDKIM
	CheckDMARC            = deliverability.CheckDMARC
	CheckSPF              = deliverability.CheckSPF
	ComplaintRateLimit    = deliverability.ComplaintRateLimit
	ComplaintRateWarn     = deliverability.ComplaintRateWarn
	DashboardDays         = deliverability.DashboardDays
	PurposeSystemDKIM     = deliverability.PurposeSystemDKIM
	StatusFail            = deliverability.StatusFail
	StatusPass            = deliverability.StatusPass
	StatusWarn            = deliverability.StatusWarn
	UntiedDays            = deliverability.UntiedDays
	UntiedMessageID       = deliverability.UntiedMessageID
	UntiedNoToken         = deliverability.UntiedNoToken
	UntiedTokenForged     = deliverability.UntiedTokenForged
	VerifyLinkLifetime    = deliverability.VerifyLinkLifetime
	VerifyMailsPerAccount = deliverability.VerifyMailsPerAccount
	VerifyMailsPerSender  = deliverability.VerifyMailsPerSender
)

var (
	ErrDNSTemporary     = deliverability.ErrDNSTemporary
	ErrLinkExpired      = deliverability.ErrLinkExpired
	ErrVerificationMail = deliverability.ErrVerificationMail
	SenderStatuses      = deliverability.SenderStatuses
)

// Aligned is deliverability.Aligned.
func Aligned(bounceDomain string, fromDomain string) bool {
	return deliverability.Aligned(bounceDomain, fromDomain)
}

// DefaultBounceAddress is deliverability.DefaultBounceAddress.
func DefaultBounceAddress(baseURL string) string {
	return deliverability.DefaultBounceAddress(baseURL)
}

// DefaultSystemFrom is deliverability.DefaultSystemFrom.
func DefaultSystemFrom(baseURL string) string {
	return deliverability.DefaultSystemFrom(baseURL)
}

// NewOutbox is deliverability.NewOutbox.
func NewOutbox(db *core.DB) *deliverability.Outbox {
	return deliverability.NewOutbox(db)
}

// NewResolver is deliverability.NewResolver.
func NewResolver(server string) (*deliverability.Resolver, error) {
	return deliverability.NewResolver(server)
}

// OneClickWarning is deliverability.OneClickWarning.
func OneClickWarning(baseURL string) string {
	return deliverability.OneClickWarning(baseURL)
}

// NewRelayRates is deliverability.NewRelayRates: the relays' rate store
// shared by every process on the database.
func NewRelayRates(db *core.DB) *deliverability.RelayRates {
	return deliverability.NewRelayRates(db)
}
