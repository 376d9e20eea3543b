package service

import (
	"context"
	"time"

	"herald/models"
)

// AuditAction names one kind of line of the audit log.
type AuditAction string

// The audited actions: who did what, for the account's audit log.
const (
	AuditSendStarted       AuditAction = "send.started"
	AuditSendScheduled     AuditAction = "send.scheduled"
	AuditSendResumed       AuditAction = "send.resumed"
	AuditAutomationLive    AuditAction = "automation.live"
	AuditAutomationPaused  AuditAction = "automation.paused"
	AuditKeysRotated       AuditAction = "keys.rotated"
	AuditAPIKeyCreated     AuditAction = "api_key.created"
	AuditAPIKeyRevoked     AuditAction = "api_key.revoked"
	AuditMemberInvited     AuditAction = "member.invited"
	AuditInvitationRevoked AuditAction = "invitation.revoked"
	AuditMemberJoined      AuditAction = "member.joined"
	AuditMemberRemoved     AuditAction = "member.removed"
	AuditRoleChanged       AuditAction = "member.role_changed"
	AuditImportStarted     AuditAction = "import.started"
	AuditContactTypeDelete AuditAction = "contact_type.deleted"
	AuditSegmentDeleted    AuditAction = "segment.deleted"
	AuditExportStarted     AuditAction = "export.started"
	AuditTwoFactorOn       AuditAction = "login.two_factor_on"
	AuditTwoFactorOff      AuditAction = "login.two_factor_off"
	AuditPasswordChanged   AuditAction = "login.password_changed"
	AuditPasswordReset     AuditAction = "login.password_reset"
	AuditDenied            AuditAction = "denied"
	// AuditSuppressionLifted is written by the repair of the bounce rules
	// (migration 00036), not by a person: target the address, detail what
	// the suppression said and how it reads now.
	AuditSuppressionLifted AuditAction = "suppression.lifted"
)

var auditLabels = map[AuditAction]string{
	AuditSendStarted:       "Started a send",
	AuditSendScheduled:     "Scheduled a send",
	AuditSendResumed:       "Resumed a send",
	AuditAutomationLive:    "Set an automation live",
	AuditAutomationPaused:  "Paused an automation",
	AuditKeysRotated:       "Rotated the API keys",
	AuditAPIKeyCreated:     "Made a named API key",
	AuditAPIKeyRevoked:     "Revoked a named API key",
	AuditMemberInvited:     "Invited a member",
	AuditInvitationRevoked: "Revoked an invitation",
	AuditMemberJoined:      "Joined the team",
	AuditMemberRemoved:     "Removed a member",
	AuditRoleChanged:       "Changed a member's role",
	AuditImportStarted:     "Started an import",
	AuditContactTypeDelete: "Deleted a contact type",
	AuditSegmentDeleted:    "Deleted a segment",
	AuditExportStarted:     "Started an export",
	AuditTwoFactorOn:       "Turned two-factor login on",
	AuditTwoFactorOff:      "Turned two-factor login off",
	AuditPasswordChanged:   "Changed a password",
	AuditPasswordReset:     "Reset a password",
	AuditDenied:            "Was refused",
	AuditSuppressionLifted: "Suppression lifted by the bounce rules' repair",
}

// AuditLabel is the audit action as the console shows it.
func AuditLabel(a string) string {
	if l, ok := auditLabels[AuditAction(a)]; ok {
		return l
	}
	return a
}

// apiActor names the author of a line written without a console actor.
const apiActor = "API key or command line"

// Audit writes and reads the audit log.
type Audit struct {
	db  *DB
	now func() time.Time
}

// Record writes one line for the account: the actor on ctx (WithActor),
// else the API or the command line. It is written after the action
// succeeded, in its own statement.
func (a *Audit) Record(ctx context.Context, accountID int64, action AuditAction, target, detail string) error {
	e := &models.AuditEntry{UserID: accountID, Actor: apiActor, Action: string(action), Target: clip(target), Detail: clip(detail)}
	if who, ok := ActorOf(ctx); ok {
		e.MemberID, e.Actor = who.MemberID, clip(who.Name)
	}
	e.CreatedAt = a.now().UnixMilli()
	return a.db.W.WithContext(ctx).Create(e).Error
}

// clip keeps a logged text to 500 characters.
func clip(s string) string {
	r := []rune(s)
	if len(r) > 500 {
		return string(r[:500]) + "…"
	}
	return s
}

// AuditPageSize is the number of lines of one page of the audit log.
const AuditPageSize = 50

// List returns page (from 1) of the account's audit log, newest first,
// and whether an older page exists. It reads the (user_id, created_at,
// id) index backwards.
func (a *Audit) List(ctx context.Context, accountID int64, page int) ([]models.AuditEntry, bool, error) {
	if page < 1 {
		page = 1
	}
	var rows []models.AuditEntry
	err := a.db.R.WithContext(ctx).Where("user_id = ?", accountID).
		Order("created_at DESC, id DESC").Offset((page - 1) * AuditPageSize).Limit(AuditPageSize + 1).Find(&rows).Error
	if err != nil {
		return nil, false, err
	}
	more := len(rows) > AuditPageSize
	if more {
		rows = rows[:AuditPageSize]
	}
	return rows, more, nil
}
