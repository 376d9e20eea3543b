// Package warmup is the console's Warm-up page under Senders: each
// sending domain's plan as a chart of planned cap against sent per day,
// today's remaining, and the forms that start and end a plan.
package warmup

import (
	"fmt"
	"time"

	"herald/service"
	"herald/views"
	"herald/views/dashboard"
)

// URL is the page; StartURL and EndURL take its forms.
const (
	URL      = "/senders/warmup"
	StartURL = "/senders/warmup"
	EndURL   = "/senders/warmup/end"
)

// Page is the account's plans and the start form.
type Page struct {
	CSRF    string
	Plans   []Plan
	Domains []string // the account's sender domains
	Form    Form
}

// Plan is one plan with its days.
type Plan struct {
	service.WarmupPlan
	Days []service.WarmupDay
}

// Form is the start form's values and problems.
type Form struct {
	Domain, Start, Growth, Until string
	Errors                       map[string][]string
}

// DomainOptions are the select's choices.
func (p Page) DomainOptions() []views.Option {
	out := make([]views.Option, len(p.Domains))
	for i, d := range p.Domains {
		out[i] = views.Option{Value: d, Label: d}
	}
	return out
}

// Summary says where the plan stands today, as one sentence.
func (p Plan) Summary() string {
	if p.Done {
		return fmt.Sprintf("The plan ended after day %d (%s): the domain has no cap.", p.WarmupPlan.Days, p.EndsOn)
	}
	return fmt.Sprintf("Day %d of %d: today's cap is %s, %s sent, %s left.", p.Day, p.WarmupPlan.Days,
		views.Count(p.TodayCap), views.Count(p.TodaySent), views.Count(p.TodayLeft))
}

// Terms says the plan's numbers, as one sentence.
func (p Plan) Terms() string {
	return fmt.Sprintf("From %s, %s messages on day 1, times %g each day, until %s a day (%s).", p.StartedOn,
		views.Count(p.Start), p.Growth, views.Count(p.Until), p.EndsOn)
}

// EndConfirm asks before ending the plan.
func (p Plan) EndConfirm() string {
	return fmt.Sprintf("End the warm-up plan of %s? Its waiting mail goes at once.", p.Domain)
}

// Chart is the planned cap (a line) against sent (bars) per day, in the
// dashboard's chart style.
func (p Plan) Chart(i int) dashboard.DayChart {
	days := make([]time.Time, len(p.Days))
	sent, planned := make([]int64, len(p.Days)), make([]int64, len(p.Days))
	for i, d := range p.Days {
		days[i], sent[i], planned[i] = d.Date, d.Sent, d.Cap
	}
	summary := fmt.Sprintf("Warm-up of %s over %d days: the planned cap grows from %s to %s a day. %s", p.Domain, len(days),
		views.Count(p.Start), views.Count(p.Until), p.Summary())
	return dashboard.NewDayChart(fmt.Sprintf("chart-warmup-%d", i), days, true, summary,
		dashboard.Series{Name: "sent", Class: "chart-sent", Values: sent},
		dashboard.Series{Name: "cap", Label: "planned cap", Class: "chart-cap", Values: planned})
}
