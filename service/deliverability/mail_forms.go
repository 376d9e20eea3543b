package deliverability

import (
	"context"
	"html"
	"net/mail"
	"net/url"
	"strings"

	"herald/i18n"
	"herald/models"
	"herald/service/core"
)

// FormConfirmURL is the link of a sign-up's confirmation mail.
func (m *Mail) FormConfirmURL(token string) string {
	return m.BaseURL + "/c/" + url.PathEscape(token)
}

// SendFormConfirmation mails a person who signed up through double-opt-in
// form f the link that confirms the address (filed in the outbox under
// the form's account). l is the person's language (i18n.Pick of the
// contact's, the form's and the sign-up's Accept-Language; nil: English):
// herald's wording speaks it. The form's own subject and body
// (ConfirmSubject, ConfirmBody) are sent as written instead, untranslated.
// token is the link's token (kept hashed by the caller).
func (m *Mail) SendFormConfirmation(ctx context.Context, to mail.Address, l *i18n.Locale, f *models.Form, token string) error {
	sm, err := m.brandedFor(ctx, f.UserID, formConfirmationMail(l, f, to.Address, m.FormConfirmURL(token)))
	if err != nil {
		return err
	}
	return m.sendSystem(core.WithAccount(ctx, f.UserID), to, sm)
}

// FormConfirmationPreview is the subject and HTML of form f's confirmation
// mail in language l to a sample address with a sample link, branded with
// the form's account's profile, as the console shows it beside the form's
// settings.
func (m *Mail) FormConfirmationPreview(ctx context.Context, l *i18n.Locale, f *models.Form) (subject, body string, err error) {
	sm, err := m.brandedFor(ctx, f.UserID, formConfirmationMail(l, f, "person@example.com", m.FormConfirmURL("sample-token")))
	if err != nil {
		return "", "", err
	}
	return sm.Subject, systemHTML(sm), nil
}

// formConfirmationMail is form f's confirmation mail to address with its
// link: the form's own subject and body where it has them, herald's
// wording in l otherwise (the caller adds the account's brand).
func formConfirmationMail(l *i18n.Locale, f *models.Form, address, link string) systemMail {
	if l == nil {
		l = i18n.English()
	}
	sm := systemMail{
		Lang:      l.Lang(),
		Subject:   l.T("confirm_mail.subject"),
		Preheader: l.T("confirm_mail.preheader", "Form", f.Name),
		Heading:   l.T("confirm_mail.heading"),
		Lines: []string{
			l.T("confirm_mail.line1", "Form", f.Name, "Email", address),
			l.T("confirm_mail.line2"),
		},
		Button: l.T("confirm_mail.button"),
		Link:   link,
		Footer: l.T("confirm_mail.footer"),
	}
	if s := strings.TrimSpace(f.ConfirmSubject); s != "" {
		sm.Subject = s
	}
	if strings.TrimSpace(f.ConfirmBody) != "" {
		// The account's own words: no heading, button or footer of ours,
		// and no language claimed for them.
		sm.Lang, sm.Preheader = "", ""
		sm.BodyHTML = PlainToHTML(f.ConfirmBody, link)
	}
	return sm
}

// PlainToHTML is a form's own confirmation text as the mail's HTML:
// every character the account typed escaped, paragraphs at blank lines,
// line breaks kept, and each models.ConfirmURLPlaceholder the link
// (written out, so that it reads the same in the text part).
func PlainToHTML(text, link string) string {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	a := `<a href="` + html.EscapeString(link) + `" style="color:#3b5bdb;word-break:break-all">` + html.EscapeString(link) + `</a>`
	var b strings.Builder
	for _, para := range strings.Split(text, "\n\n") {
		para = strings.Trim(para, "\n")
		if strings.TrimSpace(para) == "" {
			continue
		}
		p := html.EscapeString(para)
		p = strings.ReplaceAll(p, models.ConfirmURLPlaceholder, a)
		p = strings.ReplaceAll(p, "\n", "<br>\n")
		b.WriteString(`<p style="margin:0 0 16px;line-height:1.5">` + p + "</p>\n")
	}
	return b.String()
}
