package identity

import (
	"context"
	"fmt"
	"time"

	"herald/models"
	"herald/service/core"
)

var auditLabels = map[core.AuditAction]string{
	core.AuditSendStarted:       "Started a send",
	core.AuditSendScheduled:     "Scheduled a send",
	core.AuditSendResumed:       "Resumed a send",
	core.AuditAutomationLive:    "Set an automation live",
	core.AuditAutomationPaused:  "Paused an automation",
	core.AuditKeysRotated:       "Rotated the API keys",
	core.AuditProfileChanged:    "Changed the organisation profile",
	core.AuditAPIKeyCreated:     "Made a named API key",
	core.AuditAPIKeyRevoked:     "Revoked a named API key",
	core.AuditMemberInvited:     "Invited a member",
	core.AuditInvitationRevoked: "Revoked an invitation",
	core.AuditMemberJoined:      "Joined the team",
	core.AuditMemberRemoved:     "Removed a member",
	core.AuditRoleChanged:       "Changed a member's role",
	core.AuditImportStarted:     "Started an import",
	core.AuditContactTypeDelete: "Deleted a contact type",
	core.AuditSegmentDeleted:    "Deleted a segment",
	core.AuditExportStarted:     "Started an export",
	core.AuditTwoFactorOn:       "Turned two-factor login on",
	core.AuditTwoFactorOff:      "Turned two-factor login off",
	core.AuditRecoveryCodesMade: "Made two-factor recovery codes",
	core.AuditRecoveryCodeUsed:  "Logged in with a recovery code",
	core.AuditPasswordChanged:   "Changed a password",
	core.AuditPasswordReset:     "Reset a password",
	core.AuditDenied:            "Was refused",
	core.AuditSuppressionLifted: "Suppression lifted by the bounce rules' repair",
	core.AuditContactExported:   "Exported what herald holds on an address",
	core.AuditContactErased:     "Erased an address at the person's request",
}

// AuditLabel is the audit action as the console shows it.
func AuditLabel(a string) string {
	if l, ok := auditLabels[core.AuditAction(a)]; ok {
		return l
	}
	return a
}

// apiActor names the author of a line written without a console actor.
const apiActor = "API key or command line"

// Audit writes and reads the audit log.
type Audit struct {
	db  *core.DB
	now func() time.Time
}

// Record writes one line for the account: the actor on ctx (WithActor),
// else the API or the command line. It is written after the action
// succeeded, in its own statement.
func (a *Audit) Record(ctx context.Context, accountID int64, action core.AuditAction, target, detail string) error {
	e := &models.AuditEntry{UserID: accountID, Actor: apiActor, Action: string(action), Target: core.Clip(target), Detail: core.Clip(detail)}
	if who, ok := core.ActorOf(ctx); ok {
		e.MemberID, e.Actor = who.MemberID, core.Clip(who.Name)
	}
	e.CreatedAt = a.now().UnixMilli()
	if err := a.db.W.WithContext(ctx).Create(e).Error; err != nil {
		return fmt.Errorf("audit: record: %w", err)
	}
	return nil
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
		return nil, false, fmt.Errorf("audit: list: %w", err)
	}
	more := len(rows) > AuditPageSize
	if more {
		rows = rows[:AuditPageSize]
	}
	return rows, more, nil
}
