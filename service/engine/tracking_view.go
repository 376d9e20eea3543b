package engine

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"herald/delivery"
)

// Untracked returns the HTML part of one of the account's messages as its
// recipient got it, less what would count: the open pixel is taken out
// and each tracked link points where its click would go. The console's
// own views of a message (the outbox) must never count an open or a
// click. A tracked link of another account, or one that no longer
// resolves, is left pointing nowhere ("#").
func (t *Tracking) Untracked(ctx context.Context, accountID int64, html string) string {
	html = t.pixelRE().ReplaceAllString(html, "")
	out, _ := delivery.TrackLinks(html, func(_ int, href string) string {
		if target, ok := t.untrackURL(ctx, accountID, href); ok {
			return target
		}
		return href
	})
	return out
}

// UntrackedText is Untracked for a text part: every tracked link in it
// becomes where its click would go.
func (t *Tracking) UntrackedText(ctx context.Context, accountID int64, text string) string {
	return t.clickRE().ReplaceAllStringFunc(text, func(u string) string {
		target, _ := t.untrackURL(ctx, accountID, u)
		return target
	})
}

// untrackURL resolves a tracked link's URL without counting it; ok is
// false for a URL that is not a tracked link of this herald.
func (t *Tracking) untrackURL(ctx context.Context, accountID int64, u string) (string, bool) {
	m := t.clickRE().FindStringSubmatch(u)
	if m == nil || m[0] != u {
		return u, false
	}
	i, err := strconv.Atoi(m[2])
	if err != nil {
		return "#", true
	}
	msg, err := t.message(ctx, m[1])
	if err != nil || msg.UserID != accountID {
		return "#", true
	}
	target, err := t.linkTarget(ctx, msg, i)
	if err != nil {
		return "#", true
	}
	return target, true
}

// clickRE matches a tracked link of this herald (compile.go writes them):
// base/t/c/<token>/<link index>.
func (t *Tracking) clickRE() *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(strings.TrimRight(t.baseURL, "/")) + `/t/c/([A-Za-z0-9_-]+)/([0-9]+)`)
}

// pixelRE matches the open pixel AddPixel put into the message.
func (t *Tracking) pixelRE() *regexp.Regexp {
	return regexp.MustCompile(`<img src="` + regexp.QuoteMeta(strings.TrimRight(t.baseURL, "/")) + `/t/o/[^"]*"[^>]*>`)
}
