package main

import (
	"context"
	"log/slog"

	"herald/delivery"
	"herald/service"
)

// parseReports is the bounce parser the mailbox poller reads mails with.
// While it is nil, HERALD_BOUNCE_MAILBOX is accepted but not read (a
// warning at start says so): herald never deletes mails it cannot read.
//
// TODO(lead): parseReports = delivery.ParseReports once the parser branch is merged.
var parseReports func(raw []byte, rcpts []string, v *delivery.VERP) ([]delivery.Report, error)

// newBounceMailbox is the poller of HERALD_BOUNCE_MAILBOX, handing what it
// finds to svc.Feedback; nil when the variable is unset or no parser is
// built in. The parser gets each mail with the addresses its header says
// it was delivered to (a mailbox keeps no envelope).
func newBounceMailbox(ctx context.Context, cfg config, svc *service.Service) (*delivery.Mailbox, error) {
	if cfg.BounceMailbox == "" {
		return nil, nil
	}
	parse := parseReports
	if parse == nil {
		u, err := delivery.ParseMailboxURL(cfg.BounceMailbox)
		if err != nil {
			return nil, err
		}
		slog.Warn("HERALD_BOUNCE_MAILBOX is set but this build has no bounce parser: the mailbox is not read", "mailbox", u.String())
		return nil, nil
	}
	verp, err := svc.Bounces.VERP(ctx)
	if err != nil {
		return nil, err
	}
	return delivery.NewMailbox(delivery.MailboxConfig{
		URL: cfg.BounceMailbox,
		Parse: func(_ context.Context, raw []byte) ([]delivery.Report, error) {
			return parse(raw, delivery.MailboxRecipients(raw), verp)
		},
		Reports: svc.Feedback,
	})
}
