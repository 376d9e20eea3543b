package deliverability

import (
	"cmp"
	"context"
	"fmt"
	"html"
	"net/mail"
	"net/url"
	"strings"

	"herald/delivery"
	"herald/service/core"
)

// SignupURL is the link that finishes a pending sign-up.
func (m *Mail) SignupURL(token string) string {
	return m.BaseURL + "/signup/confirm/" + url.PathEscape(token)
}

// SendSignupLink mails a new address the link that finishes its sign-up.
func (m *Mail) SendSignupLink(ctx context.Context, name, email, token string) error {
	return m.sendSystem(ctx, mail.Address{Name: name, Address: email}, systemMail{
		Subject:   "Finish signing up to Herald",
		Preheader: "Confirm your address to open your account",
		Heading:   "Finish signing up",
		Lines: []string{
			fmt.Sprintf("Someone, probably you, signed up to Herald at %s with %s. Open your account with the button below; the link works for 24 hours.", m.BaseURL, email),
		},
		Button: "Open my account",
		Link:   m.SignupURL(token),
		Footer: "If you did not sign up, ignore this mail: no account is opened without this link.",
	})
}

// SendSignupNotice tells an address that already has an account that
// someone tried to sign up with it: the sign-up page answers the same for
// a taken and a free address, so the owner learns it here, not the person
// who typed it.
func (m *Mail) SendSignupNotice(ctx context.Context, email string) error {
	return m.sendSystem(ctx, mail.Address{Address: email}, systemMail{
		Subject:   "You already have a Herald account",
		Preheader: "Someone tried to sign up with your address",
		Heading:   "You already have an account",
		Lines: []string{
			fmt.Sprintf("Someone tried to sign up to Herald at %s with %s, which already has an account. No new account was opened.", m.BaseURL, email),
			"If it was you, log in with your password instead.",
		},
		Button: "Log in",
		Link:   m.BaseURL + "/login",
		Footer: "If this was not you, ignore this mail: nothing about your account changed.",
	})
}

// ResetURL is the link that sets a new password.
func (m *Mail) ResetURL(token string) string {
	return m.BaseURL + "/reset/" + url.PathEscape(token)
}

// SendPasswordReset mails a login (an account's owner or a member) the link that sets a new password.
func (m *Mail) SendPasswordReset(ctx context.Context, name, email, token string) error {
	return m.sendSystem(ctx, mail.Address{Name: name, Address: email}, systemMail{
		Subject:   "Reset your Herald password",
		Preheader: "Choose a new password; the link works for one hour",
		Heading:   "Reset your password",
		Lines: []string{
			fmt.Sprintf("Someone, probably you, asked to reset the password of %s on Herald at %s. Choose a new one with the button below; the link works once, for one hour.", email, m.BaseURL),
			"Setting a new password logs out every browser logged in with this address.",
		},
		Button: "Choose a new password",
		Link:   m.ResetURL(token),
		Footer: "If you did not ask for this, ignore this mail: your password stays as it is.",
	})
}

// SendResetNotice answers a password reset asked for an address without
// an account: the login page answers the same for every address, so the
// owner of the address learns it here.
func (m *Mail) SendResetNotice(ctx context.Context, email string) error {
	return m.sendSystem(ctx, mail.Address{Address: email}, systemMail{
		Subject:   "Herald password reset",
		Preheader: "No Herald account uses this address",
		Heading:   "No account uses this address",
		Lines: []string{
			fmt.Sprintf("Someone asked to reset the password of %s on Herald at %s, but no account uses this address. Nothing was changed.", email, m.BaseURL),
			"If it was you, your account may use another address of yours: ask again with that one.",
		},
		Button: "Go to the login page",
		Link:   m.BaseURL + "/login",
		Footer: "If this was not you, ignore this mail.",
	})
}

// systemMail is one of herald's own short mails: a heading, paragraphs,
// one button; or, for a form's own confirmation mail, BodyHTML alone.
type systemMail struct {
	Lang                        string // <html lang>; "" claims none
	Subject, Preheader, Heading string
	Lines                       []string
	Button, Link                string
	Footer                      string
	// BodyHTML, when set, replaces the heading, lines, button and footer:
	// HTML built by herald from escaped text (PlainToHTML).
	BodyHTML string
	// Brand is the organisation profile of the account the mail speaks
	// for (a form's confirmation, an invitation): its logo or name heads
	// the mail, its colour paints the button, its name and postal address
	// close it. Empty for herald's own mails.
	Brand core.Brand
	// LogoURL is the brand's logo as a full address (base URL joined).
	LogoURL string
}

// brandedFor fills sm's brand from the profile of account (none: sm as
// it was).
func (m *Mail) brandedFor(ctx context.Context, account int64, sm systemMail) (systemMail, error) {
	b, err := core.ReadBrand(ctx, m.db.R, account)
	if err != nil {
		return sm, fmt.Errorf("mail: organisation profile of account %d: %w", account, err)
	}
	return m.withBrand(sm, b), nil
}

// withBrand is sm carrying brand b.
func (m *Mail) withBrand(sm systemMail, b core.Brand) systemMail {
	sm.Brand, sm.LogoURL = b, b.LogoURL(m.BaseURL)
	return sm
}

// brandHead is the logo (or the company's name) above a branded mail's
// content; "" without a profile.
func brandHead(sm systemMail) string {
	switch {
	case sm.LogoURL != "":
		return `<p style="margin:0 0 24px"><img src="` + html.EscapeString(sm.LogoURL) + `" alt="` + html.EscapeString(sm.Brand.Name) +
			`" height="48" style="display:block;height:48px;width:auto;max-width:240px;border:0"></p>` + "\n"
	case sm.Brand.Name != "":
		return `<p style="margin:0 0 24px;font-size:16px;font-weight:bold">` + html.EscapeString(sm.Brand.Name) + "</p>\n"
	}
	return ""
}

// brandFoot is the company's name and postal address under a branded
// mail's card; "" without them.
func brandFoot(sm systemMail) string {
	var parts []string
	for _, s := range []string{sm.Brand.Name, sm.Brand.Address} {
		if s != "" {
			parts = append(parts, html.EscapeString(s))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return `<p style="margin:16px 0 0;font-size:12px;color:#52606d;line-height:1.5">` + strings.Join(parts, " · ") + "</p>"
}

// systemHTML is the HTML of sm: every text escaped here.
func systemHTML(sm systemMail) string {
	content := sm.BodyHTML
	button, ink := "#3b5bdb", "#ffffff"
	if sm.Brand.Color != "" {
		button, ink = sm.Brand.Color, sm.Brand.Ink() // Brand.Color is "#rrggbb", checked when saved
	}
	if content == "" {
		var lines string
		for _, l := range sm.Lines {
			lines += `<p style="margin:0 0 16px;line-height:1.5">` + html.EscapeString(l) + "</p>\n"
		}
		content = fmt.Sprintf(`<h1 style="margin:0 0 16px;font-size:22px">%s</h1>
%s<table role="presentation" cellpadding="0" cellspacing="0"><tr><td style="background:%s;border-radius:6px"><a href="%s" style="display:inline-block;padding:12px 24px;color:%s;text-decoration:none;font-weight:bold">%s</a></td></tr></table>
<p style="margin:16px 0 0;font-size:13px;color:#52606d;line-height:1.5">%s</p>
`, html.EscapeString(sm.Heading), lines, button, html.EscapeString(sm.Link), ink, html.EscapeString(sm.Button), html.EscapeString(sm.Footer))
	}
	content = brandHead(sm) + content
	lang := ""
	if sm.Lang != "" {
		lang = ` lang="` + html.EscapeString(sm.Lang) + `"`
	}
	return fmt.Sprintf(`<!doctype html><html%s><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>%s</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:Arial,Helvetica,sans-serif;color:#1f2933">
<table role="presentation" width="100%%" cellpadding="0" cellspacing="0"><tr><td align="center">
<table role="presentation" width="560" cellpadding="0" cellspacing="0" style="max-width:560px;width:100%%;background:#ffffff;border-radius:8px">
<tr><td style="padding:32px">
%s</td></tr></table>%s</td></tr></table></body></html>`, lang, html.EscapeString(sm.Subject), content, brandFoot(sm))
}

// sendSystem builds, signs (DKIM, once a check has seen the record of the
// key of herald's own mail: systemSigner) and sends one of herald's own mails (sender verification, sign-up),
// filed in the outbox under the account WithAccount set on ctx (0: none).
func (m *Mail) sendSystem(ctx context.Context, to mail.Address, sm systemMail) error {
	if sm.Lang == "" && sm.BodyHTML == "" {
		sm.Lang = "en" // herald's own English mails
	}
	body := systemHTML(sm)
	msg := &delivery.Message{From: m.from, To: to, Subject: sm.Subject, HTML: body, Preheader: sm.Preheader}
	raw, err := delivery.Build(msg)
	if err != nil {
		return err
	}
	key, err := m.systemSigner(ctx)
	if err != nil {
		return fmt.Errorf("mail: send system mail: %w", err)
	}
	if key != nil {
		if raw, err = delivery.SignMessage(raw, key); err != nil {
			return err
		}
	}
	return m.Transport.Send(ctx, m.Envelope(), []string{to.Address}, raw)
}

// InvitationURL is the link that accepts an invitation to a team.
func (m *Mail) InvitationURL(token string) string {
	return m.BaseURL + "/invitations/" + url.PathEscape(token)
}

// SendInvitation mails an address the link that makes it a member of the
// account with role (valid InvitationTTL). brand is the account's
// organisation profile: the mail names the team by its company name,
// else by the owner's name (account), and carries its logo, colour and
// postal address.
func (m *Mail) SendInvitation(ctx context.Context, account string, brand core.Brand, inviter, email string, role core.Role, token string) error {
	company := brand.Name
	// The account is named after its company, else its owner: "Ann's
	// team". inviter is a member's address ("Ann <ann@example.com>"): its
	// name speaks.
	who := inviter
	if a, err := mail.ParseAddress(inviter); err == nil {
		who = cmp.Or(a.Name, a.Address)
	}
	var subject, heading, line string
	switch {
	case company != "" && who == "":
		subject = "You are invited to " + company + " on Herald"
	case company != "":
		subject = who + " invited you to join " + company + " on Herald"
	case who == "":
		subject = "You are invited to join " + account + "'s team on Herald"
	case who == account:
		subject = who + " invited you to join their team on Herald"
	default:
		subject = who + " invited you to join " + account + "'s team on Herald"
	}
	if company != "" {
		heading = "Join " + company + " on Herald"
		line = fmt.Sprintf("%s invited %s to the team of %s on Herald at %s, as %s.", inviter, email, company, m.BaseURL, role.Label())
	} else {
		heading = "Join " + account + "'s team on Herald"
		line = fmt.Sprintf("%s invited %s to the team of %s on Herald at %s, as %s.", inviter, email, account, m.BaseURL, role.Label())
	}
	sm := systemMail{
		Subject:   subject,
		Preheader: "Join the team as " + role.Label(),
		Heading:   heading,
		Lines: []string{
			line,
			"Choose your name and password with the button below; the link works for 7 days.",
		},
		Button: "Accept the invitation",
		Link:   m.InvitationURL(token),
		Footer: "If you do not know this team, ignore this mail: nothing happens without this link.",
	}
	return m.sendSystem(ctx, mail.Address{Address: email}, m.withBrand(sm, brand))
}
