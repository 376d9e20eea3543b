package service

import "gorm.io/gorm"

// The columns each console list sorts by (ListFilter.Sort → column), and
// its status filters (ListFilter.Status → condition). Every sort column
// has an index of (user_id, column) (migration 00028; sent_at 00022).
var (
	SendSorts = map[string]string{"name": "single_send_name", "status": "status", "created": "created_at", "sent": "sent_at"}
	// A send starting (status 0, armed) counts as running; a draft is
	// status 0 never armed.
	sendStatuses = map[string]string{
		"draft": "status = 0 AND armed = 0", "scheduled": "status = 1",
		"running": "(status = 2 OR (status = 0 AND armed = 1))", "completed": "status = 3",
	}
	ContactSorts    = map[string]string{"email": "email", "name": "first_name", "created": "created_at"}
	SegmentSorts    = map[string]string{"name": "segments.segment_name", "created": "segments.created_at"}
	SenderSorts     = map[string]string{"name": "from_name", "nickname": "nickname", "email": "from_email", "created": "created_at"}
	senderStatuses  = map[string]string{"verified": "is_verified = 1", "unverified": "is_verified <> 1"}
	AutomationSorts = map[string]string{"name": "automation_name", "status": "status", "created": "created_at"}
	// Paused is a draft that has been live (views/automations.Paused).
	automationStatuses = map[string]string{
		"live": "status = 1", "paused": "status <> 1 AND live_at IS NOT NULL", "draft": "status <> 1 AND live_at IS NULL",
	}
)

// Status filter keys, in the order the console offers them.
var (
	SendStatuses       = []string{"draft", "scheduled", "running", "completed"}
	SenderStatuses     = []string{"verified", "unverified"}
	AutomationStatuses = []string{"live", "paused", "draft"}
)

// withStatus narrows q to the rows of f.Status among a list's statuses;
// an unknown key narrows nothing.
func withStatus(q *gorm.DB, f ListFilter, statuses map[string]string) *gorm.DB {
	if cond, ok := statuses[f.Status]; ok {
		return q.Where(cond)
	}
	return q
}
