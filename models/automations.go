package models

import "encoding/json"

// Automation is a sequence of timed emails sent to the contacts that enter
// its target (a contact type or a segment) after it is set live.
type Automation struct {
	ID                 int64      `gorm:"primaryKey" json:"id"`
	UserID             int64      `json:"user_id"`
	AutomationFor      int64      `json:"automation_for"`
	AutomationForTable TargetKind `json:"automation_for_table"`
	AutomationName     string     `json:"automation_name"`
	ExitCriteria       int        `json:"exit_criteria"`
	UnsubscribeGroupID string     `json:"unsubscribe_group_id"`
	AutomationType     int        `json:"automation_type"`
	Utr                string     `json:"utr"`
	Status             int        `json:"status"`
	LiveAt             DateTime   `json:"live_at"`
	TotalTriggered     int64      `gorm:"-" json:"total_triggered"`
	TotalDelivered     int64      `gorm:"-" json:"total_delivered"`
	TotalUniqueOpens   int64      `gorm:"-" json:"total_unique_opens"`
	TotalOpens         int64      `gorm:"-" json:"total_opens"`
	TotalBounces       int64      `gorm:"-" json:"total_bounces"`
	TotalUnsubscribe   int64      `gorm:"-" json:"total_unsubscribe"`
	// Beyond the spec (decisions.md 7): the steps' soft bounces and spam
	// complaints reported after sending.
	TotalSoftBounces int64      `gorm:"-" json:"total_soft_bounces"`
	TotalSpamReports int64      `gorm:"-" json:"total_spam_reports"`
	DeletedAt        *Timestamp `json:"deleted_at"`
	CreatedAt        Timestamp  `json:"created_at"`
	UpdatedAt        Timestamp  `json:"updated_at"`
	EnrolCursor      int64      `json:"-"`
	BranchCursor     int64      `json:"-"` // the last enrolment id the branch's early pass looked at
	// TriggerKind is how contacts are enrolled: TriggerTarget or TriggerAPI.
	TriggerKind string `json:"trigger_kind"`
	// A TriggerDate automation's date: the custom field (datetime-local)
	// it reads, the days before (< 0) or after (> 0) its date, and 1 when
	// it comes back every year (0: once). DateDay (local YYYYMMDD) and
	// DateCursor are where the engine's enrolment of that day stands.
	DateField      string `json:"date_field"`
	DateOffsetDays int    `json:"date_offset_days"`
	DateYearly     int    `json:"date_yearly"`
	DateDay        int64  `json:"-"`
	DateCursor     int64  `json:"-"`
}

// TableName names the table.
func (Automation) TableName() string { return "automations" }

// RowID is the row's id.
func (a *Automation) RowID() int64 { return a.ID }

// AutomationCount is an automation as the list answers it.
type AutomationCount struct {
	Automation
	AutomationScheduleCount int64 `gorm:"-" json:"automation_schedule_count"`
}

// RowID is the row's id.
func (a *AutomationCount) RowID() int64 { return a.ID }

// How an automation enrols its contacts.
const (
	TriggerTarget = "target" // the contacts entering its contact type or segment
	TriggerAPI    = "api"    // the contacts named by POST api/automations/trigger
	TriggerDate   = "date"   // the contacts whose date field (moved by the offset) is today
)

// Automation statuses (api.md, States).
const (
	AutomationDraft = 0
	AutomationLive  = 1
)

// AutomationSchedule is one email of an automation.
type AutomationSchedule struct {
	ID            int64   `gorm:"primaryKey" json:"id"`
	UserID        int64   `json:"user_id"`
	AutomationID  int64   `json:"automation_id"`
	SenderID      int64   `json:"sender_id"`
	Subject       string  `json:"subject"`
	Preheader     string  `json:"-"` // the console's ('' none); not in the API's email
	WaitingPeriod int     `json:"waiting_period"`
	WaitingType   string  `json:"waiting_type"`
	Utr           string  `json:"utr"`
	TemplateID    int64   `json:"template_id"`
	PreviewImg    string  `json:"preview_img"`
	TemplateJSON  *string `json:"template_json"`
	TemplateHTML  *string `json:"template_html"`
	Position      int     `json:"-"`
	SendID        *int64  `json:"-"`
	// Kind is StepEmail or StepBranch; Path is the line the step is on:
	// PathMain, or PathA/PathB after the branch.
	Kind      string    `json:"-"`
	Path      string    `json:"-"`
	CreatedAt Timestamp `json:"created_at"`
	UpdatedAt Timestamp `json:"updated_at"`
	DesignURL string    `gorm:"-" json:"design_url"`
	Image     string    `gorm:"-" json:"image"`
}

// TableName names the table.
func (AutomationSchedule) TableName() string { return "automation_schedules" }

// MarshalJSON writes the record in api.md's order, with template_json and
// template_html as strings: empty when unused, never null.
func (s AutomationSchedule) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID            int64     `json:"id"`
		UserID        int64     `json:"user_id"`
		AutomationID  int64     `json:"automation_id"`
		SenderID      int64     `json:"sender_id"`
		Subject       string    `json:"subject"`
		WaitingPeriod int       `json:"waiting_period"`
		WaitingType   string    `json:"waiting_type"`
		Utr           string    `json:"utr"`
		TemplateID    int64     `json:"template_id"`
		PreviewImg    string    `json:"preview_img"`
		TemplateJSON  string    `json:"template_json"`
		TemplateHTML  string    `json:"template_html"`
		CreatedAt     Timestamp `json:"created_at"`
		UpdatedAt     Timestamp `json:"updated_at"`
		DesignURL     string    `json:"design_url"`
		Image         string    `json:"image"`
	}{s.ID, s.UserID, s.AutomationID, s.SenderID, s.Subject, s.WaitingPeriod, s.WaitingType, s.Utr, s.TemplateID, s.PreviewImg,
		text(s.TemplateJSON), text(s.TemplateHTML), s.CreatedAt, s.UpdatedAt, s.DesignURL, s.Image})
}

// text is *p, "" for nil.
func text(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// RowID is the row's id.
func (s *AutomationSchedule) RowID() int64 { return s.ID }

// AutomationContact is a contact enrolled in an automation.
type AutomationContact struct {
	ID           int64 `gorm:"primaryKey"`
	AutomationID int64
	UserID       int64
	ContactID    *int64
	Email        string
	FirstName    string
	LastName     string
	Step         int
	DueAt        int64
	State        int
	EnrolledAt   Timestamp
	UpdatedAt    Timestamp
	Path         string  // the line of its next step (PathMain, PathA, PathB)
	Data         *string // an API trigger's data: a JSON object of strings
	// Occurrence is the date automation's occurrence it is for: the year
	// of a yearly one, YYYYMMDD of a one-off; 0 for other triggers.
	Occurrence int64
}

// Step kinds and paths.
const (
	StepEmail  = "email"
	StepBranch = "branch"
	PathMain   = ""
	PathA      = "a" // after a branch: opened or clicked
	PathB      = "b" // after a branch: neither, by the end of its wait
)

// TableName names the table.
func (AutomationContact) TableName() string { return "automation_contacts" }

// Enrolment states.
const (
	EnrolActive = 0
	EnrolDone   = 1
	EnrolExited = 2
)
