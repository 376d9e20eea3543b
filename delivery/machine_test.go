package delivery

import (
	"net/netip"
	"testing"
	"time"
)

// Agents as they appear in tracking logs (docs/MACHINE_ACTIVITY.md names
// where each comes from).
const (
	chromeDesktop = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
	safariIPhone  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"
	outlookDesk   = "Mozilla/4.0 (compatible; ms-office; MSOffice 16)"
	cubotPhone    = "Mozilla/5.0 (Linux; Android 11; CUBOT NOTE 7 Build/RP1A) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36"
	gmailProxy    = "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)"
	yahooProxy    = "YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html"
)

func TestClassifyRequestShapes(t *testing.T) {
	t.Parallel()
	home := netip.MustParseAddr("203.0.113.7")
	apple := netip.MustParseAddr("17.58.101.12")
	google := netip.MustParseAddr("66.102.8.91")
	scannerNet := netip.MustParseAddr("198.51.100.44")
	rules := &MachineRules{Extra: mustPrefixes("198.51.100.0/24")}
	later := 3 * time.Hour
	cases := []struct {
		name string
		hit  Hit
		want MachineReason
	}{
		// Opens.
		{"person opens in Chrome hours later", Hit{Method: "GET", UserAgent: chromeDesktop, IP: home, Delivered: true, SinceDelivery: later}, Human},
		{"person opens in Outlook", Hit{Method: "GET", UserAgent: outlookDesk, IP: home, Delivered: true, SinceDelivery: later}, Human},
		{"phone named CUBOT is a person", Hit{Method: "GET", UserAgent: cubotPhone, IP: home, Delivered: true, SinceDelivery: later}, Human},
		{"open a second after delivery is not judged by time", Hit{Method: "GET", UserAgent: safariIPhone, IP: home, Delivered: true, SinceDelivery: time.Second}, Human},
		{"unknown delivery time", Hit{Method: "GET", UserAgent: chromeDesktop, IP: home}, Human},
		{"Gmail image proxy agent", Hit{Method: "GET", UserAgent: gmailProxy, IP: home, Delivered: true, SinceDelivery: later}, ReasonImageProxy},
		{"Gmail image proxy from Google's range", Hit{Method: "GET", UserAgent: chromeDesktop, IP: google, Delivered: true, SinceDelivery: later}, ReasonGoogleRange},
		{"Google's IPv6 range", Hit{Method: "GET", UserAgent: chromeDesktop, IP: netip.MustParseAddr("2001:4860:4801::5"), Delivered: true, SinceDelivery: later}, ReasonGoogleRange},
		{"Yahoo's proxy", Hit{Method: "GET", UserAgent: yahooProxy, IP: home}, ReasonImageProxy},
		{"Apple MPP from 17/8", Hit{Method: "GET", UserAgent: safariIPhone, IP: apple, Delivered: true, SinceDelivery: 40 * time.Second}, ReasonAppleProxy},
		{"Apple MPP as IPv4-mapped IPv6", Hit{Method: "GET", UserAgent: safariIPhone, IP: netip.MustParseAddr("::ffff:17.1.2.3")}, ReasonAppleProxy},
		{"Apple MPP bare agent", Hit{Method: "GET", UserAgent: "Mozilla/5.0", IP: netip.MustParseAddr("104.28.1.9")}, ReasonAppleAgent},
		{"HEAD on the pixel", Hit{Method: "HEAD", UserAgent: chromeDesktop, IP: home}, ReasonHead},
		{"no agent", Hit{Method: "GET", UserAgent: "", IP: home}, ReasonNoAgent},
		{"blank agent", Hit{Method: "GET", UserAgent: "   ", IP: home}, ReasonNoAgent},
		{"curl", Hit{Method: "GET", UserAgent: "curl/8.5.0", IP: home}, ReasonLibrary},
		{"operator's range, open", Hit{Method: "GET", UserAgent: chromeDesktop, IP: scannerNet}, ReasonOperator},

		// Clicks.
		{"person clicks hours later", Hit{Click: true, Method: "GET", UserAgent: chromeDesktop, IP: home, Delivered: true, SinceDelivery: later, Link: 1}, Human},
		{"Apple's staff click from 17/8", Hit{Click: true, Method: "GET", UserAgent: safariIPhone, IP: apple, Delivered: true, SinceDelivery: later}, Human},
		{"Google's range does not judge clicks", Hit{Click: true, Method: "GET", UserAgent: chromeDesktop, IP: google, Delivered: true, SinceDelivery: later}, Human},
		{"click 3 s after delivery", Hit{Click: true, Method: "GET", UserAgent: chromeDesktop, IP: home, Delivered: true, SinceDelivery: 3 * time.Second}, ReasonTooSoon},
		{"click 9.9 s after delivery", Hit{Click: true, Method: "GET", UserAgent: chromeDesktop, IP: home, Delivered: true, SinceDelivery: 9900 * time.Millisecond}, ReasonTooSoon},
		{"click 10 s after delivery", Hit{Click: true, Method: "GET", UserAgent: chromeDesktop, IP: home, Delivered: true, SinceDelivery: ScannerWindow}, Human},
		{"second link 1.5 s after the first", Hit{Click: true, Method: "GET", UserAgent: chromeDesktop, IP: home, Delivered: true, SinceDelivery: later, Link: 2,
			PrevClick: true, SincePrevClick: 1500 * time.Millisecond, PrevLink: 0}, ReasonEveryLink},
		{"second link 5 s after the first", Hit{Click: true, Method: "GET", UserAgent: chromeDesktop, IP: home, Delivered: true, SinceDelivery: later, Link: 2,
			PrevClick: true, SincePrevClick: 5 * time.Second, PrevLink: 0}, Human},
		{"same link twice (a double click)", Hit{Click: true, Method: "GET", UserAgent: chromeDesktop, IP: home, Delivered: true, SinceDelivery: later, Link: 0,
			PrevClick: true, SincePrevClick: 300 * time.Millisecond, PrevLink: 0}, Human},
		{"HEAD on a link", Hit{Click: true, Method: "head", UserAgent: chromeDesktop, IP: home, Delivered: true, SinceDelivery: later}, ReasonHead},
		{"Barracuda", Hit{Click: true, Method: "GET", UserAgent: "Mozilla/5.0 (compatible; Barracuda Link Protection)", IP: home, Delivered: true, SinceDelivery: later}, ReasonScanner},
		{"Proofpoint", Hit{Click: true, Method: "GET", UserAgent: "Proofpoint URL Defense", IP: home}, ReasonScanner},
		{"Mimecast", Hit{Click: true, Method: "GET", UserAgent: "Mimecast-URL-Protect/1.0", IP: home}, ReasonScanner},
		{"Microsoft Safe Links", Hit{Click: true, Method: "GET", UserAgent: "Microsoft-SafeLinks/1.0", IP: home}, ReasonScanner},
		{"Microsoft Defender", Hit{Click: true, Method: "GET", UserAgent: "Mozilla/5.0 Microsoft Defender for Office 365", IP: home}, ReasonScanner},
		{"python-requests", Hit{Click: true, Method: "GET", UserAgent: "python-requests/2.31.0", IP: home}, ReasonLibrary},
		{"Go-http-client", Hit{Click: true, Method: "GET", UserAgent: "Go-http-client/1.1", IP: home}, ReasonLibrary},
		{"headless Chrome", Hit{Click: true, Method: "GET", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0 Safari/537.36", IP: home}, ReasonLibrary},
		{"Googlebot", Hit{Click: true, Method: "GET", UserAgent: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", IP: home}, ReasonBot},
		{"Slack's link preview", Hit{Click: true, Method: "GET", UserAgent: "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", IP: home}, ReasonBot},
		{"an agent ending in bot", Hit{Click: true, Method: "GET", UserAgent: "SomeScannerBot", IP: home}, ReasonBot},
		{"operator's range, click", Hit{Click: true, Method: "GET", UserAgent: chromeDesktop, IP: scannerNet, Delivered: true, SinceDelivery: later}, ReasonOperator},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := rules.Classify(c.hit); got != c.want {
				t.Fatalf("Classify = %q, want %q", got, c.want)
			}
		})
	}
	// Without operator ranges the same address is a person's.
	var none *MachineRules
	if got := none.Classify(Hit{Method: "GET", UserAgent: chromeDesktop, IP: scannerNet}); got != Human {
		t.Fatalf("nil rules: %q, want a person", got)
	}
}

func TestTakesBack(t *testing.T) {
	t.Parallel()
	h := Hit{Click: true, Link: 1, PrevClick: true, PrevLink: 0, SincePrevClick: time.Second}
	if !TakesBack(h) {
		t.Fatal("a second link within 2 s must take the first back")
	}
	h.SincePrevClick = EveryLinkWindow
	if TakesBack(h) {
		t.Fatal("2 s apart is a person's pace")
	}
	h.SincePrevClick, h.Link = time.Second, 0
	if TakesBack(h) {
		t.Fatal("the same link again takes nothing back")
	}
	if TakesBack(Hit{Link: 1, PrevClick: true, PrevLink: 0, SincePrevClick: time.Second}) {
		t.Fatal("an open takes nothing back")
	}
}

func TestParseMachineRanges(t *testing.T) {
	t.Parallel()
	got, err := ParseMachineRanges(" 198.51.100.0/24, 2001:db8::/32 ,203.0.113.9,::ffff:10.0.0.0/104,")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"198.51.100.0/24", "2001:db8::/32", "203.0.113.9/32", "10.0.0.0/8"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Fatalf("range %d = %s, want %s", i, got[i], want[i])
		}
	}
	if r, err := ParseMachineRanges(""); err != nil || len(r) != 0 {
		t.Fatalf("empty: %v %v", r, err)
	}
	for _, bad := range []string{"198.51.100.0/33", "not-an-ip", "10.0.0.0/8,x"} {
		if _, err := ParseMachineRanges(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

var sinkReason MachineReason

// BenchmarkClassifyOpen is the cost of classifying one open: a person's
// browser agent read through every agent list and every range (the
// longest path for an open).
func BenchmarkClassifyOpen(b *testing.B) {
	rules := &MachineRules{Extra: mustPrefixes("198.51.100.0/24", "192.0.2.0/24")}
	h := Hit{Method: "GET", UserAgent: chromeDesktop, IP: netip.MustParseAddr("203.0.113.7"), Delivered: true, SinceDelivery: time.Hour}
	b.ReportAllocs()
	for b.Loop() {
		sinkReason = rules.Classify(h)
	}
	if sinkReason != Human {
		b.Fatal(sinkReason)
	}
}

// BenchmarkClassifyClick is the cost of classifying one click by a person
// (the longest path for a click: every list, the ranges, both timings).
func BenchmarkClassifyClick(b *testing.B) {
	rules := &MachineRules{Extra: mustPrefixes("198.51.100.0/24", "192.0.2.0/24")}
	h := Hit{Click: true, Method: "GET", UserAgent: chromeDesktop, IP: netip.MustParseAddr("203.0.113.7"), Delivered: true, SinceDelivery: time.Hour,
		Link: 1, PrevClick: true, PrevLink: 0, SincePrevClick: time.Minute}
	b.ReportAllocs()
	for b.Loop() {
		sinkReason = rules.Classify(h)
	}
	if sinkReason != Human {
		b.Fatal(sinkReason)
	}
}

// BenchmarkClassifyScanner is a scanner's click, caught by its agent.
func BenchmarkClassifyScanner(b *testing.B) {
	rules := &MachineRules{}
	h := Hit{Click: true, Method: "GET", UserAgent: "Mozilla/5.0 (compatible; Barracuda Link Protection)", IP: netip.MustParseAddr("203.0.113.7")}
	b.ReportAllocs()
	for b.Loop() {
		sinkReason = rules.Classify(h)
	}
	if sinkReason != ReasonScanner {
		b.Fatal(sinkReason)
	}
}
