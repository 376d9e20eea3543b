package views

// ChecklistItem is one pre-send check as the console shows it (the
// service's CheckItem, copied: views hold no service types).
type ChecklistItem struct {
	Rule     string
	Severity string // ok, warning, failure
	Message  string
	Details  []string // the verdict's findings, one a line
	FixURL   string   // the page where a failure or warning is fixed; "" when it is fixed here
	FixLabel string   // that link's words
}

// Checklist is the pre-send checklist panel of the compose page and of an
// automation's page.
type Checklist struct {
	Items   []ChecklistItem
	Blocks  bool // the account refuses what fails a check
	Refused bool // the save or set-live just asked for was refused by it
}

// Failures counts the failed checks.
func (c Checklist) Failures() int {
	n := 0
	for _, it := range c.Items {
		if it.Severity == "failure" {
			n++
		}
	}
	return n
}

// checkIcon and checkLabel show an item's severity to the eye and to a
// screen reader.
func checkIcon(severity string) string {
	switch severity {
	case "ok":
		return "check"
	case "warning":
		return "info"
	}
	return "alert"
}

func checkLabel(severity string) string {
	switch severity {
	case "ok":
		return "Passed"
	case "warning":
		return "Warning"
	}
	return "Failed"
}

// ChecklistSettingURL is the account page's form of the setting.
const ChecklistSettingURL = "/account#checklist"
