package campaign

import (
	"regexp"

	"herald/delivery"
	"herald/models"
)

// The archived copy of a send is rendered from the send's own design, not
// from any recipient's message: so it never went through the tracking
// (links point to their targets, there is no open pixel) and carries no
// token. Placeholders of the contact (((first_name)), ((email)), custom
// fields, …) render empty, as a real send renders a field a contact
// lacks; the sender's (((sender_name)), ((sender_address))) are the
// send's, the org placeholders the account's profile's; ((view_in_browser)) is the archived copy's own address; the
// unsubscribe link is taken out, anchor and all.

// unsubscribeAnchor matches a link whose address is the unsubscribe
// placeholder, with its content: it would lead nowhere in the archive.
var unsubscribeAnchor = regexp.MustCompile(`(?is)<a\b[^>]*\bhref\s*=\s*["']?\s*\(\(unsubscribe_preferences\)\)[^>]*>.*?</a\s*>`)

// archiveLookup fills a send's placeholders for anyone: the sender's
// values, the organisation profile's (org, as core.OrgPlaceholderValues
// gives them; nil: none), self for view_in_browser, nothing else.
func archiveLookup(ss *models.SingleSend, self string, org map[string]string) func(string) string {
	return func(name string) string {
		if v, ok := org[name]; ok {
			return v
		}
		switch name {
		case "sender_name":
			if ss.SenderName != nil {
				return *ss.SenderName
			}
		case "sender_address":
			if ss.SenderAddress != nil {
				return *ss.SenderAddress
			}
		case "view_in_browser":
			return self
		}
		return ""
	}
}

// renderPlain renders a text (a subject, a preheader) with lookup.
func renderPlain(s string, lookup func(string) string) string {
	return delivery.Compile(s).Render(lookup)
}

// renderArchived is the send's HTML as the archive shows it, at address
// self: the design of an A/B test's winner when it had its own.
func renderArchived(ss *models.SingleSend, preheader, self string, org map[string]string) string {
	html := ""
	if ss.TemplateHTML != nil {
		html = *ss.TemplateHTML
	}
	if ss.ABShare > 0 && ss.ABWinner >= 1 && ss.ABWinner <= len(ss.ABDesigns) && ss.ABDesigns[ss.ABWinner-1] != "" {
		html = ss.ABDesigns[ss.ABWinner-1]
	}
	html = unsubscribeAnchor.ReplaceAllString(html, "")
	html = delivery.InsertPreheader(html, preheader)
	return delivery.Compile(html).Render(delivery.HTMLEscaped(archiveLookup(ss, self, org)))
}
