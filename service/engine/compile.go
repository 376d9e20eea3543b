package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"sync/atomic"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// compiledSend is a send's message, parsed once: every per-recipient part
// is a placeholder, filled by build.
type compiledSend struct {
	cancelled atomic.Bool // deleted: its messages are skipped
	held      atomic.Bool // paused: its claimed messages go back to the queue
	dkimErr   error       // the sender domain's DKIM key cannot sign: every message fails with it
	send      *models.SingleSend
	account   int64
	from      mail.Address
	replyTo   string
	subject   *delivery.Template
	html      *delivery.Template
	text      *delivery.Template
	links     []string
	// variants are an A/B test's subjects and bodies (their preheaders),
	// 1-based by a ledger row's variant; a row of variant 0 (or a send
	// with no test) takes subject and html.
	variants     []variantParts
	dkim         *delivery.DKIMKey
	senderName   string
	senderAddr   string
	needsContact bool
	// needsData: a placeholder reads an automation trigger's data
	// (((data.<key>))), loaded with the claimed rows.
	needsData  bool
	baseURL    string
	fromDomain string // the sender's domain: the Message-IDs' right side
	// listID and listName make the List-Id (RFC 2919) naming the contact
	// type or segment the message went to; feedbackID is Gmail's
	// Feedback-ID. See identify.
	listID, listName, feedbackID string
	// verp names the row in the Message-ID and the List-Unsubscribe mailto:
	// address; nil (a preview, view in browser) leaves both out.
	verp *delivery.VERP
	// data is a single message's values of its ((key)) placeholders
	// (decisions.md 11); nil for a campaign's send. A single message is
	// not marketing: no List-Unsubscribe, no List-Id, no Precedence: bulk.
	data map[string]string
	// org are the organisation profile's placeholders (core.OrgPlaceholderValues),
	// read once per compile: every message of a send shows the same.
	org map[string]string
}

// variantParts is one A/B variant's compiled subject, body and text
// (the send's text unless the variant has a design of its own).
type variantParts struct{ subject, html, text *delivery.Template }

// parts returns the subject, body and text of a ledger row's variant.
func (c *compiledSend) parts(variant int) (subject, html, text *delivery.Template) {
	if variant >= 1 && variant <= len(c.variants) {
		v := c.variants[variant-1]
		return v.subject, v.html, v.text
	}
	return c.subject, c.html, c.text
}

// tokenName is the placeholder the tracking token takes while a message is
// compiled; it cannot clash with a field name (those start with a letter).
const tokenName = "__tk"

func compileSend(ctx context.Context, db *core.DB, base string, ss *models.SingleSend) (*compiledSend, error) {
	html := ""
	if ss.TemplateHTML != nil {
		html = *ss.TemplateHTML
	}
	text := delivery.HTMLToText(html)
	// The links of the send's design, then those only the A/B variants'
	// own designs have: one list (a click's link number, the statistics'
	// clicks per link) for every design of the send.
	var links []string
	linkIndex := map[string]int{}
	track := func(doc string) string {
		tracked, _ := delivery.TrackLinks(doc, func(_ int, href string) string {
			i, ok := linkIndex[href]
			if !ok {
				i = len(links)
				linkIndex[href] = i
				links = append(links, href)
			}
			return base + "/t/c/((" + tokenName + "))/" + strconv.Itoa(i)
		})
		return tracked
	}
	tracked := track(html)
	bodyOf := func(tracked, preheader string) *delivery.Template {
		return delivery.Compile(delivery.AddPixel(delivery.InsertPreheader(tracked, preheader), base+"/t/o/(("+tokenName+")).gif"))
	}
	body := func(preheader string) *delivery.Template { return bodyOf(tracked, preheader) }
	c := &compiledSend{
		send: ss, account: ss.UserID, from: mail.Address{Address: ss.FromSender}, replyTo: ss.ReplyTo,
		subject: delivery.Compile(ss.Subject), html: body(ss.Preheader), text: delivery.Compile(text),
		links: links, baseURL: base, fromDomain: strings.ToLower(ss.FromSender[strings.LastIndexByte(ss.FromSender, '@')+1:]),
	}
	if ss.SenderName != nil {
		c.from.Name, c.senderName = *ss.SenderName, *ss.SenderName
	}
	if ss.SenderAddress != nil {
		c.senderAddr = *ss.SenderAddress
	}
	if ss.Message == 1 {
		c.data = map[string]string{}
		if ss.MessageData != "" {
			if err := json.Unmarshal([]byte(ss.MessageData), &c.data); err != nil {
				return nil, fmt.Errorf("compile: data of message %d: %w", ss.ID, err)
			}
		}
	}
	org, err := core.OrgPlaceholderValues(ctx, db.R, ss.UserID, base)
	if err != nil {
		return nil, fmt.Errorf("compile: send %d: %w", ss.ID, err)
	}
	c.org = org
	templates := []*delivery.Template{c.subject, c.html, c.text}
	if ss.ABShare > 0 {
		for i, subj := range ss.ABSubjects {
			v := variantParts{subject: delivery.Compile(subj), html: c.html, text: c.text}
			pre := ss.Preheader
			if i < len(ss.ABPreheaders) && ss.ABPreheaders[i] != "" {
				pre = ss.ABPreheaders[i]
				v.html = body(pre)
			}
			if i < len(ss.ABDesigns) && ss.ABDesigns[i] != "" {
				v.html = bodyOf(track(ss.ABDesigns[i]), pre)
				v.text = delivery.Compile(delivery.HTMLToText(ss.ABDesigns[i]))
				templates = append(templates, v.html, v.text)
			}
			c.variants = append(c.variants, v)
			templates = append(templates, v.subject)
		}
	}
	c.links = links
	for _, t := range templates {
		if c.data != nil {
			break // a message has no contact: its data fills the placeholders
		}
		for _, n := range t.Names() {
			switch n {
			case "first_name", "last_name", "email", tokenName, "sender_name", "sender_address", "unsubscribe_preferences", "view_in_browser":
			default:
				if strings.HasPrefix(n, delivery.DataPrefix) {
					c.needsData = ss.AutomationID != nil
					continue
				}
				if _, ok := c.org[n]; !ok {
					c.needsContact = true
				}
			}
		}
	}
	if err := c.identify(ctx, db); err != nil {
		return nil, err
	}
	// Signed when the account has a key for the sender's domain (made on
	// the sender's DNS page) whose record a DNS check has seen, or that
	// may sign anyway (the console switch; `herald dkim create --sign-now`):
	// the newest such key. Never made here, as the DNS record would be
	// missing and the signature fail.
	domain := strings.ToLower(ss.FromSender[strings.LastIndexByte(ss.FromSender, '@')+1:])
	var row models.SenderDomain
	err = db.R.WithContext(ctx).Where("user_id = ? AND domain = ? AND (published_at IS NOT NULL OR sign_anyway = 1)", ss.UserID, domain).
		Order("generation DESC").First(&row).Error
	switch {
	case err == nil:
		// A key that cannot be read fails each message with its reason
		// (a failure of the send, shown on it), rather than the whole send
		// failing to start, unseen, on every claim.
		c.dkim, c.dkimErr = delivery.ParseDKIMKey(row.Domain, row.Selector, row.PrivateKey)
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return nil, fmt.Errorf("compile: dkim key of %s: %w", domain, err)
	}
	return c, nil
}

// identify names the list the send's messages belong to and the campaign
// Gmail's feedback loop reports on. An automation's step names the
// automation's contact type or segment, and its Feedback-ID the automation
// ("a7:1:herald", the same for all its steps); a single send names its
// one target ("type3", "segment4"), or itself ("send12", with the send's
// name) when it goes to several, as one message cannot say which of them
// brought it; its Feedback-ID is "s<send id>:<account id>:herald". The
// list id sits under the From domain: "type3.a1.shop.example.com".
func (c *compiledSend) identify(ctx context.Context, db *core.DB) error {
	ss := c.send
	if ss.ID == 0 {
		return nil // a test mail of a send not saved yet: no list, no campaign
	}
	account := strconv.FormatInt(ss.UserID, 10)
	if c.data != nil {
		// A single message belongs to no list; its Feedback-ID names it.
		c.feedbackID = "m" + strconv.FormatInt(ss.ID, 10) + ":" + account + ":herald"
		return nil
	}
	var kind models.TargetKind
	var item int64
	switch {
	case ss.AutomationID != nil:
		var a models.Automation
		err := db.R.WithContext(ctx).Select("id", "automation_for", "automation_for_table").
			Where("id = ? AND user_id = ?", *ss.AutomationID, ss.UserID).Take(&a).Error
		if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			return fmt.Errorf("compile: automation %d of a send: %w", *ss.AutomationID, err)
		}
		c.feedbackID = "a" + strconv.FormatInt(*ss.AutomationID, 10) + ":" + account + ":herald"
		kind, item = a.AutomationForTable, a.AutomationFor
	default:
		c.feedbackID = "s" + strconv.FormatInt(ss.ID, 10) + ":" + account + ":herald"
		if len(ss.RecipientID) == 1 {
			kind, item = ss.RecipientID[0].Table, ss.RecipientID[0].ItemID()
		}
	}
	var names []string
	var err error
	switch kind {
	case models.TargetContacts:
		c.listID = "type" + strconv.FormatInt(item, 10)
		err = db.R.WithContext(ctx).Model(&models.ContactType{}).Where("id = ? AND user_id = ?", item, ss.UserID).
			Limit(1).Pluck("name", &names).Error
	case models.TargetSegments:
		c.listID = "segment" + strconv.FormatInt(item, 10)
		err = db.R.WithContext(ctx).Model(&models.Segment{}).Where("id = ? AND user_id = ?", item, ss.UserID).
			Limit(1).Pluck("segment_name", &names).Error
	default:
		c.listID, names = "send"+strconv.FormatInt(ss.ID, 10), []string{ss.SingleSendName}
	}
	if err != nil {
		return fmt.Errorf("compile: list of send %d: %w", ss.ID, err)
	}
	c.listID += ".a" + account + "." + c.fromDomain
	if len(names) == 1 {
		c.listName = names[0]
	}
	if item == 0 && kind != "" || !delivery.ValidListID(c.listID) {
		// A target gone, or a From domain that is no dot-atom
		// (an IDN written in Unicode): no List-Id rather than a failed send.
		c.listID, c.listName = "", ""
	}
	return nil
}

// build renders and writes one recipient's message.
func (c *compiledSend) build(key []byte, r claimedRow, ct *models.Contact) ([]byte, error) {
	if c.cancelled.Load() {
		return nil, delivery.ErrSkip
	}
	if c.held.Load() {
		return nil, delivery.ErrHeld
	}
	if c.dkimErr != nil {
		return nil, c.dkimErr
	}
	msg, err := c.message(key, r, ct)
	if err != nil {
		return nil, err
	}
	if c.dkim != nil {
		// Signed while it is written: the body is hashed once.
		return delivery.BuildSigned(msg, c.dkim)
	}
	return delivery.Build(msg)
}

// message renders one recipient's message.
func (c *compiledSend) message(key []byte, r claimedRow, ct *models.Contact) (*delivery.Message, error) {
	tok := delivery.SignToken(key, r.ID)
	var custom map[string]string
	lookup := func(name string) string {
		if name == tokenName {
			return tok
		}
		if v, ok := c.data[name]; ok {
			return v
		}
		if v, ok := c.org[name]; ok {
			return v
		}
		if key, ok := strings.CutPrefix(name, delivery.DataPrefix); ok {
			return r.Data[key]
		}
		switch name {
		case "email":
			return r.Email
		case "first_name":
			if ct != nil {
				return ct.FirstName
			}
			return r.FirstName
		case "last_name":
			if ct != nil {
				return ct.LastName
			}
			return r.LastName
		case "sender_name":
			return c.senderName
		case "sender_address":
			return c.senderAddr
		case "unsubscribe_preferences":
			return c.baseURL + "/u/" + tok
		case "view_in_browser":
			return c.baseURL + "/m/" + tok
		}
		if ct == nil {
			return ""
		}
		if v, ok := contactField(ct, name); ok {
			return v
		}
		if custom == nil {
			custom = record.ParseCustom(string(ct.CustomFields))
		}
		return custom[name]
	}
	name := strings.TrimSpace(lookup("first_name") + " " + lookup("last_name"))
	subject, html, text := c.parts(r.Variant)
	m := &delivery.Message{
		From: c.from, ReplyTo: c.replyTo, To: mail.Address{Name: name, Address: r.Email},
		Subject: subject.Render(lookup), HTML: html.Render(delivery.HTMLEscaped(lookup)), Text: text.Render(lookup),
		ListUnsubscribeURL: c.baseURL + "/u/" + tok, OneClick: true,
		ListID: c.listID, ListName: c.listName, FeedbackID: c.feedbackID,
		Headers: []delivery.Header{{Name: "Precedence", Value: "bulk"}, {Name: "X-Herald-Send", Value: c.send.Utr}},
	}
	if c.data != nil {
		m.ListUnsubscribeURL, m.OneClick, m.ListID, m.ListName = "", false, "", ""
		m.Headers = []delivery.Header{{Name: "X-Herald-Send", Value: c.send.Utr}}
	}
	if c.verp != nil {
		// The Message-ID carries the row's token too: a feedback report or a
		// provider that quotes it finds the message when the return path
		// was rewritten on the way.
		m.MessageID = c.verp.MessageID(r.ID, c.fromDomain)
		if c.data == nil {
			m.ListUnsubscribeMailto = c.verp.Unsubscribe(r.ID)
		}
		// Postmark replaces the Message-ID and keeps no return path, but
		// hands X-PM-Metadata-<key> headers back as its webhooks'
		// Metadata: the token ties its bounce and complaint records to
		// this message. It says no more than the Message-ID already does.
		m.Headers = append(m.Headers, delivery.Header{Name: "X-PM-Metadata-" + delivery.MetadataKey, Value: c.verp.Token(r.ID)})
	}
	return m, nil
}

// contactField is a reserved field's value for a placeholder.
func contactField(c *models.Contact, name string) (string, bool) {
	switch name {
	case "alt_email":
		if c.AltEmail != nil {
			return *c.AltEmail, true
		}
		return "", true
	case "country":
		return record.CountryName(c.Country), true
	case "state":
		return c.State, true
	case "city":
		return c.City, true
	case "address_line1":
		return c.AddressLine1, true
	case "address_line2":
		return c.AddressLine2, true
	case "state_province_region":
		return c.StateProvinceRegion, true
	case "postal_code":
		return c.PostalCode, true
	}
	return "", false
}
