package campaign

// The columns the console's lists of sends and automations sort by
// (ListFilter.Sort → column), and their status filters (ListFilter.Status →
// condition). Every sort column has an index of (user_id, column)
// (migration 00028; sent_at 00022).
var (
	SendSorts = map[string]string{"name": "single_send_name", "status": "status", "created": "created_at", "sent": "sent_at"}
	// A send starting (status 0, armed) counts as running; a draft is
	// status 0 never armed.
	sendStatuses = map[string]string{
		"draft": "status = 0 AND armed = 0", "scheduled": "status = 1",
		"running": "(status = 2 OR (status = 0 AND armed = 1))", "completed": "status = 3",
	}
	AutomationSorts = map[string]string{"name": "automation_name", "status": "status", "created": "created_at"}
	// Paused is a draft that has been live (views/automations.Paused).
	automationStatuses = map[string]string{
		"live": "status = 1", "paused": "status <> 1 AND live_at IS NOT NULL", "draft": "status <> 1 AND live_at IS NULL",
	}
)

// Status filter keys, in the order the console offers them.
var (
	SendStatuses       = []string{"draft", "scheduled", "running", "completed"}
	AutomationStatuses = []string{"live", "paused", "draft"}
)
