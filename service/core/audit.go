package core

// The audit log's vocabulary (its actions) and the clipping of what it
// keeps; every area writes its lines.

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
	AuditRecoveryCodesMade AuditAction = "login.recovery_codes_made"
	AuditRecoveryCodeUsed  AuditAction = "login.recovery_code_used"
	AuditPasswordChanged   AuditAction = "login.password_changed"
	AuditPasswordReset     AuditAction = "login.password_reset"
	AuditDenied            AuditAction = "denied"
	AuditProfileChanged    AuditAction = "settings.organisation_profile"
	// AuditSuppressionLifted is written by the repair of the bounce rules
	// (migration 00036), not by a person: target the address, detail what
	// the suppression said and how it reads now.
	AuditSuppressionLifted AuditAction = "suppression.lifted"
	// Privacy requests (decisions.md 10): target the address's keyed hash,
	// never the address.
	AuditContactExported AuditAction = "contact.privacy_exported"
	AuditContactErased   AuditAction = "contact.erased"
)
