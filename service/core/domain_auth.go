package core

import "time"

// DomainAuth is what the DNS checks last found for one sending domain of an
// account: read by the pre-send checklist.
type DomainAuth struct {
	Domain    string
	Checked   bool // false: never checked yet
	CheckedAt time.Time
	Problems  []string // plain-language failures; empty when every check passed
	Warnings  []string // e.g. DMARC p=none
}
