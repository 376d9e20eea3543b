package campaign

import (
	"context"
	"fmt"
	"time"

	"herald/models"
)

// Progress is where a send stands, for the console's progress bar.
type Progress struct {
	Status    models.SendStatus
	Triggered int64 // in the ledger (0 while the audience is resolved)
	Resolved  bool
	Done      int64 // delivered, bounced, blocked or failed
	Delivered int64
	Bounces   int64
	Blocks    int64 // refused by the relay's policy (kept; a resume sends them again)
	Failures  int64 // could not be built
	Retrying  int64 // waiting for a retry after a temporary failure
	Rate      float64
	Remaining time.Duration // estimated; 0 when unknown
	Percent   int
}

// Progress reads a send's progress. rate is messages per second over the
// last minute of deliveries. Errors: ErrNotFound.
func (s *SingleSends) Progress(ctx context.Context, accountID int64, utr string) (*models.SingleSend, *Progress, error) {
	ss, err := s.Get(ctx, accountID, utr)
	if err != nil {
		return nil, nil, fmt.Errorf("single sends: progress: %w", err)
	}
	p := &Progress{Status: ss.Status, Triggered: ss.Triggered, Resolved: ss.Resolved == 1, Delivered: ss.Delivered, Bounces: ss.Bounces,
		Blocks: ss.Blocks, Failures: ss.Failures}
	p.Done = ss.Delivered + ss.Bounces + ss.Blocks + ss.Failures
	if ss.Status == models.SendRunning {
		since := models.NewTimestamp(s.now().Add(-time.Minute))
		var recent int64
		if err := s.db.R.WithContext(ctx).Model(&models.SendMessage{}).Where("send_id = ? AND state = ? AND sent_at >= ?", ss.ID, models.MessageDelivered, since).Count(&recent).Error; err != nil {
			return nil, nil, fmt.Errorf("single sends: recent deliveries of send %d: %w", ss.ID, err)
		}
		if err := s.db.R.WithContext(ctx).Model(&models.SendMessage{}).Where("send_id = ? AND state = ? AND attempts > 0", ss.ID, models.MessageQueued).Count(&p.Retrying).Error; err != nil {
			return nil, nil, fmt.Errorf("single sends: retrying messages of send %d: %w", ss.ID, err)
		}
		window := time.Minute
		if !ss.SentAt.IsZero() {
			if d := time.Since(ss.SentAt.Time); d < window {
				window = d
			}
		}
		if window > time.Second {
			p.Rate = float64(recent) / window.Seconds()
		}
		if p.Rate > 0 && p.Triggered > p.Done {
			p.Remaining = time.Duration(float64(p.Triggered-p.Done) / p.Rate * float64(time.Second))
		}
	}
	if ss.PausedAt != nil {
		p.Rate, p.Remaining = 0, 0 // nothing goes out until it is resumed
	}
	if p.Triggered > 0 {
		p.Percent = int(p.Done * 100 / p.Triggered)
	}
	if ss.Status == models.SendCompleted {
		p.Percent = 100
	}
	return ss, p, nil
}

// Bucket is the opens and clicks of one period.
type Bucket struct {
	At     time.Time
	Opens  int64
	Clicks int64
	// The opens and clicks of the period taken for a person's.
	HumanOpens  int64
	HumanClicks int64
}

// LinkClicks is one tracked link of a send and its clicks.
type LinkClicks struct {
	URL    string
	Clicks int64
	Human  int64 // the clicks taken for a person's
}

// activitySteps are the periods a send's activity is counted in, finest
// first; activityStep picks the first that lays the activity's span out
// in at most maxActivityBuckets periods.
var activitySteps = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}

const maxActivityBuckets = 48

func activityStep(span time.Duration) time.Duration {
	for _, st := range activitySteps {
		if span/st < maxActivityBuckets {
			return st
		}
	}
	return activitySteps[len(activitySteps)-1]
}

// Activity returns a send's opens and clicks over time, in periods chosen
// from the span of the activity (minutes for activity within the hour, up
// to days for weeks of it), and clicks per link.
func (s *SingleSends) Activity(ctx context.Context, ss *models.SingleSend) ([]Bucket, []LinkClicks, error) {
	// Counted by the minute first, then gathered into the period the
	// whole span calls for.
	step := time.Minute
	byAt := map[time.Time]*Bucket{}
	links := make([]LinkClicks, len(ss.Links))
	for i, l := range ss.Links {
		links[i].URL = l
	}
	// Events are read in id batches: a send opened millions of times is
	// read without holding them all.
	var last int64
	for {
		var rows []struct {
			ID    int64
			Kind  int
			Link  int
			At    models.Timestamp
			Raw   int64
			Human int64
			// LinkRaw, LinkHuman: what the row counts for its link.
			LinkRaw, LinkHuman int64
		}
		if err := s.db.R.WithContext(ctx).Table("send_events").Select("id, kind, link, at, raw, human, link_raw, link_human").
			Where("send_id = ? AND id > ?", ss.ID, last).Order("id").Limit(5000).Scan(&rows).Error; err != nil {
			return nil, nil, fmt.Errorf("single sends: activity of send %d: %w", ss.ID, err)
		}
		for _, r := range rows {
			at := r.At.Time.Truncate(step)
			b := byAt[at]
			if b == nil {
				b = &Bucket{At: at}
				byAt[at] = b
			}
			// A row counted in the raw totals, the human ones, or both.
			if r.Kind == 1 {
				b.Opens += r.Raw
				b.HumanOpens += r.Human
			} else {
				b.Clicks += r.Raw
				b.HumanClicks += r.Human
				if r.Link >= 0 && r.Link < len(links) {
					links[r.Link].Clicks += r.LinkRaw
					links[r.Link].Human += r.LinkHuman
				}
			}
		}
		if len(rows) < 5000 {
			break
		}
		last = rows[len(rows)-1].ID
	}
	var out []Bucket
	if len(byAt) > 0 {
		var lo, hi time.Time
		for t := range byAt {
			if lo.IsZero() || t.Before(lo) {
				lo = t
			}
			if t.After(hi) {
				hi = t
			}
		}
		if step = activityStep(hi.Sub(lo)); step > time.Minute {
			wide := make(map[time.Time]*Bucket, len(byAt))
			for t, b := range byAt {
				at := t.Truncate(step)
				w := wide[at]
				if w == nil {
					w = &Bucket{At: at}
					wide[at] = w
				}
				w.Opens += b.Opens
				w.HumanOpens += b.HumanOpens
				w.Clicks += b.Clicks
				w.HumanClicks += b.HumanClicks
			}
			byAt, lo, hi = wide, lo.Truncate(step), hi.Truncate(step)
		}
		// Continuous buckets (empty ones included), at most 500.
		for t := lo; !t.After(hi) && len(out) < 500; t = t.Add(step) {
			if b := byAt[t]; b != nil {
				out = append(out, *b)
			} else {
				out = append(out, Bucket{At: t})
			}
		}
	}
	return out, links, nil
}
