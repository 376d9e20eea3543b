package campaign

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"herald/models"
	"herald/service/core"
	"herald/service/engine"
)

// Resends to those who did not open. A completed single send may have one
// resend: a single send of its own (its own ledger, statistics, page and
// events) whose ResendOf names the original. It is saved scheduled, with
// the original's design, sender, group and exclusions and a new subject;
// when its time comes, the scheduler's start round starts it like any
// scheduled send, and its audience is resolved from the original's ledger
// rows that were delivered and that no person opened or clicked
// (engine.NotOpenedByPerson: herald's one rule for people against
// machines), less those unsubscribed, bounced or complained since and the
// usual exclusions (global unsubscribers, the group's, suppressions). The
// audience is read when the resend starts, not when it is chosen, so
// every open until then counts; it is streamed in chunks by the ledger's
// (send_id, id) index. Being a scheduled send, it survives restarts and
// starts once across processes (the start round's conditional UPDATE).

// Bounds of the wait before a resend.
const (
	resendMinDays = 1
	resendMaxDays = 14
)

// ResendInput is the console's "Resend to those who did not open" form
// and the body of POST api/single/send/resend.
type ResendInput struct {
	Subject string
	// When is "days" (Days after the original went out) or "at" (Date
	// and Time in the account's time zone).
	When       string
	Days       string // 1 to 14
	Date, Time string // Y-m-d and H:i
}

// Messages of the resend option.
const (
	msgResendNotCompleted = "Only a completed single send can be resent to those who did not open."
	msgResendOfResend     = "A resend cannot be resent."
	msgResendExists       = "This send already has a resend. Delete it to choose again."
	msgResendDays         = "The wait must be a whole number of days between 1 and 14."
	msgResendPast         = "That time has already passed: choose a longer wait or a date."
	msgResendWhen         = "Choose a wait in days or a date and time."
	msgResendLocked       = "A resend cannot be edited: delete it and choose again from the original send."
)

// Resend returns the resend of the account's send ss that is not
// deleted, nil when it has none.
func (s *SingleSends) Resend(ctx context.Context, accountID int64, ss *models.SingleSend) (*models.SingleSend, error) {
	var out models.SingleSend
	err := accountSends(s.db.R.WithContext(ctx), accountID).Where("resend_of = ?", ss.ID).Take(&out).Error
	if core.IsNotFound(core.NotFound(err)) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("single sends: resend of send %d: %w", ss.ID, err)
	}
	return &out, nil
}

// Original returns the send a resend follows, nil when ss is no resend
// or its original was deleted.
func (s *SingleSends) Original(ctx context.Context, accountID int64, ss *models.SingleSend) (*models.SingleSend, error) {
	if ss.ResendOf == nil {
		return nil, nil
	}
	var out models.SingleSend
	err := accountSends(s.db.R.WithContext(ctx), accountID).Where("id = ?", *ss.ResendOf).Take(&out).Error
	if core.IsNotFound(core.NotFound(err)) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("single sends: original of send %d: %w", ss.ID, err)
	}
	return &out, nil
}

// NotOpened counts the recipients of the account's send ss a resend
// would go to now: delivered, not opened or clicked by a person, not
// unsubscribed, bounced or complained since, less the send's exclusions.
// The console's preview ("about N people"): opens until the resend
// starts take people out of it.
func (s *SingleSends) NotOpened(ctx context.Context, accountID int64, ss *models.SingleSend) (int64, error) {
	id := ss.ID
	n, err := engine.CountAudience(ctx, s.db, &models.SingleSend{ID: ss.ID, UserID: accountID, ResendOf: &id,
		ExcludeSpecificRecipientID: ss.ExcludeSpecificRecipientID, UnsubscribeGroupID: ss.UnsubscribeGroupID})
	if err != nil {
		return 0, fmt.Errorf("single sends: count those who did not open send %d: %w", ss.ID, err)
	}
	return n, nil
}

// ScheduleResend saves the resend of the account's completed send utr to
// those who did not open, with a new subject, at the chosen time, and
// returns it. Errors: ErrNotFound; validation (the form; a send not
// completed, a resend, one that has a resend already; the checklist's
// failures when the account blocks on them).
func (s *SingleSends) ScheduleResend(ctx context.Context, accountID int64, utr string, in ResendInput) (*models.SingleSend, error) {
	// The required parameters first, as on update: a send that does not
	// exist is not found only once they are given.
	req := core.Problems{}
	req.Required("utr", utr)
	req.Required("subject", strings.TrimSpace(in.Subject))
	if err := req.Err(); err != nil {
		return nil, err
	}
	orig, err := s.Get(ctx, accountID, utr)
	if err != nil {
		return nil, fmt.Errorf("single sends: resend: %w", err)
	}
	switch {
	case orig.ResendOf != nil:
		return nil, &core.Error{Code: core.CodeValidation, Message: msgResendOfResend}
	case orig.Status != models.SendCompleted:
		return nil, &core.Error{Code: core.CodeValidation, Message: msgResendNotCompleted}
	}
	if cur, err := s.Resend(ctx, accountID, orig); err != nil {
		return nil, err
	} else if cur != nil {
		return nil, &core.Error{Code: core.CodeValidation, Message: msgResendExists}
	}
	p := core.Problems{}
	subject := strings.TrimSpace(in.Subject)
	if p.Required("subject", subject) {
		p.MaxLen("subject", subject, maxSendName)
		p.SingleLine("subject", in.Subject)
	}
	at, err := s.resendAt(ctx, accountID, orig, in, p)
	if err != nil {
		return nil, fmt.Errorf("single sends: resend: %w", err)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	loc, err := s.location(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("single sends: resend: %w", err)
	}
	rs := resendOf(orig, subject, at, loc, models.NewTimestamp(s.now()))
	if err := s.checklist.enforceSend(ctx, accountID, rs); err != nil {
		return nil, fmt.Errorf("single sends: resend: %w", err)
	}
	if err := s.db.W.WithContext(ctx).Create(rs).Error; err != nil {
		// Two saves at once: the partial unique index keeps one.
		if tr := core.TranslateUnique(err, "resend"); tr != err {
			return nil, &core.Error{Code: core.CodeValidation, Message: msgResendExists}
		}
		return nil, fmt.Errorf("single sends: save the resend of send %d: %w", orig.ID, err)
	}
	s.poke()
	return rs, s.recordArmed(ctx, accountID, rs)
}

// resendAt reads when a resend goes: Days after the original went out, or
// at Date and Time in the account's zone; in the future either way. Zero
// with problems in p when it cannot.
func (s *SingleSends) resendAt(ctx context.Context, accountID int64, orig *models.SingleSend, in ResendInput, p core.Problems) (time.Time, error) {
	switch strings.TrimSpace(in.When) {
	case "days":
		days, err := strconv.Atoi(strings.TrimSpace(in.Days))
		if err != nil || days < resendMinDays || days > resendMaxDays {
			p.Add("wait_days", msgResendDays)
			return time.Time{}, nil
		}
		base := orig.SentAt.Time
		if base.IsZero() && orig.CompletedAt != nil {
			base = orig.CompletedAt.Time
		}
		at := base.Add(time.Duration(days) * 24 * time.Hour).UTC().Truncate(time.Second)
		if !at.After(s.now()) {
			p.Add("wait_days", msgResendPast)
			return time.Time{}, nil
		}
		return at, nil
	case "at":
		return s.scheduleAt(ctx, accountID, in.Date, in.Time, p)
	}
	p.Add("wait_days", msgResendWhen)
	return time.Time{}, nil
}

// resendOf is the resend of orig: its design (an A/B test of content's
// winning design), sender, group and exclusions, the new subject, scheduled at at (shown in loc), none of
// its figures, and none of its options that split the audience (A/B
// test, local time): it goes at one time to everyone in it.
func resendOf(orig *models.SingleSend, subject string, at time.Time, loc *time.Location, now models.Timestamp) *models.SingleSend {
	rs := unsent(orig, now)
	id := orig.ID
	rs.ResendOf = &id
	rs.SingleSendName = core.Truncate("Resend: "+orig.SingleSendName, maxSendName)
	rs.Subject = subject
	rs.Status, rs.Armed, rs.ScheduleType = models.SendReady, 1, 1
	sendAfter := models.NewTimestamp(at)
	rs.SendAfter = &sendAfter
	rs.ScheduleDate, rs.ScheduleTime = at.In(loc).Format("2006-01-02"), at.In(loc).Format("15:04:05")
	rs.LocalTime, rs.LocalZoneField = "", ""
	rs.ABSubjects, rs.ABPreheaders, rs.ABShare, rs.ABMetric, rs.ABWait = models.StringArray{}, models.StringArray{}, 0, "", 0
	if w := orig.ABWinner; orig.ABShare > 0 && w >= 1 && w <= len(orig.ABDesigns) && orig.ABDesigns[w-1] != "" {
		// A test of content: the resend has the winner's design.
		html := orig.ABDesigns[w-1]
		rs.TemplateID, rs.TemplateHTML, rs.TemplateJSON = 1, &html, nil
	}
	rs.ABDesigns, rs.ABTimeAfter = models.StringArray{}, 0
	rs.Archive, rs.Waiting = 0, 0
	return &rs
}
