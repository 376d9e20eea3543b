package archive

import (
	"fmt"
	"strconv"
	"time"
)

// PageText is the page number as the pagination shows it.
func (s Strings) PageText(n int) string { return fmt.Sprintf(s.PageOf, n) }

// ListTitleText is the <title> of the archive titled title.
func (s Strings) ListTitleText(title string) string { return fmt.Sprintf(s.ListTitle, title) }

// EntryTitleText is the <title> of a newsletter of the archive titled title.
func (s Strings) EntryTitleText(subject, title string) string {
	return fmt.Sprintf(s.EntryTitle, s.OrNoSubject(subject), title)
}

// FrameTitleText is the accessible name of the frame showing a newsletter.
func (s Strings) FrameTitleText(subject string) string {
	return fmt.Sprintf(s.FrameTitle, s.OrNoSubject(subject))
}

// Date is a date as the pages show it.
func (s Strings) Date(t time.Time) string { return t.UTC().Format(s.DateFormat) }

// machineDate is a date for <time datetime>.
func machineDate(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// pageURL is the address of page n of the archive at base (a path).
func pageURL(base string, n int) string {
	if n <= 1 {
		return base
	}
	return base + "?page=" + strconv.Itoa(n)
}

// OrNoSubject is a subject, or the text that stands for an empty one.
func (s Strings) OrNoSubject(subject string) string {
	if subject == "" {
		return s.NoSubject
	}
	return subject
}
