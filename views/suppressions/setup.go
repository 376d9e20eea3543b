package suppressions

import (
	"strings"

	"github.com/a-h/templ"

	"herald/models"
	"herald/views"
)

// SetupURL is the page that shows how to make reports come back to herald.
const SetupURL = "/suppressions/setup"

// Setup is the setup page of the bounce domain: its DNS records, the relay
// settings, each way herald hears back and whether it is on, and how each
// sender's From domain aligns with the return path.
type Setup struct {
	Address  string // the plain bounce address
	Domain   string
	Examples []Example
	Records  []Record
	MX       []string // what DNS answers now
	MXError  string
	Channels []Channel
	Senders  []Alignment
	Relay    []Snippet
	Last     *models.Feedback // the newest report of the account
	Untied   Untied           // server wide, never an address
	// HTTPSWarning says why one-click unsubscribe cannot work with the
	// public address (plain http); "" when it can.
	HTTPSWarning string
}

// Untied is what herald could not tie to one of its messages over the
// last 30 days, server wide: counts only, never an address (the reports
// are every account's).
type Untied struct {
	Days     int
	Reports  int64
	ByWhy    []WhyCount
	BySender []SenderCount
	Kept     int64 // mails left in the bounce mailbox
	KeptWhy  []WhyCount
	Mailbox  bool // a bounce mailbox is read
}

// WhyCount is a number of reports, or of mails, with one reason.
type WhyCount struct {
	Why string
	N   int64
}

// SenderCount is a number of untied reports from one source and sender
// IP ("" for the bounce mailbox).
type SenderCount struct {
	Source, IP string
	N          int64
}

// senderIP is how the page shows a sender's IP.
func senderIP(ip string) string {
	if ip == "" {
		return "bounce mailbox"
	}
	return ip
}

// Example is one form of address at the bounce domain.
type Example struct {
	What, Address string
}

// Record is one DNS record to publish; ID names its element.
type Record struct {
	ID string
	views.DNSRecord
}

// Channel is one way reports reach herald.
type Channel struct {
	ID, Name string
	On       bool
	Detail   string // what it listens on or reads; the URL to paste
	Hint     string // how to turn it on
}

// Alignment is one From domain of the account beside the bounce domain.
type Alignment struct {
	Domain            string
	Verified, Aligned bool
}

// Snippet is a block of relay configuration.
type Snippet struct {
	ID, Title, Explain, Code string
}

type feedbackTab struct {
	key, label, icon string
	href             templ.SafeURL
}

// feedbackTabList is the tabs of the bounces and complaints pages.
var feedbackTabList = []feedbackTab{
	{"addresses", "Suppressed addresses", "bounce", BouncedURL},
	{"reports", "Reports", "alert", ReportsURL},
	{"setup", "Setup", "info", SetupURL},
}

func joinHosts(h []string) string { return strings.Join(h, ", ") }
