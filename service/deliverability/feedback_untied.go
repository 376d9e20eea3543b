package deliverability

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
)

// Why a report could not be tied to one of herald's messages, as
// untied_reports keeps it (a short fixed vocabulary, counted on the setup
// page).
const (
	// UntiedNoToken: the report carries neither a VERP token nor a
	// Message-ID (a relay stripped the return path, a provider kept
	// nothing of herald's, a DSN sent to the plain bounce address).
	UntiedNoToken = "no token"
	// UntiedTokenForged: its token's MAC does not verify.
	UntiedTokenForged = "token does not verify"
	// UntiedMessageID: its Message-ID is not one of herald's, or its MAC
	// does not verify.
	UntiedMessageID = "message-id does not verify"
	// UntiedNotFound: the token verifies but its message is gone (a
	// deleted send, purged).
	UntiedNotFound = "message not found"
)

// UntiedDays is how many days untied reports and kept mails are counted
// and kept.
const UntiedDays = 30

const untiedWindow = UntiedDays * 24 * time.Hour

// keepUntied keeps a report that changed nothing because it is tied to no
// message. A delivery notice is not kept: it would change nothing even
// when tied.
func (f *Feedback) keepUntied(ctx context.Context, r Report, why string) error {
	if r.Kind == delivery.ReportDelivered {
		return nil
	}
	email, ok := core.NormalizeEmail(r.Recipient)
	if !ok {
		email = ""
	}
	row := models.UntiedReport{Kind: r.Kind.String(), Source: core.Truncate(r.Source, 32), RemoteIP: core.Truncate(r.RemoteIP, 64),
		Email: core.Truncate(email, 254), Why: why, CreatedAt: models.NewTimestamp(f.now().UTC())}
	if err := f.db.W.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("feedback: keep an untied report: %w", err)
	}
	slog.Debug("feedback: a report tied to no message of herald's", "kind", row.Kind, "source", row.Source, "remote", row.RemoteIP, "why", why)
	return nil
}

// KeepMail counts a mail the bounce mailbox's poller leaves in the
// mailbox, set aside (delivery.KeptMails): once per mailbox and mail,
// however often it is read (a POP3 poller reads it once more after a
// restart). Errors: the database's.
func (f *Feedback) KeepMail(ctx context.Context, k delivery.KeptMail) error {
	err := f.db.W.WithContext(ctx).Exec(`INSERT INTO bounce_mailbox_kept (mailbox, mail_id, why, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (mailbox, mail_id) DO NOTHING`, core.Truncate(k.Mailbox, 500), core.Truncate(k.ID, 200), core.Truncate(k.Why, 32),
		models.NewTimestamp(f.now().UTC())).Error
	if err != nil {
		return fmt.Errorf("feedback: count a mail kept in the bounce mailbox: %w", err)
	}
	return nil
}

// UntiedSummary is what the setup page shows of the reports herald could
// not tie to a message and of the bounce mailbox's mails it could not
// read, over the last 30 days, server wide. It holds no address: the rows
// are every account's.
type UntiedSummary struct {
	Reports  int64          // untied reports in all
	ByWhy    []UntiedCount  // by why, most first
	BySender []UntiedSender // by source and sender IP, most first (at most 20)
	Kept     int64          // mails left in the bounce mailbox
	KeptWhy  []UntiedCount  // by why, most first
}

// UntiedCount is a number of rows with one why.
type UntiedCount struct {
	Why string
	N   int64
}

// UntiedSender is a number of untied reports from one source and sender.
type UntiedSender struct {
	Source   string
	RemoteIP string // "" for the bounce mailbox
	N        int64
}

// maxUntiedSenders bounds the senders the summary lists.
const maxUntiedSenders = 20

// Untied counts the untied reports and the kept mails of the last 30
// days, server wide. Errors: the database's.
func (f *Feedback) Untied(ctx context.Context) (*UntiedSummary, error) {
	since := models.NewTimestamp(f.now().Add(-untiedWindow).UTC())
	q := f.db.R.WithContext(ctx)
	s := &UntiedSummary{}
	if err := q.Model(&models.UntiedReport{}).Select("why, COUNT(*) AS n").Where("created_at >= ?", since).
		Group("why").Order("n DESC, why").Scan(&s.ByWhy).Error; err != nil {
		return nil, fmt.Errorf("feedback: count untied reports: %w", err)
	}
	for _, c := range s.ByWhy {
		s.Reports += c.N
	}
	if err := q.Model(&models.UntiedReport{}).Select("source, remote_ip, COUNT(*) AS n").Where("created_at >= ?", since).
		Group("source, remote_ip").Order("n DESC, source, remote_ip").Limit(maxUntiedSenders).Scan(&s.BySender).Error; err != nil {
		return nil, fmt.Errorf("feedback: count untied reports by sender: %w", err)
	}
	if err := q.Model(&models.KeptMail{}).Select("why, COUNT(*) AS n").Where("created_at >= ?", since).
		Group("why").Order("n DESC, why").Scan(&s.KeptWhy).Error; err != nil {
		return nil, fmt.Errorf("feedback: count kept mails: %w", err)
	}
	for _, c := range s.KeptWhy {
		s.Kept += c.N
	}
	return s, nil
}

// Prune deletes the untied reports and kept-mail counts older than 30
// days, and the webhook tokens whose signatures have expired. The
// scheduler runs it once an hour. Errors: the database's.
func (f *Feedback) Prune(ctx context.Context) error {
	old := models.NewTimestamp(f.now().UTC().Add(-untiedWindow))
	db := f.db.W.WithContext(ctx)
	for _, p := range []struct{ what, sql string }{
		{"untied reports", "DELETE FROM untied_reports WHERE created_at < ?"},
		{"kept mails", "DELETE FROM bounce_mailbox_kept WHERE created_at < ?"},
	} {
		if err := db.Exec(p.sql, old).Error; err != nil {
			return fmt.Errorf("feedback: prune %s: %w", p.what, err)
		}
	}
	return f.pruneTokens(ctx)
}
