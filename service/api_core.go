package service

// Names of core kept under their old names for the packages that use them.

import (
	"context"
	"herald/service/core"
)

type (
	Actor      = core.Actor
	DB         = core.DB
	DomainAuth = core.DomainAuth
	Error      = core.Error
	ListFilter = core.ListFilter
	Problem    = core.Problem
	Problems   = core.Problems
	Reason     = core.Reason
	Role       = core.Role
	Settings   = core.Settings
)

const (
	AuditDenied            = core.AuditDenied
	AuditExportStarted     = core.AuditExportStarted
	AuditImportStarted     = core.AuditImportStarted
	AuditSuppressionLifted = core.AuditSuppressionLifted
	AuditContactErased     = core.AuditContactErased
	AuditContactExported   = core.AuditContactExported
	CodeConflict           = core.CodeConflict
	CodeForbidden          = core.CodeForbidden
	CodeNotFound           = core.CodeNotFound
	CodeRateLimited        = core.CodeRateLimited
	CodeUnauthorized       = core.CodeUnauthorized
	CodeUnavailable        = core.CodeUnavailable
	CodeValidation         = core.CodeValidation
	MaxBulkIDs             = core.MaxBulkIDs
	ReasonEmail            = core.ReasonEmail
	ReasonInteger          = core.ReasonInteger
	ReasonInvalidChoice    = core.ReasonInvalidChoice
	ReasonMax              = core.ReasonMax
	ReasonNotVerified      = core.ReasonNotVerified
	ReasonOther            = core.ReasonOther
	ReasonRequired         = core.ReasonRequired
	ReasonRequiredIf       = core.ReasonRequiredIf
	RoleAdmin              = core.RoleAdmin
	RoleEditor             = core.RoleEditor
	RoleOwner              = core.RoleOwner
	RoleViewer             = core.RoleViewer
)

var (
	ErrNotFound     = core.ErrNotFound
	ErrUnauthorized = core.ErrUnauthorized
	MemberRoles     = core.MemberRoles
)

// BulkKeys is core.BulkKeys.
func BulkKeys(field string, items []string) ([]string, error) {
	return core.BulkKeys(field, items)
}

// ErrorCode is core.ErrorCode.
func ErrorCode(err error) core.Code {
	return core.ErrorCode(err)
}

// FindNotUTF8 is core.FindNotUTF8.
func FindNotUTF8(walks ...func(visit func(k []byte, v []byte))) (key string, found bool) {
	return core.FindNotUTF8(walks...)
}

// IsNotFound is core.IsNotFound.
func IsNotFound(err error) bool {
	return core.IsNotFound(err)
}

// IsPostgres is core.IsPostgres.
func IsPostgres(dsn string) bool {
	return core.IsPostgres(dsn)
}

// Label is core.Label.
func Label(field string) string {
	return core.Label(field)
}

// NormalizeEmail is core.NormalizeEmail.
func NormalizeEmail(s string) (string, bool) {
	return core.NormalizeEmail(s)
}

// NotUTF8 is core.NotUTF8.
func NotUTF8(field string) *core.Error {
	return core.NotUTF8(field)
}

// OpenDB is core.OpenDB.
func OpenDB(dsn string) (*core.DB, error) {
	return core.OpenDB(dsn)
}

// ParseID is core.ParseID.
func ParseID(s string) (int64, error) {
	return core.ParseID(s)
}

// ParseIDs is core.ParseIDs.
func ParseIDs(field string, items []string) ([]int64, error) {
	return core.ParseIDs(field, items)
}

// ReadFailure is core.ReadFailure.
func ReadFailure(reason string) core.Failure {
	return core.ReadFailure(reason)
}

// ReadRefusal is core.ReadRefusal.
func ReadRefusal(reason string) core.Refusal {
	return core.ReadRefusal(reason)
}

// TooManyItems is core.TooManyItems.
func TooManyItems(field string, max int) *core.Error {
	return core.TooManyItems(field, max)
}

// WithAccount is core.WithAccount.
func WithAccount(ctx context.Context, accountID int64) context.Context {
	return core.WithAccount(ctx, accountID)
}

// WithActor is core.WithActor.
func WithActor(ctx context.Context, a core.Actor) context.Context {
	return core.WithActor(ctx, a)
}
