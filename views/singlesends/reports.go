package singlesends

import (
	"html"
	"net/url"
	"strconv"
	"time"

	"herald/models"
	"herald/views"
)

// CompareURL is the page that sets completed sends side by side
// (?utr=…&utr=…).
const CompareURL = ListURL + "/compare"

// CompareWith is the compare page with the send utr chosen.
func CompareWith(utr string) string { return CompareURL + "?utr=" + url.QueryEscape(utr) }

// ClickMapURL is the page of a send's design with each link's clicks.
func ClickMapURL(utr string) string { return SendURL(utr) + "/click-map" }

// ClassRow is one mail client, device or country of a report.
type ClassRow struct {
	Label           string
	Opened, Clicked int64
}

// Reach is who opened and clicked a completed send, where and on what:
// people's first opens and clicks by class, machines apart.
type Reach struct {
	Clients, Devices, Countries []ClassRow
	PeopleOpened, PeopleClicked int64 // the sums of each table
	Machines                    []ClassRow
	MachineOpens, MachineClicks int64
	CountriesKnown              bool
}

// Share is n as a percentage of all (one decimal), "–" when all is 0.
func Share(n, all int64) string { return Rate(n, all) }

// ClickMap is a send's design with each link's clicks by people drawn
// where the link is.
type ClickMap struct {
	Send  models.SingleSend
	HTML  string // the design, marked
	Links []LinkRow
}

// LinkBadge is the mark drawn at the start of link i in the click map:
// its number and its clicks by people, in inline style (the design's
// frame has no stylesheet of ours).
func LinkBadge(i int, human int64) string {
	label := views.N("clickmap.badge", human, "Link", i+1)
	return `<span style="display:inline-block;margin:0 4px 2px 0;padding:1px 7px;border-radius:10px;background:#8a1538;color:#fff;` +
		`font:700 12px/1.5 system-ui,sans-serif;text-decoration:none;vertical-align:middle;white-space:nowrap" data-link="` +
		strconv.Itoa(i) + `">` + html.EscapeString(label) + `</span>`
}

// Compare is the compare page: the account's completed sends to choose
// from, and the chosen ones side by side.
type Compare struct {
	Choices []models.SingleSend
	Chosen  []string // utrs
	Rows    []CompareRow
	Chart   CompareChart
	Error   string // why the choice cannot be compared
	Max     int
	Loc     *time.Location
}

// CompareRow is one send's figures by people.
type CompareRow struct {
	Send                                       models.SingleSend
	Delivered, Opened, Clicked, Unsub, Bounced string // rates
	Series                                     int    // 1..4: its line in the chart
}

// Chosen reports whether utr is among the chosen sends.
func (c Compare) IsChosen(utr string) bool {
	for _, u := range c.Chosen {
		if u == utr {
			return true
		}
	}
	return false
}

// CompareChart is the share of delivered messages opened by people within
// each hour (or day) of delivery, one line per send.
type CompareChart struct {
	Lines   []CompareLine
	YTicks  []Tick
	XTicks  []Tick
	Summary string
	Empty   bool
}

// CompareLine is one send's curve.
type CompareLine struct {
	Name   string
	Series int
	Points string // SVG polyline points
}

// NewCompareChart lays out the curves: opened[s][h] is send s's messages
// opened by people within h+1 hours of delivery, of delivered[s]. The
// span is the first two days, or two weeks when a send was still being
// opened after them.
func NewCompareChart(names []string, opened [][]int64, delivered []int64) CompareChart {
	c := CompareChart{}
	hours := 48
	any := false
	for s := range opened {
		n := len(opened[s])
		if n > 0 && opened[s][n-1] > 0 {
			any = true
		}
		if n > 48 && opened[s][n-1] > opened[s][47] {
			hours = n - 1
		}
	}
	if !any {
		c.Empty = true
		c.Summary = views.T("compare.chart_empty")
		return c
	}
	rate := func(s, h int) float64 {
		if delivered[s] <= 0 || h >= len(opened[s]) {
			return 0
		}
		return float64(opened[s][h]) * 100 / float64(delivered[s])
	}
	top := 0.0
	for s := range opened {
		for h := 0; h < hours && h < len(opened[s]); h++ {
			top = max(top, rate(s, h))
		}
	}
	step := views.NiceStep(int64(top + 0.999))
	ymax := float64(step * ((int64(top+0.999) + step - 1) / step))
	if ymax <= 0 {
		ymax = float64(step)
	}
	x := func(h int) float64 {
		return chartLeft + float64(h)*(chartW-chartLeft-chartRight)/float64(hours)
	}
	y := func(v float64) float64 { return chartH - chartBottom - v/ymax*(chartH-chartTop-chartBottom) }
	for v := int64(0); float64(v) <= ymax; v += step {
		c.YTicks = append(c.YTicks, Tick{Pos: views.Coord(y(float64(v))), Label: strconv.FormatInt(v, 10) + "%"})
	}
	every, unit := 12, "compare.tick_hours"
	if hours > 48 {
		every, unit = 48, "compare.tick_days"
	}
	for h := 0; h <= hours; h += every {
		n := h
		if hours > 48 {
			n = h / 24
		}
		anchor := "middle"
		if h == 0 {
			anchor = "start"
		} else if h+every > hours {
			anchor = "end"
		}
		c.XTicks = append(c.XTicks, Tick{Pos: views.Coord(x(h)), Label: views.T(unit, "N", n), Anchor: anchor})
	}
	for s := range opened {
		pts := views.Coord(x(0)) + "," + views.Coord(y(0))
		for h := 0; h < hours; h++ {
			pts += " " + views.Coord(x(h+1)) + "," + views.Coord(y(rate(s, h)))
		}
		c.Lines = append(c.Lines, CompareLine{Name: names[s], Series: s + 1, Points: pts})
	}
	c.Summary = views.T("compare.chart_summary", "Hours", hours)
	return c
}

// ClientLabel names a mail client's family (delivery.Client*).
func ClientLabel(key string) string {
	switch key {
	case "gmail":
		return views.T("reach.client_gmail")
	case "apple_mail":
		return views.T("reach.client_apple_mail")
	case "outlook":
		return views.T("reach.client_outlook")
	case "yahoo":
		return views.T("reach.client_yahoo")
	case "thunderbird":
		return views.T("reach.client_thunderbird")
	}
	return views.T("reach.client_other")
}

// DeviceLabel names a kind of device (delivery.Device*).
func DeviceLabel(key string) string {
	switch key {
	case "desktop":
		return views.T("reach.device_desktop")
	case "mobile":
		return views.T("reach.device_mobile")
	case "tablet":
		return views.T("reach.device_tablet")
	}
	return views.T("reach.device_unknown")
}

// UnknownCountry names the addresses no country was found for.
func UnknownCountry() string { return views.T("reach.country_unknown") }
