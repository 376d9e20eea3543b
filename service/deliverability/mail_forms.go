package deliverability

import (
	"context"
	"net/mail"
	"net/url"

	"herald/service/core"
)

// FormConfirmURL is the link of a sign-up's confirmation mail.
func (m *Mail) FormConfirmURL(token string) string {
	return m.BaseURL + "/c/" + url.PathEscape(token)
}

// SendFormConfirmation mails a person who signed up through a
// double-opt-in form the link that confirms the address (filed in the
// outbox under the form's account). formName is the form's name as the
// account wrote it; token is the link's token (kept hashed by the caller).
// The wording is herald's default: an account's own design comes later.
func (m *Mail) SendFormConfirmation(ctx context.Context, accountID int64, to mail.Address, formName, token string) error {
	return m.sendSystem(core.WithAccount(ctx, accountID), to, systemMail{
		Subject:   "Please confirm your subscription",
		Preheader: "One click and you are subscribed to " + formName,
		Heading:   "Confirm your subscription",
		Lines: []string{
			"Someone, probably you, signed up to “" + formName + "” with " + to.Address + ".",
			"Confirm that you want to receive these emails with the button below.",
		},
		Button: "Yes, subscribe me",
		Link:   m.FormConfirmURL(token),
		Footer: "The link works for 7 days. If you did not sign up, ignore this mail: you will not be subscribed and will get nothing more from us.",
	})
}
