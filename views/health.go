package views

import (
	"strconv"

	"herald/service"
)

// Health is a send's bounce and complaint rates beside the thresholds
// mailbox providers hold senders to, laid out as bars for an inline SVG.
type Health struct {
	Bars    []HealthBar
	Summary string // what the chart shows, for screen readers
}

// HealthBar is one rate: its bar and the thresholds marked across it.
type HealthBar struct {
	ID, Label string
	Rate      float64 // percent of delivered
	Text      string  // the rate as shown
	Width     string  // the bar's width in the viewBox
	Y         string  // the bar's top
	LabelY    string
	Over      bool // past the first threshold
	Marks     []HealthMark
}

// HealthMark is one threshold across a bar.
type HealthMark struct {
	X, Y1, Y2, TextY string
	Label            string
}

// The thresholds (percent of delivered) are the service's, the ones the
// dashboard's levels and the pre-send checklist use: hard bounces are kept
// under 1 % and 2 % is the limit; Gmail and Yahoo ask bulk senders to keep
// complaints under 0.1 % and act at 0.3 % (their February 2024 sender
// requirements).
var (
	bounceMarks    = []threshold{{100 * service.BounceRateWarn, limitPct(100*service.BounceRateWarn) + " keep under"}, {100 * service.BounceRateLimit, limitPct(100*service.BounceRateLimit) + " limit"}}
	complaintMarks = []threshold{{100 * service.ComplaintRateWarn, limitPct(100*service.ComplaintRateWarn) + " asked"}, {100 * service.ComplaintRateLimit, limitPct(100*service.ComplaintRateLimit) + " limit"}}
)

// HealthWords says the thresholds in the providers' words, the same on
// every page that shows the rates.
var HealthWords = "Keep hard bounces under " + limitPct(100*service.BounceRateWarn) + " (" + limitPct(100*service.BounceRateLimit) +
	" is the limit) and spam complaints under " + limitPct(100*service.ComplaintRateWarn) + ", as Gmail and Yahoo ask (they act at " + limitPct(100*service.ComplaintRateLimit) + ")."

type threshold struct {
	at    float64
	label string
}

// The health chart's geometry (viewBox units).
const (
	healthW     = 640
	healthLeft  = 150
	healthRight = 20
	healthBarH  = 22
	healthRowH  = 70
	healthTop   = 26
)

// HealthViewBox is the health chart's viewBox.
const HealthViewBox = "0 0 640 150"

// HealthPlotLeft is where bars start.
var HealthPlotLeft = healthNum(healthLeft)

// NewHealth lays out hard-bounce and complaint rates of delivered
// messages (a send's, or an account's over a period).
func NewHealth(bounces, complaints, delivered int64) Health {
	rate := func(n int64) float64 {
		if delivered <= 0 {
			return 0
		}
		return float64(n) * 100 / float64(delivered)
	}
	h := Health{Bars: []HealthBar{
		healthBar(0, "health-bounces", "Hard bounces", rate(bounces), bounceMarks),
		healthBar(1, "health-complaints", "Spam complaints", rate(complaints), complaintMarks),
	}}
	h.Summary = "Hard-bounce rate " + h.Bars[0].Text + " of delivered; spam complaint rate " + h.Bars[1].Text + " of delivered. " + HealthWords
	return h
}

func healthBar(i int, id, label string, rate float64, marks []threshold) HealthBar {
	// The scale: the last threshold at 80 % of the width, or the rate if it
	// is beyond.
	top := marks[len(marks)-1].at / 0.8
	if rate > top {
		top = rate
	}
	plot := float64(healthW - healthLeft - healthRight)
	x := func(v float64) string { return healthNum(healthLeft + plot*v/top) }
	y := healthTop + i*healthRowH
	b := HealthBar{
		ID: id, Label: label, Rate: rate, Text: Pct(rate),
		Width: healthNum(plot * rate / top), Y: healthNum(float64(y)), LabelY: healthNum(float64(y) + healthBarH/2),
		Over: rate > marks[0].at,
	}
	for _, m := range marks {
		b.Marks = append(b.Marks, HealthMark{X: x(m.at), Y1: healthNum(float64(y - 6)), Y2: healthNum(float64(y + healthBarH + 6)),
			TextY: healthNum(float64(y + healthBarH + 20)), Label: m.label})
	}
	return b
}

// Pct formats a small percentage: two decimals below 1 %, one above.
func Pct(v float64) string {
	if v < 1 {
		return strconv.FormatFloat(v, 'f', 2, 64) + " %"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " %"
}

func healthNum(f float64) string {
	return strconv.FormatFloat(float64(int64(f*10+0.5))/10, 'f', -1, 64)
}

// limitPct writes a threshold as people say it: "1 %", "0.3 %".
func limitPct(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + " %" }
