package delivery

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// Hit is the shape of one request to a tracking link (the open pixel or a
// click redirect), as the machine rules read it: nothing about the
// account, only the request and the message's own timings.
type Hit struct {
	// Click is true for a click on a tracked link, false for an open.
	Click bool
	// Method is the HTTP method ("GET", "HEAD").
	Method string
	// UserAgent is the User-Agent header as sent ("" when absent).
	UserAgent string
	// IP is the client's address (invalid when unknown).
	IP netip.Addr
	// SinceDelivery is the time from the message's delivery to the hit;
	// Delivered is false when the delivery time is unknown.
	Delivered     bool
	SinceDelivery time.Duration
	// Link is the index of the clicked link (clicks only).
	Link int
	// PrevClick is true when the message had a click before this one:
	// SincePrevClick ago, on link PrevLink.
	PrevClick      bool
	SincePrevClick time.Duration
	PrevLink       int
}

// MachineReason says why a hit was taken for a machine ("" for a person).
// The rules and their sources are written down in docs/MACHINE_ACTIVITY.md.
type MachineReason string

// The reasons Classify gives, one per rule.
const (
	Human             MachineReason = ""
	ReasonHead        MachineReason = "head request"
	ReasonNoAgent     MachineReason = "no user agent"
	ReasonImageProxy  MachineReason = "privacy image proxy (user agent)"
	ReasonScanner     MachineReason = "security scanner (user agent)"
	ReasonLibrary     MachineReason = "HTTP library (user agent)"
	ReasonBot         MachineReason = "bot, crawler or preview (user agent)"
	ReasonAppleProxy  MachineReason = "Apple Mail Privacy Protection (17.0.0.0/8)"
	ReasonGoogleRange MachineReason = "Google image proxy (Google's address ranges)"
	ReasonAppleAgent  MachineReason = "Apple Mail Privacy Protection (bare Mozilla/5.0 agent)"
	ReasonOperator    MachineReason = "operator's machine range (HERALD_MACHINE_RANGES)"
	ReasonTooSoon     MachineReason = "click within 10 s of delivery"
	ReasonEveryLink   MachineReason = "second link of the message within 2 s"
)

// ScannerWindow is how soon after delivery a click is taken for a link
// scanner: security gateways follow every link as the mail arrives; a
// person has not read the mail yet.
const ScannerWindow = 10 * time.Second

// EveryLinkWindow is how close two clicks on different links of one
// message must be to be taken for a machine following every link. The
// first of the two is taken back as well (see Classify).
const EveryLinkWindow = 2 * time.Second

// Agent fragments, matched case-insensitively as substrings. Each list is
// sourced in docs/MACHINE_ACTIVITY.md.
var (
	proxyAgents = []string{
		"googleimageproxy", "ggpht.com", // Gmail's image proxy
		"yahoomailproxy",     // Yahoo Mail's content fetch proxy
		"hey.com/imageproxy", // HEY's image proxy
	}
	scannerAgents = []string{
		"barracuda", "proofpoint", "mimecast", "safelinks", "safe links", "microsoft defender",
		"bingpreview", "trendmicro", "trend micro", "ironport", "ciscosecureemail", "fortimail",
		"fortiguard", "sophos", "symantec", "forcepoint", "zscaler", "appriver", "messagelabs",
		"spamtitan", "mailcontrol", "cloudmark", "vadesecure", "hornetsecurity",
	}
	libraryAgents = []string{
		"curl/", "wget/", "python-requests", "python-urllib", "python-httpx", "aiohttp", "go-http-client",
		"java/", "okhttp", "apache-httpclient", "jakarta commons-httpclient", "libwww-perl", "lwp::", "node-fetch",
		"axios/", "undici", "got (https://github.com/sindresorhus/got)", "ruby", "faraday", "guzzlehttp",
		"php/", "winhttp", "httpclient", "powershell", "headlesschrome", "phantomjs", "scrapy",
	}
	// botAgents are generic words of automated fetchers; "bot" alone is
	// matched only where a separator follows it ("Googlebot/2.1",
	// "bingbot;", "Slackbot-LinkExpanding") or it ends the agent, so that a
	// phone model such as "CUBOT NOTE 7" inside a browser's agent is not
	// enough.
	botAgents = []string{
		"bot/", "bot;", "bot)", "bot-", "crawler", "spider", "facebookexternalhit", "linkexpanding",
		"preview", "whatsapp/", "telegrambot", "discordbot", "+http",
	}
)

// appleRange is Apple's own network, where Mail Privacy Protection fetches
// remote content from (opens only: Apple's staff click links from it too).
var appleRange = netip.MustParsePrefix("17.0.0.0/8")

// googleRanges are Google's netblocks that Gmail's image proxy has been
// seen fetching from (opens only); see docs/MACHINE_ACTIVITY.md.
var googleRanges = mustPrefixes("64.233.160.0/19", "66.102.0.0/20", "66.249.64.0/19", "72.14.192.0/18",
	"74.125.0.0/16", "209.85.128.0/17", "216.239.32.0/19", "2001:4860::/32")

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// ParseMachineRanges reads HERALD_MACHINE_RANGES: CIDR prefixes (or single
// addresses) separated by commas, spaces allowed. Empty means none.
func ParseMachineRanges(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("%q is not an IP address or CIDR prefix", f)
			}
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR prefix", f)
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// MachineRules decides whether an open or a click was a person or a
// machine. The zero value applies the built-in rules only; Extra adds the
// operator's ranges (HERALD_MACHINE_RANGES), taken for machines for both
// opens and clicks. Safe for concurrent use once built.
type MachineRules struct {
	Extra []netip.Prefix
}

// Classify reads one hit and answers the reason it is a machine, or Human.
// The rules, first match wins: a HEAD request; no user agent; a privacy
// proxy, security scanner, HTTP library or bot agent; the operator's
// ranges; for opens, Apple's and Google's ranges and Apple's bare agent;
// for clicks, a click within ScannerWindow of delivery and a click on
// another link than the message's previous click within EveryLinkWindow
// (the caller then takes the previous click back: TakesBack).
func (r *MachineRules) Classify(h Hit) MachineReason {
	if strings.EqualFold(h.Method, "HEAD") {
		return ReasonHead
	}
	ua := strings.TrimSpace(h.UserAgent)
	if ua == "" {
		return ReasonNoAgent
	}
	lower := strings.ToLower(ua)
	switch {
	case containsAny(lower, proxyAgents):
		return ReasonImageProxy
	case containsAny(lower, scannerAgents):
		return ReasonScanner
	case containsAny(lower, libraryAgents):
		return ReasonLibrary
	case containsAny(lower, botAgents) || strings.HasSuffix(lower, "bot"):
		return ReasonBot
	}
	ip := h.IP.Unmap()
	if ip.IsValid() && r != nil {
		for _, p := range r.Extra {
			if p.Contains(ip) {
				return ReasonOperator
			}
		}
	}
	if !h.Click {
		if ip.IsValid() {
			if appleRange.Contains(ip) {
				return ReasonAppleProxy
			}
			for _, p := range googleRanges {
				if p.Contains(ip) {
					return ReasonGoogleRange
				}
			}
		}
		// Mail Privacy Protection's fetches carry "Mozilla/5.0" and
		// nothing else; no browser or mail client sends that alone.
		if ua == "Mozilla/5.0" {
			return ReasonAppleAgent
		}
		return Human
	}
	if h.Delivered && h.SinceDelivery >= 0 && h.SinceDelivery < ScannerWindow {
		return ReasonTooSoon
	}
	if TakesBack(h) {
		return ReasonEveryLink
	}
	return Human
}

// TakesBack reports whether click h, following the message's previous
// click on another link within EveryLinkWindow, shows that both were one
// machine following every link: the previous click is no person's either.
func TakesBack(h Hit) bool {
	return h.Click && h.PrevClick && h.PrevLink != h.Link && h.SincePrevClick >= 0 && h.SincePrevClick < EveryLinkWindow
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
