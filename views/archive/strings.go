package archive

// Strings are every text the archive's pages show, in one place so that
// they can be translated: a page takes the set of its language.
type Strings struct {
	Lang          string // the <html lang> of the pages
	Kicker        string // above the archive's title
	ListTitle     string // the list's <title>: %[1]s is the archive's title; see ListTitleText
	EntryTitle    string // a newsletter's <title>: %[1]s its subject, %[2]s the archive's title
	Skip          string
	FeedLink      string
	FeedTitle     string // the feed's name in the page's <link rel=alternate>
	Empty         string
	EmptyHint     string
	ListLabel     string // the list's accessible name
	PagesLabel    string // the pagination's accessible name
	Newer         string
	Older         string
	PageOf        string // "Page %d"; see PageText
	Back          string
	From          string // before the sender's name
	SentOn        string // before the date
	FrameTitle    string // the frame's accessible name: %[1]s is the subject
	NotFound      string
	NotFoundHint  string
	DateFormat    string // Go's layout of a date
	NoSubject     string
	FrameFallback string // inside the frame element, for browsers without frames
}

// English is the archive's text in English.
var English = Strings{
	Lang:          "en",
	Kicker:        "Newsletter archive",
	ListTitle:     "%[1]s · newsletter archive",
	EntryTitle:    "%[1]s · %[2]s",
	Skip:          "Skip to content",
	FeedLink:      "Subscribe to the feed",
	FeedTitle:     "Newsletters (Atom feed)",
	Empty:         "No newsletters here yet.",
	EmptyHint:     "Newsletters appear here once they are sent.",
	ListLabel:     "Newsletters, newest first",
	PagesLabel:    "Pages",
	Newer:         "Newer newsletters",
	Older:         "Older newsletters",
	PageOf:        "Page %d",
	Back:          "All newsletters",
	From:          "From",
	SentOn:        "Sent on",
	FrameTitle:    "The newsletter: %[1]s",
	NotFound:      "Not found",
	NotFoundHint:  "This archive or newsletter does not exist, or is no longer public.",
	DateFormat:    "2 January 2006",
	NoSubject:     "(no subject)",
	FrameFallback: "Open the newsletter",
}
