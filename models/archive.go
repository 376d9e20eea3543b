package models

// ArchiveID is the public id of an account's archive (decisions.md 10):
// random and unguessable, never the account's numeric id, made the first
// time the archive's address is asked for.
type ArchiveID struct {
	UserID    int64     `gorm:"primaryKey;autoIncrement:false"`
	PublicID  string    `gorm:"column:public_id"`
	CreatedAt Timestamp `gorm:"column:created_at"`
}

// TableName names the table.
func (ArchiveID) TableName() string { return "archive_ids" }
