package main

import (
	"context"

	"herald/delivery"
	"herald/service"
)

// reportParser reads one mail that came back (delivery.ParseReports).
type reportParser func(raw []byte, rcpts []string, v *delivery.VERP) ([]delivery.Report, error)

// newBounceMailbox is the poller of HERALD_BOUNCE_MAILBOX, handing what
// parse finds to svc.Feedback, which also counts the mails set aside; nil
// when the variable is unset. The parser
// gets each mail with the addresses its header says it was delivered to
// (a mailbox keeps no envelope).
func newBounceMailbox(ctx context.Context, cfg config, svc *service.Service, parse reportParser) (*delivery.Mailbox, error) {
	if cfg.BounceMailbox == "" {
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
		Kept:    svc.Feedback,
	})
}

// The poller counts the mails it sets aside through Feedback.
var _ delivery.KeptMails = (*service.Feedback)(nil)
