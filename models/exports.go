package models

// ExportJob is an export an account started in the background: what it
// exports, where it stands, and its place in the queue.
// Times are Unix milliseconds (0: not yet).
type ExportJob struct {
	ID         int64 `gorm:"primaryKey"`
	UserID     int64
	MemberID   int64  // who started it; 0: the owner (or the API)
	Kind       string // contacts_type, contacts_segment, send_recipients
	TargetID   int64  // the contact type's, segment's or send's id
	Name       string // what the console shows: "Contacts of Customers"
	FileName   string
	State      string // queued, running, done, failed
	RowsDone   int64
	RowsTotal  int64
	Bytes      int64
	Parts      int64
	Error      string
	Worker     string // the process writing it
	LeaseUntil int64  // the worker holds it until then
	Attempts   int64
	CreatedAt  int64 `gorm:"autoCreateTime:false"`
	FinishedAt int64
	ExpiresAt  int64
}

// TableName names the table.
func (ExportJob) TableName() string { return "export_jobs" }

// ExportPart is one part (about 1 MB) of an export's file, in seq order.
type ExportPart struct {
	ExportID int64 `gorm:"primaryKey;autoIncrement:false"`
	Seq      int64 `gorm:"primaryKey;autoIncrement:false"`
	Data     []byte
}

// TableName names the table.
func (ExportPart) TableName() string { return "export_parts" }
