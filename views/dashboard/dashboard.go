// Package dashboard holds the overview page.
package dashboard

import (
	"strconv"
	"time"

	"herald/service"
	"herald/views"
	"herald/views/automations"
	"herald/views/singlesends"
)

// Data is what the overview shows.
type Data struct {
	Name string // who is greeted: the member logged in, or the owner
	// May holds the getting-started steps the person's role may do, by
	// step ID; nil: every step (the owner). A step the role cannot do is
	// not shown: its link would answer 403.
	May map[string]bool
	*service.Overview
	Loc *time.Location // the account's time zone, for the sends' times
	// NewKeys are the API keys made at sign-up, shown on this first
	// screen until the person says they are saved; nil: none.
	NewKeys *NewKeys
}

// NewKeys is the account's API key pair as sign-up made it.
type NewKeys struct {
	PublicKey, SecretKey string
	CSRF                 string
}

// Greeting is the page's title: a welcome on the first screen after
// sign-up, else a hello.
func (d Data) Greeting() string {
	if d.NewKeys != nil {
		return views.T("dashboard.welcome", "Name", d.Name)
	}
	return views.T("dashboard.hello", "Name", d.Name)
}

// Lead is the line under the title.
func (d Data) Lead() string {
	if d.NewKeys != nil {
		return "Your account is ready. Save your API keys, then follow the steps to your first send."
	}
	return "How your mail did over the last 30 days."
}

// Growth is the audience's change over the days, signed ("+12", "−3", "0").
func (d Data) Growth() string {
	g := d.Audience - d.AudienceBefore
	switch {
	case g > 0:
		return "+" + views.Count(g)
	case g < 0:
		return "−" + views.Count(-g)
	}
	return "0"
}

// GrowthRate is the growth as a percentage of the audience the days began
// with ("" when it began empty).
func (d Data) GrowthRate() string {
	if d.AudienceBefore <= 0 {
		return ""
	}
	return singlesends.Rate(d.Audience-d.AudienceBefore, d.AudienceBefore)
}

// GrowthText says the audience's size and change in words.
func (d Data) GrowthText() string {
	added, removed := views.Count(d.Total.ContactsAdded), views.Count(d.Total.ContactsRemoved)
	if r := d.GrowthRate(); r != "" {
		return views.N("dashboard.growth_rate", d.Audience, "Growth", d.Growth(), "Rate", r, "Added", added, "Removed", removed)
	}
	return views.N("dashboard.growth", d.Audience, "Growth", d.Growth(), "Added", added, "Removed", removed)
}

// Level is how a rate stands against its thresholds: ok, warn or danger.
type Level string

const (
	LevelOK     Level = "ok"
	LevelWarn   Level = "warn"
	LevelDanger Level = "danger"
)

func level(rate, warn, limit float64) Level {
	switch {
	case rate >= limit:
		return LevelDanger
	case rate > warn:
		return LevelWarn
	}
	return LevelOK
}

// BounceLevel is the hard-bounce rate of the days against 1 % and 2 %.
func (d Data) BounceLevel() Level {
	return level(d.BounceRate(), service.BounceRateWarn, service.BounceRateLimit)
}

// ComplaintLevel is the complaint rate of the days against Gmail's and
// Yahoo's 0.1 % and 0.3 %.
func (d Data) ComplaintLevel() Level {
	return level(d.ComplaintRate(), service.ComplaintRateWarn, service.ComplaintRateLimit)
}

// Pct writes a rate (a fraction) as a percentage.
func Pct(r float64) string { return views.Pct(r * 100) }

// Step is one getting-started step.
type Step struct {
	ID, Title, Text, Href, Link string
	Done                        bool
}

// Steps are the getting-started steps, each ticked when the account did it.
func (d Data) Steps() []Step {
	s := d.Setup
	sender := Step{ID: "step-sender", Title: "Add and verify a sender.", Href: "/senders", Link: "Add a sender",
		Text: "Mail goes out from a sender address you own; a link mailed to it proves it is yours.", Done: s.SenderVerified}
	if s.Sender && !s.SenderVerified {
		sender.Text, sender.Link = "Your sender waits for verification: open the link mailed to its address.", "See senders"
	}
	all := []Step{
		sender,
		{ID: "step-contacts", Title: "Bring your audience.", Href: "/contacts/import", Link: "Import contacts",
			Text: "Create a contact type, then import a CSV file of contacts or add them one by one.", Done: s.Contacts},
		{ID: "step-group", Title: "Create an unsubscribe group.", Href: "/suppressions/groups", Link: "Create a group",
			Text: "Every mail names one, so people can leave one kind of mail and keep the rest.", Done: s.Group},
		{ID: "step-send", Title: "Send your first mail.", Href: "/single-sends", Link: "Create a single send",
			Text: "Choose a design, a sender and an audience; send now or at a time you choose.", Done: s.Sent},
		{ID: "step-notifications", Title: "Say who hears about sends.", Href: "/notifications", Link: "Add recipients",
			Text: "Notification recipients get the summary of each send and the alerts.", Done: s.Notifications},
	}
	if d.May == nil {
		return all
	}
	var out []Step
	for _, st := range all {
		if d.May[st.ID] {
			out = append(out, st)
		}
	}
	return out
}

// StepsDone is how many steps are ticked.
func (d Data) StepsDone() int {
	n := 0
	for _, s := range d.Steps() {
		if s.Done {
			n++
		}
	}
	return n
}

// SendURL is where a recent send's figures are: a single send's page, or
// its automation's for an automation's email.
func SendURL(r service.RecentSend) string {
	if r.Automation {
		return automations.AutomationURL(r.AutomationUtr)
	}
	return singlesends.SendURL(r.Utr)
}

// When is a send's time in the account's zone.
func (d Data) When(t time.Time) string { return singlesends.When(t, d.Loc) }

// ABNote says where a send's A/B test stands instead of a delivered rate
// that would read as a send stuck at its test share.
func (d Data) ABNote(r service.RecentSend) string {
	s := "A/B test: " + strconv.Itoa(r.ABShare) + " % sent"
	if !r.ABDecideAt.IsZero() {
		s += ", winner at " + d.When(r.ABDecideAt)
	}
	return s
}

// ---- charts ----

// The day charts' geometry, in the units of their viewBox.
const (
	chartW      = 640
	chartH      = 220
	chartLeft   = 48
	chartRight  = 12
	chartTop    = 12
	chartBottom = 30
)

// ChartViewBox is the day charts' viewBox.
const ChartViewBox = "0 0 640 220"

// Series is one line (or the bars) of a day chart.
type Series struct {
	Name   string // its legend's class (legend-Name) and the bars' unit
	Label  string // the legend's words, when not Name
	Class  string
	Values []int64
}

// LegendText is what the legend says of the series.
func (s Series) LegendText() string {
	if s.Label != "" {
		return s.Label
	}
	return s.Name
}

// DayChart is figures per day laid out for an inline SVG.
type DayChart struct {
	ID      string
	Bars    []Bar  // the first series, as bars, when Barred
	Lines   []Line // the other series
	YTicks  []Tick
	XTicks  []Tick
	Legend  []Series
	Summary string
	Empty   bool
	AxisY   string
}

// Bar is one day's bar.
type Bar struct{ X, Y, W, H, Title string }

// Line is one series as a polyline.
type Line struct{ Class, Points string }

// Tick is a labelled position on an axis.
type Tick struct{ Pos, Label, Anchor string }

// Plot edges, for the axes.
var (
	PlotLeft   = views.Coord(chartLeft)
	PlotRight  = views.Coord(chartW - chartRight)
	PlotBottom = views.Coord(chartH - chartBottom)
)

// NewDayChart lays out series over days (UTC day starts): when barred the
// first series is drawn as bars, the others as lines, all on one scale.
func NewDayChart(id string, days []time.Time, barred bool, summary string, series ...Series) DayChart {
	c := DayChart{ID: id, Legend: series, Summary: summary, AxisY: views.Coord(chartH - chartBottom)}
	var top int64
	for _, s := range series {
		for _, v := range s.Values {
			top = max(top, v)
		}
	}
	if len(days) == 0 {
		c.Empty = true
		return c
	}
	step := views.NiceStep(top)
	yMax := step * ((top + step - 1) / step)
	if yMax == 0 {
		yMax = step
	}
	plotW := float64(chartW - chartLeft - chartRight)
	plotH := float64(chartH - chartTop - chartBottom)
	slot := plotW / float64(len(days))
	x := func(i int) float64 { return chartLeft + slot*(float64(i)+0.5) }
	y := func(v int64) float64 { return chartTop + plotH - plotH*float64(v)/float64(yMax) }
	lines := series
	if barred && len(series) > 0 {
		lines = series[1:]
		for i, v := range series[0].Values {
			h := plotH * float64(v) / float64(yMax)
			c.Bars = append(c.Bars, Bar{X: views.Coord(x(i) - slot*0.35), Y: views.Coord(y(v)), W: views.Coord(slot * 0.7), H: views.Coord(h),
				Title: days[i].Format("Jan 2") + ": " + strconv.FormatInt(v, 10) + " " + series[0].Name})
		}
	}
	for _, s := range lines {
		var b []byte
		for i, v := range s.Values {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, views.Coord(x(i))+","+views.Coord(y(v))...)
		}
		c.Lines = append(c.Lines, Line{Class: s.Class, Points: string(b)})
	}
	for v := int64(0); v <= yMax; v += step {
		c.YTicks = append(c.YTicks, Tick{Pos: views.Coord(y(v)), Label: views.Count(v)})
	}
	// A label every week, the last day included.
	for i := len(days) - 1; i >= 0; i -= 7 {
		anchor := "middle"
		if i == len(days)-1 {
			anchor = "end"
		}
		c.XTicks = append(c.XTicks, Tick{Pos: views.Coord(x(i)), Label: days[i].Format("Jan 2"), Anchor: anchor})
	}
	return c
}

// SentChart is mail sent (bars) with unique human opens and clicks
// (lines) per day: what people did, proxies and scanners left out; its
// summary gives the raw counts too.
func (d Data) SentChart() DayChart {
	days := make([]time.Time, len(d.Days))
	sent, opens, clicks := make([]int64, len(d.Days)), make([]int64, len(d.Days)), make([]int64, len(d.Days))
	for i, x := range d.Days {
		days[i], sent[i], opens[i], clicks[i] = x.Day, x.Sent, x.HumanOpens, x.HumanClicks
	}
	t := d.Total
	// One sentence of five counts: each count's words are a plural message
	// of their own, placed into the sentence's placeholders.
	summary := views.T("dashboard.sent_summary", "Days", strconv.Itoa(len(days)),
		"Sent", views.N("dashboard.sent_messages", t.Sent),
		"HumanOpens", views.N("dashboard.human_opens_count", t.HumanOpens),
		"HumanClicks", views.N("dashboard.human_clicks_count", t.HumanClicks),
		"Opens", views.N("dashboard.opens_count", t.Opens),
		"Clicks", views.N("dashboard.clicks_count", t.Clicks))
	return NewDayChart("chart-sent", days, true, summary,
		Series{Name: "sent", Class: "chart-sent", Values: sent},
		Series{Name: "opens", Label: "human opens", Class: "chart-opens", Values: opens},
		Series{Name: "clicks", Label: "human clicks", Class: "chart-clicks", Values: clicks})
}

// RawNote says a raw count and rate beside a human one: "raw 66.7%".
func RawNote(n, of int64) string { return "raw " + singlesends.Rate(n, of) }

// AudienceChart is the audience's size at the end of each day.
func (d Data) AudienceChart() DayChart {
	days := make([]time.Time, len(d.Days))
	size := make([]int64, len(d.Days))
	n := d.AudienceBefore
	for i, x := range d.Days {
		n += x.ContactsAdded - x.ContactsRemoved
		days[i], size[i] = x.Day, n
	}
	summary := "Audience: " + views.Count(d.AudienceBefore) + " contacts " + strconv.Itoa(len(days)) + " days ago, " +
		views.Count(d.Audience) + " today."
	return NewDayChart("chart-audience", days, false, summary, Series{Name: "contacts", Class: "chart-audience", Values: size})
}
