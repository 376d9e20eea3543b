package delivery

import "testing"

func TestClassifyAgent(t *testing.T) {
	for _, tc := range []struct {
		ua             string
		client, device string
	}{
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148", ClientAppleMail, DeviceMobile},
		{"Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148", ClientAppleMail, DeviceTablet},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)", ClientAppleMail, DeviceDesktop},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15", ClientOther, DeviceDesktop},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36", ClientOther, DeviceDesktop},
		{"Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17425; Pro)", ClientOutlook, DeviceDesktop},
		{"Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)", ClientGmail, DeviceDesktop},
		{"YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html", ClientYahoo, DeviceUnknown},
		{"Mozilla/5.0 (X11; Linux x86_64; rv:115.0) Gecko/20100101 Thunderbird/115.9.0", ClientThunderbird, DeviceDesktop},
		{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36", ClientOther, DeviceMobile},
		{"Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36", ClientOther, DeviceTablet},
		{"", ClientOther, DeviceUnknown},
		{"Mozilla/5.0", ClientAppleMail, DeviceUnknown},
		{"curl/8.5.0", ClientOther, DeviceUnknown},
	} {
		got := ClassifyAgent(tc.ua)
		if got.Client != tc.client || got.Device != tc.device {
			t.Errorf("ClassifyAgent(%q) = %+v, want %s on %s", tc.ua, got, tc.client, tc.device)
		}
	}
}

func TestMarkLinks(t *testing.T) {
	doc := `<p><a href="https://a.example/x">A</a> <a href="mailto:x@y">M</a> <a href=" https://a.example/x ">A again</a><a href="https://b.example/">B</a></p>`
	got := MarkLinks(doc, func(i int) string { return "[" + string(rune('0'+i)) + "]" })
	want := `<p><a href="https://a.example/x">[0]A</a> <a href="mailto:x@y">M</a> <a href="https://a.example/x">[0]A again</a><a href="https://b.example/">[1]B</a></p>`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
