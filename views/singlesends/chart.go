package singlesends

import (
	"strconv"
	"strings"
	"time"

	"herald/views"
)

// Chart is the opens and clicks of a send over time, laid out for an
// inline SVG: the server draws it, no script does.
type Chart struct {
	Opens  string // polyline points
	Clicks string
	// People's opens and clicks (delivery.MachineRules), drawn dashed
	// under the raw lines.
	HumanOpens, HumanClicks string
	OpenDots                []Dot
	ClickDots               []Dot
	YTicks                  []Tick
	XTicks                  []Tick
	Summary                 string // what the chart shows, for screen readers
	Empty                   bool
	// Bars replace the lines when there are few points: two dots joined
	// across the width read as a trend that was not there.
	Bars []Bar
}

// Bar is one period's opens or clicks: the raw count, and inside it the
// part by people.
type Bar struct {
	Class          string // chart-opens or chart-clicks
	X, Y, W, H     string
	HumanY, HumanH string
	Title          string
}

// Dot is one point of a line with its tooltip.
type Dot struct {
	X, Y  string
	Title string
}

// Tick is a labelled position on an axis.
type Tick struct {
	Pos    string
	Label  string
	Anchor string // text-anchor of an x label: start, middle or end
}

// The chart's geometry, in the units of its viewBox.
const (
	chartW      = 640
	chartH      = 240
	chartLeft   = 44
	chartRight  = 12
	chartTop    = 12
	chartBottom = 30
	maxDots     = 60 // more points than this draw lines only
	maxBars     = 12 // up to this many points draw bars
	maxXTicks   = 6
)

// ChartViewBox is the SVG's viewBox.
const ChartViewBox = "0 0 640 240"

// Plot area corners, for the axes.
var (
	plotLeft   = views.Coord(chartLeft)
	plotRight  = views.Coord(chartW - chartRight)
	plotBottom = views.Coord(chartH - chartBottom)
)

// NewChart lays points out; times are labelled in loc.
func NewChart(points []Point, loc *time.Location) Chart {
	if loc == nil {
		loc = time.UTC
	}
	var c Chart
	var top, opens, clicks, humanOpens, humanClicks int64
	for _, p := range points {
		top = max(top, p.Opens, p.Clicks)
		opens += p.Opens
		clicks += p.Clicks
		humanOpens += p.HumanOpens
		humanClicks += p.HumanClicks
	}
	if len(points) == 0 {
		c.Empty = true
		c.Summary = "No opens or clicks yet."
		return c
	}
	step := views.NiceStep(top)
	yMax := step * ((top + step - 1) / step)
	if yMax == 0 {
		yMax = step
	}
	plotW := float64(chartW - chartLeft - chartRight)
	plotH := float64(chartH - chartTop - chartBottom)
	bars := len(points) <= maxBars
	x := func(i int) float64 {
		switch {
		case bars:
			return chartLeft + plotW*(float64(i)+0.5)/float64(len(points))
		case len(points) == 1:
			return chartLeft + plotW/2
		}
		return chartLeft + plotW*float64(i)/float64(len(points)-1)
	}
	y := func(v int64) float64 { return chartTop + plotH - plotH*float64(v)/float64(yMax) }

	var op, cl, hop, hcl strings.Builder
	span := points[len(points)-1].At.Sub(points[0].At)
	layout := "15:04"
	if span >= 24*time.Hour || points[0].At.In(loc).YearDay() != points[len(points)-1].At.In(loc).YearDay() {
		layout = "Jan 2 15:04"
	}
	for i, p := range points {
		xs := views.Coord(x(i))
		op.WriteString(xs + "," + views.Coord(y(p.Opens)) + " ")
		cl.WriteString(xs + "," + views.Coord(y(p.Clicks)) + " ")
		hop.WriteString(xs + "," + views.Coord(y(p.HumanOpens)) + " ")
		hcl.WriteString(xs + "," + views.Coord(y(p.HumanClicks)) + " ")
		if bars {
			slot := plotW / float64(len(points))
			w := min(slot*0.35, 40)
			at := p.At.In(loc).Format(layout)
			for k, v := range []struct {
				class      string
				raw, human int64
				words      string // the plural message of the raw count
			}{{"chart-opens", p.Opens, p.HumanOpens, "chart.opens"}, {"chart-clicks", p.Clicks, p.HumanClicks, "chart.clicks"}} {
				left := x(i) - w + float64(k)*w
				c.Bars = append(c.Bars, Bar{Class: v.class, X: views.Coord(left), W: views.Coord(w * 0.92),
					Y: views.Coord(y(v.raw)), H: views.Coord(y(0) - y(v.raw)),
					HumanY: views.Coord(y(v.human)), HumanH: views.Coord(y(0) - y(v.human)),
					Title: views.T("chart.bar_title", "At", at, "Raw", countOf(v.words, v.raw), "Human", strconv.FormatInt(v.human, 10))})
			}
			continue
		}
		if len(points) <= maxDots {
			at := p.At.In(loc).Format(layout)
			c.OpenDots = append(c.OpenDots, Dot{X: xs, Y: views.Coord(y(p.Opens)), Title: views.T("chart.dot_title", "At", at, "Value", countOf("chart.opens", p.Opens))})
			c.ClickDots = append(c.ClickDots, Dot{X: xs, Y: views.Coord(y(p.Clicks)), Title: views.T("chart.dot_title", "At", at, "Value", countOf("chart.clicks", p.Clicks))})
		}
	}
	c.Opens, c.Clicks = strings.TrimSpace(op.String()), strings.TrimSpace(cl.String())
	c.HumanOpens, c.HumanClicks = strings.TrimSpace(hop.String()), strings.TrimSpace(hcl.String())
	for v := int64(0); v <= yMax; v += step {
		c.YTicks = append(c.YTicks, Tick{Pos: views.Coord(y(v)), Label: strconv.FormatInt(v, 10)})
	}
	n := min(len(points), maxXTicks)
	for k := range n {
		i := 0
		if n > 1 {
			i = k * (len(points) - 1) / (n - 1)
		}
		anchor := "middle"
		switch {
		case bars:
		case n > 1 && k == 0:
			anchor = "start"
		case n > 1 && k == n-1:
			anchor = "end"
		}
		c.XTicks = append(c.XTicks, Tick{Pos: views.Coord(x(i)), Label: points[i].At.In(loc).Format(layout), Anchor: anchor})
	}
	c.Summary = views.T("chart.summary",
		"From", points[0].At.In(loc).Format(layout), "To", points[len(points)-1].At.In(loc).Format(layout),
		"Opens", countOf("chart.opens", opens), "Clicks", countOf("chart.clicks", clicks),
		"HumanOpens", countOf("chart.opens", humanOpens), "HumanClicks", countOf("chart.clicks", humanClicks))
	return c
}

// countOf is the plural message id for n, the number written plainly
// (the chart's ticks carry no thousands separators either).
func countOf(id string, n int64) string { return views.N(id, n, "N", strconv.FormatInt(n, 10)) }
