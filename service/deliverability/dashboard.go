package deliverability

import (
	"context"
	"fmt"
	"time"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// Dashboard reads an account's overview: its figures per day
// (account_daily, daily.go), its last sends and the steps of setting up
// the account. Every read is a few rows through an index: nothing scans
// the contacts or the ledger, so it costs the same on an account of a
// million contacts as on an empty one.
type Dashboard struct {
	db  *core.DB
	now func() time.Time
}

// DashboardDays is how many days the overview covers.
const DashboardDays = 30

// Gmail's and Yahoo's bulk-sender limits (2024): spam complaints under
// 0.3 % (keep them under 0.1 %); bounces, by common practice, under 2 %.
const (
	ComplaintRateLimit = 0.003
	ComplaintRateWarn  = 0.001
	BounceRateLimit    = 0.02
	BounceRateWarn     = 0.01
)

// Day is an account's figures of one UTC day.
type Day struct {
	Day             time.Time // its start, UTC
	Sent            int64
	Delivered       int64
	Bounces         int64
	Opens           int64 // messages first opened that day (raw: proxies and scanners included)
	Clicks          int64 // messages first clicked that day (raw)
	HumanOpens      int64 // messages first opened by a person that day (docs/MACHINE_ACTIVITY.md)
	HumanClicks     int64 // messages first clicked by a person that day
	Unsubscribes    int64
	Complaints      int64
	ContactsAdded   int64
	ContactsRemoved int64
}

// RecentSend is one of the last sends (a single send or an automation's
// email) with its counters.
type RecentSend struct {
	Utr           string
	Name          string
	Automation    bool
	AutomationUtr string // the automation of an automation's email (its page shows the email's figures)
	Status        models.SendStatus
	SentAt        time.Time
	Triggered     int64
	Delivered     int64
	UniqueOpens   int64 // raw, as the spec counts them
	UniqueClicks  int64
	HumanOpens    int64 // unique opens by people (human_unique_opens)
	HumanClicks   int64 // unique clicks by people (human_unique_clicks)
	Bounces       int64
	Unsubscribes  int64
	SpamReports   int64
	// An A/B test still trying its variants: ABShare per cent of the
	// recipients are sent to, the rest wait for the winner at ABDecideAt.
	ABTesting  bool
	ABShare    int
	ABDecideAt time.Time
}

// Setup is what the account has done of the getting-started steps.
type Setup struct {
	Sender         bool // a sender exists
	SenderVerified bool // a sender is verified
	Contacts       bool
	Group          bool // an unsubscribe group
	Sent           bool // a single send started or scheduled
	Notifications  bool // a notification recipient
}

// Overview is the dashboard's data.
type Overview struct {
	Days              []Day // DashboardDays days, oldest first, today last (empty days included)
	Total             Day   // the sum of Days
	Audience          int64 // live contacts now
	AudienceBefore    int64 // live contacts when Days began
	Recent            []RecentSend
	UnverifiedSenders int64
	Setup             Setup
}

// BounceRate is hard bounces per message sent over the days.
func (o *Overview) BounceRate() float64 { return ratio(o.Total.Bounces, o.Total.Sent) }

// ComplaintRate is spam complaints per message delivered over the days.
func (o *Overview) ComplaintRate() float64 { return ratio(o.Total.Complaints, o.Total.Delivered) }

func ratio(n, of int64) float64 {
	if of <= 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// recentSends is how many of the last sends the overview lists.
const recentSends = 6

// Overview reads the account's dashboard: the last DashboardDays days of
// figures (at most that many rows of account_daily, by its primary key),
// the audience (the sum of every day's added and removed contacts: one
// row per day of the account's life), the last sends (single_sends_user,
// newest first) and the setup steps (one indexed existence read each,
// contacts from the audience).
func (s *Dashboard) Overview(ctx context.Context, accountID int64) (*Overview, error) {
	r := s.db.R.WithContext(ctx)
	today := record.DayOf(s.now())
	first := today - DashboardDays + 1
	o := &Overview{Days: make([]Day, DashboardDays)}
	for i := range o.Days {
		o.Days[i].Day = record.DayTime(first + int64(i))
	}
	var rows []struct {
		Day                                                   int64
		Sent, Delivered, Bounces, Opens, Clicks, Unsubscribes int64
		HumanOpens, HumanClicks                               int64
		Complaints, ContactsAdded, ContactsRemoved            int64
	}
	if err := r.Table("account_daily").Where("user_id = ? AND day BETWEEN ? AND ?", accountID, first, today).
		Order("day").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("dashboard: daily figures of account %d: %w", accountID, err)
	}
	for _, x := range rows {
		d := &o.Days[x.Day-first]
		d.Sent, d.Delivered, d.Bounces, d.Opens, d.Clicks = x.Sent, x.Delivered, x.Bounces, x.Opens, x.Clicks
		d.HumanOpens, d.HumanClicks = x.HumanOpens, x.HumanClicks
		d.Unsubscribes, d.Complaints, d.ContactsAdded, d.ContactsRemoved = x.Unsubscribes, x.Complaints, x.ContactsAdded, x.ContactsRemoved
		t := &o.Total
		t.Sent += x.Sent
		t.Delivered += x.Delivered
		t.Bounces += x.Bounces
		t.Opens += x.Opens
		t.Clicks += x.Clicks
		t.HumanOpens += x.HumanOpens
		t.HumanClicks += x.HumanClicks
		t.Unsubscribes += x.Unsubscribes
		t.Complaints += x.Complaints
		t.ContactsAdded += x.ContactsAdded
		t.ContactsRemoved += x.ContactsRemoved
	}
	if err := r.Table("account_daily").Select("COALESCE(SUM(contacts_added - contacts_removed), 0)").
		Where("user_id = ?", accountID).Scan(&o.Audience).Error; err != nil {
		return nil, fmt.Errorf("dashboard: audience of account %d: %w", accountID, err)
	}
	o.AudienceBefore = o.Audience - (o.Total.ContactsAdded - o.Total.ContactsRemoved)

	var sends []models.SingleSend
	if err := r.Select("utr", "single_send_name", "automation_id", "status", "sent_at", "triggered", "delivered", "unique_opens",
		"unique_clicks", "human_unique_opens", "human_unique_clicks", "bounces", "unsubscribes", "spam_reports",
		"ab_subjects", "ab_share", "ab_decide_at", "ab_released").
		Where("user_id = ? AND deleted_at IS NULL AND sent_at IS NOT NULL AND message = 0", accountID).
		Order("id DESC").Limit(recentSends).Find(&sends).Error; err != nil {
		return nil, fmt.Errorf("dashboard: recent sends of account %d: %w", accountID, err)
	}
	for _, ss := range sends {
		rs := RecentSend{Utr: ss.Utr, Name: ss.SingleSendName, Automation: ss.AutomationID != nil, Status: ss.Status,
			Triggered: ss.Triggered, Delivered: ss.Delivered, UniqueOpens: ss.UniqueOpens, UniqueClicks: ss.UniqueClicks,
			HumanOpens: ss.HumanUniqueOpens, HumanClicks: ss.HumanUniqueClicks, Bounces: ss.Bounces, Unsubscribes: ss.Unsubscribes, SpamReports: ss.SpamReports}
		if !ss.SentAt.IsZero() {
			rs.SentAt = ss.SentAt.Time
		}
		// A send-time test holds nothing back: its delivered rate reads true.
		if len(ss.ABSubjects) > 1 && ss.ABReleased == 0 && ss.ABTimeAfter == 0 && ss.Status != models.SendCompleted {
			rs.ABTesting, rs.ABShare = true, ss.ABShare
			if ss.ABDecideAt > 0 {
				rs.ABDecideAt = time.UnixMilli(ss.ABDecideAt)
			}
		}
		o.Recent = append(o.Recent, rs)
	}
	var autoIDs []int64
	for _, ss := range sends {
		if ss.AutomationID != nil {
			autoIDs = append(autoIDs, *ss.AutomationID)
		}
	}
	if len(autoIDs) > 0 {
		var autos []struct {
			ID  int64
			Utr string
		}
		if err := r.Table("automations").Select("id, utr").Where("user_id = ? AND id IN ?", accountID, autoIDs).Scan(&autos).Error; err != nil {
			return nil, fmt.Errorf("dashboard: automations of account %d: %w", accountID, err)
		}
		utrs := map[int64]string{}
		for _, a := range autos {
			utrs[a.ID] = a.Utr
		}
		for i, ss := range sends {
			if ss.AutomationID != nil {
				o.Recent[i].AutomationUtr = utrs[*ss.AutomationID]
			}
		}
	}

	if err := r.Model(&models.Sender{}).Where("user_id = ? AND deleted_at IS NULL AND is_verified = 0", accountID).
		Count(&o.UnverifiedSenders).Error; err != nil {
		return nil, fmt.Errorf("dashboard: unverified senders of account %d: %w", accountID, err)
	}
	st := &o.Setup
	// Contacts from the figures, not the contacts table: on PostgreSQL a
	// "LIMIT 1" existence read there, planned on statistics that lag an
	// import, took 170 ms on a million contacts (a bitmap of every entry
	// of two indexes); the figures' sum is read already.
	st.Contacts = o.Audience > 0
	// A mail that went out (a single send or an automation's email) is a
	// first send; so is a single send started or scheduled.
	st.Sent = len(o.Recent) > 0
	for _, q := range []struct {
		to    *bool
		table string
		where string
	}{
		{&st.Sender, "senders", "user_id = ? AND deleted_at IS NULL"},
		{&st.SenderVerified, "senders", "user_id = ? AND deleted_at IS NULL AND is_verified = 1"},
		{&st.Group, "unsubscribe_groups", "user_id = ?"},
		{&st.Sent, "single_sends", "user_id = ? AND automation_id IS NULL AND message = 0 AND status <> 0 AND deleted_at IS NULL"},
		{&st.Notifications, "notification_recipients", "user_id = ?"},
	} {
		if *q.to {
			continue
		}
		var one []int
		if err := r.Table(q.table).Select("1").Where(q.where, accountID).Limit(1).Scan(&one).Error; err != nil {
			return nil, fmt.Errorf("dashboard: setup of account %d (%s): %w", accountID, q.table, err)
		}
		*q.to = len(one) > 0
	}
	return o, nil
}
