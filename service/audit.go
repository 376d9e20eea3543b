package service

import (
	"context"
	"time"

	"herald/models"
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
