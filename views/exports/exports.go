// Package exports holds the Exports page: the account's background
// exports with their progress, download links and expiry.
package exports

import (
	"time"

	"herald/models"
	"herald/views"
)

// URLs of the Exports page.
const (
	URL         = "/exports"
	ContactsURL = "/exports/contacts" // POST: start an export of a contact type or a segment
)

// DownloadURL is the file of export id.
func DownloadURL(id int64) string { return URL + "/" + views.Itoa(id) + "/download" }

// Data is the Exports page.
type Data struct {
	Jobs   []models.ExportJob
	Active bool   // one is queued or running: the list asks for itself again
	Alert  string // why an export was refused
}

// Labels of the states.
func stateLabel(j models.ExportJob) string {
	switch j.State {
	case "queued":
		return "Waiting"
	case "running":
		return "Running"
	case "done":
		return "Ready"
	case "failed":
		return "Failed"
	}
	return j.State
}

func stateClass(j models.ExportJob) string {
	switch j.State {
	case "done":
		return "badge badge-success"
	case "failed":
		return "badge badge-danger"
	case "running":
		return "badge badge-info"
	}
	return "badge badge-muted"
}

// done is the rows written so far, never above the total shown.
func done(j models.ExportJob) int64 {
	if j.RowsTotal > 0 && j.RowsDone > j.RowsTotal {
		return j.RowsTotal
	}
	return j.RowsDone
}

// total is the bar's maximum (at least 1: an empty export's bar is full
// when done).
func total(j models.ExportJob) int64 { return max(j.RowsTotal, done(j), 1) }

const timeDisplay = "Jan 2, 2006 15:04 MST"

func stamp(ms int64) string    { return time.UnixMilli(ms).UTC().Format(timeDisplay) }
func isoStamp(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05Z") }

// size is a file size in kB or MB.
func size(b int64) string {
	switch {
	case b >= 1<<20:
		return views.Itoa(b/(1<<20)) + "." + views.Itoa(b%(1<<20)*10/(1<<20)) + " MB"
	case b >= 1<<10:
		return views.Itoa(b/(1<<10)) + " kB"
	}
	return views.Itoa(b) + " bytes"
}
