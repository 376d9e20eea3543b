package delivery

import "strings"

// The mail clients a report tells apart (AgentClass.Client).
const (
	ClientGmail       = "gmail"
	ClientAppleMail   = "apple_mail"
	ClientOutlook     = "outlook"
	ClientYahoo       = "yahoo"
	ClientThunderbird = "thunderbird"
	ClientOther       = "other"
)

// The devices a report tells apart (AgentClass.Device).
const (
	DeviceDesktop = "desktop"
	DeviceMobile  = "mobile"
	DeviceTablet  = "tablet"
	DeviceUnknown = "unknown"
)

// AgentClass is what a report keeps of the User-Agent of an open or a
// click: the mail client's family and the kind of device, never the
// agent itself.
type AgentClass struct {
	Client, Device string
}

// ClassifyAgent reads the mail client and device from a User-Agent. It
// is a pure function of the agent; what it cannot tell is "other" and
// "unknown". A click opens the reader's browser, so a click's client is
// mostly "other" unless a webmail's app or proxy names itself; opens load
// the pixel in the mail client and tell it better.
func ClassifyAgent(ua string) AgentClass {
	a := strings.ToLower(ua)
	c := AgentClass{Client: ClientOther, Device: DeviceUnknown}
	has := func(parts ...string) bool {
		for _, p := range parts {
			if strings.Contains(a, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("googleimageproxy", "ggpht.com", "gmail"):
		c.Client = ClientGmail
	case has("yahoomailproxy", "yahoo"):
		c.Client = ClientYahoo
	case has("thunderbird"):
		c.Client = ClientThunderbird
	case has("outlook", "microsoft office", "msoffice", "ms-office", "windows-live", "windows mail"):
		c.Client = ClientOutlook
	case has("applewebkit") && !has("safari/", "chrome/", "crios/", "fxios/", "edg") && has("mac os x", "iphone", "ipad"):
		// Apple Mail loads images with WebKit but names no browser.
		c.Client = ClientAppleMail
	case strings.TrimSpace(ua) == "Mozilla/5.0":
		// Apple Mail Privacy Protection's bare agent (machine rule 10).
		c.Client = ClientAppleMail
	}
	switch {
	case has("ipad", "tablet") || (has("android") && !has("mobile")):
		c.Device = DeviceTablet
	case has("iphone", "ipod", "android", "mobile", "windows phone"):
		c.Device = DeviceMobile
	case has("windows nt", "macintosh", "mac os x", "x11", "linux", "cros", "microsoft office"):
		c.Device = DeviceDesktop
	}
	return c
}
