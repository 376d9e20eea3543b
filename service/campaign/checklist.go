package campaign

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/deliverability"
	"herald/service/engine"
	"herald/service/internal/record"
)

// Severity is how a checklist item stands.
type Severity string

// The severities. A failure refuses the send when the account blocks on
// the checklist; a warning never does.
const (
	SeverityOK      Severity = "ok"
	SeverityWarning Severity = "warning"
	SeverityFailure Severity = "failure"
)

// The rules of the checklist, as CheckItem.Rule names them.
const (
	RuleFromDomain    = "from_domain"
	RuleUnsubscribe   = "unsubscribe"
	RuleText          = "text"
	RuleImageOnly     = "image_only"
	RulePostalAddress = "postal_address"
	RuleBounceRate    = "bounce_rate"
	RuleComplaintRate = "complaint_rate"
	RuleWarmup        = "warmup" // the send against its From domain's warm-up plan (decisions.md 11)
)

// CheckItem is one rule's verdict, worded for the marketer: Message,
// then, where a verdict has several findings (a domain's missing
// records), one line each in Details.
type CheckItem struct {
	Rule     string
	OK       bool
	Severity Severity
	Message  string
	Details  []string
}

// Text is the verdict as one sentence: Message followed by its details,
// as the API's refusal carries it.
func (it CheckItem) Text() string {
	if len(it.Details) == 0 {
		return it.Message
	}
	return it.Message + " " + strings.Join(it.Details, "; ") + "."
}

// Thresholds of the account's rates: Gmail's and Yahoo's bulk-sender
// rules (February 2024) refuse mail from senders whose spam-complaint
// rate reaches 0.3 % and ask to stay under 0.1 %; 2 % hard bounces is the
// usual ceiling of list hygiene (providers read more as a bought list).
// Rates are per mille of delivered messages, compared in integers.
const (
	bounceLimitPermille    = deliverability.BounceRateLimit * 1000    // 2 %: failure at or above
	complaintLimitPermille = deliverability.ComplaintRateLimit * 1000 // 0.3 %: failure at or above
	complaintWarnPermille  = deliverability.ComplaintRateWarn * 1000  // 0.1 %: warning above
	rateWindow             = 30 * 24 * time.Hour
	// minWords: a design with images and fewer words than this is read
	// as image-only (spam filters weigh the text against the images).
	minWords = 20
)

// ChecklistField is the checklist's field of a refused send: the
// API's 422 envelope carries {"checklist": [one message per failure]}.
const ChecklistField = "checklist"

// DomainAuthFunc reports what the DNS checks last found for a sending
// domain of the account.
type DomainAuthFunc func(ctx context.Context, accountID int64, domain string) (core.DomainAuth, error)

// Checklist evaluates the pre-send checks of a single send or of an
// automation's emails: authentication of the From
// domain, an unsubscribe link in the design, readable text, image-only
// designs, the postal address, and the account's recent hard-bounce and
// complaint rates. By default they are warnings; an account that turns
// on blocking has its failing sends and set-lives refused.
type Checklist struct {
	db   *core.DB
	now  func() time.Time
	auth DomainAuthFunc
}

// NewChecklist builds the checklist over db, on the clock now (nil: the
// database's, which New sets to the service's). auth reads the DNS checks
// of a domain; nil (no checks wired) reports every domain as not checked
// yet, a warning.
func NewChecklist(db *core.DB, now func() time.Time, auth DomainAuthFunc) *Checklist {
	if now == nil {
		now = db.Now
	}
	return &Checklist{db: db, now: now, auth: auth}
}

// ChecklistSubject is what one mail is checked on: its From address, the
// postal address of its sender (the ((sender_address)) value) and its
// design. An empty From or HTML means "not chosen yet".
type ChecklistSubject struct {
	Label      string // "Email 2: " before each message of an automation's email; "" for a send
	From       string
	HasSender  bool
	PostalAddr string
	HTML       string
	// audience counts the send's recipients (nil: not a send, or no
	// audience chosen); read only when the From domain's warm-up plan
	// caps today.
	audience func(ctx context.Context) (int64, error)
}

// Blocks reports whether the account's failed checks refuse sends.
func (c *Checklist) Blocks(ctx context.Context, accountID int64) (bool, error) {
	var v int
	if err := c.db.R.WithContext(ctx).Table("users").Select("checklist_blocks").Where("id = ?", accountID).Scan(&v).Error; err != nil {
		return false, fmt.Errorf("checklist: blocks of account %d: %w", accountID, err)
	}
	return v == 1, nil
}

// SetBlocks turns blocking on or off for the account.
func (c *Checklist) SetBlocks(ctx context.Context, accountID int64, on bool) error {
	v := 0
	if on {
		v = 1
	}
	if err := c.db.W.WithContext(ctx).Table("users").Where("id = ?", accountID).
		Updates(map[string]any{"checklist_blocks": v, "updated_at": c.now()}).Error; err != nil {
		return fmt.Errorf("checklist: set blocks of account %d: %w", accountID, err)
	}
	return nil
}

// Evaluate checks the mails of subjects (one for a send, one per email of
// an automation) and the account's rates, in the rules' order; the From
// domain is checked once per domain.
func (c *Checklist) Evaluate(ctx context.Context, accountID int64, subjects []ChecklistSubject) ([]CheckItem, error) {
	var items []CheckItem
	seen := map[string]bool{}
	for _, s := range subjects {
		if s.From == "" {
			items = append(items, CheckItem{Rule: RuleFromDomain, Severity: SeverityWarning, Message: s.Label + "Choose a sender to check its domain's authentication."})
			continue
		}
		d := domainOf(s.From)
		if seen[d] {
			continue
		}
		seen[d] = true
		it, err := c.fromDomain(ctx, accountID, d)
		if err != nil {
			return nil, fmt.Errorf("checklist: evaluate: %w", err)
		}
		items = append(items, it)
		if s.audience != nil {
			wi, err := c.warmup(ctx, accountID, d, s.audience)
			if err != nil {
				return nil, fmt.Errorf("checklist: evaluate: %w", err)
			}
			items = append(items, wi...)
		}
	}
	orgAddr := ""
	for _, s := range subjects {
		if strings.Contains(s.HTML, orgAddressTag) {
			// ((org_address)) is the organisation profile's address
			// (unless a custom field of the account has that name).
			vals, err := core.OrgPlaceholderValues(ctx, c.db.R, accountID, "")
			if err != nil {
				return nil, fmt.Errorf("checklist: evaluate: %w", err)
			}
			orgAddr = strings.TrimSpace(vals["org_address"])
			break
		}
	}
	for _, s := range subjects {
		items = append(items, designItems(s, orgAddr)...)
	}
	rates, err := c.rates(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("checklist: evaluate: %w", err)
	}
	return append(items, rates...), nil
}

func domainOf(addr string) string {
	return strings.ToLower(strings.TrimSpace(addr[strings.LastIndexByte(addr, '@')+1:]))
}

// fromDomain is the authentication item of a sending domain.
func (c *Checklist) fromDomain(ctx context.Context, accountID int64, domain string) (CheckItem, error) {
	it := CheckItem{Rule: RuleFromDomain}
	if c.auth == nil {
		it.Severity, it.Message = SeverityWarning, "The domain "+domain+" has not been checked yet: Gmail and Yahoo refuse bulk mail without SPF or DKIM and a DMARC record."
		return it, nil
	}
	a, err := c.auth(ctx, accountID, domain)
	if err != nil {
		return it, fmt.Errorf("checklist: authentication of %s: %w", domain, err)
	}
	switch {
	case !a.Checked:
		it.Severity, it.Message = SeverityWarning, "The domain "+domain+" has not been checked yet: Gmail and Yahoo refuse bulk mail without SPF or DKIM and a DMARC record."
	case len(a.Problems) > 0:
		it.Severity, it.Message, it.Details = SeverityFailure, "The domain "+domain+" is not authenticated:", a.Problems
	case len(a.Warnings) > 0:
		it.Severity, it.Message, it.Details = SeverityWarning, "The domain "+domain+" is authenticated, but:", a.Warnings
	default:
		it.OK, it.Severity, it.Message = true, SeverityOK, "The domain "+domain+" is authenticated (SPF or DKIM, and DMARC)."
	}
	return it, nil
}

// orgAddressTag is the placeholder of the organisation profile's postal
// address: in a design it satisfies the postal-address rule as
// ((sender_address)) does, when the profile has an address.
const orgAddressTag = "((org_address))"

// designItems are the checks of one mail's design and postal address
// (orgAddr: the value of ((org_address)) for the account, "" when none).
func designItems(s ChecklistSubject, orgAddr string) []CheckItem {
	if strings.TrimSpace(s.HTML) == "" {
		return []CheckItem{{Rule: RuleText, Severity: SeverityWarning, Message: s.Label + "Choose a design to check its unsubscribe link, text and postal address."}}
	}
	st := designStats(s.HTML)
	var out []CheckItem
	add := func(rule string, sev Severity, msg string) {
		out = append(out, CheckItem{Rule: rule, OK: sev == SeverityOK, Severity: sev, Message: s.Label + msg})
	}
	if st.unsubscribe {
		add(RuleUnsubscribe, SeverityOK, "The design has an unsubscribe link.")
	} else {
		add(RuleUnsubscribe, SeverityFailure, "The design has no unsubscribe link: add ((unsubscribe_preferences)) to it. Gmail and Yahoo ask bulk mail for a visible way out.")
	}
	switch {
	case st.words == 0:
		add(RuleText, SeverityFailure, "The design has no readable text: spam filters and screen readers need words, not only images.")
	default:
		add(RuleText, SeverityOK, "The design has readable text ("+strconv.Itoa(st.words)+" "+plural(st.words, "word", "words")+").")
	}
	switch {
	case st.images > 0 && st.words < minWords:
		add(RuleImageOnly, SeverityWarning, fmt.Sprintf("The design is mostly images (%d %s, %d %s): spam filters distrust image-only mail; write at least %d words of text.",
			st.images, plural(st.images, "image", "images"), st.words, plural(st.words, "word", "words"), minWords))
	default:
		add(RuleImageOnly, SeverityOK, "The design is not image-only.")
	}
	addr := strings.TrimSpace(s.PostalAddr)
	orgTag := strings.Contains(s.HTML, orgAddressTag)
	switch {
	case orgTag && orgAddr != "":
		add(RulePostalAddress, SeverityOK, "The design shows the organisation's postal address.")
	case orgTag && !st.senderAddress && (addr == "" || !strings.Contains(s.HTML, addr)):
		add(RulePostalAddress, SeverityFailure, "The design shows ((org_address)), but the organisation profile has no postal address: add it on the account page.")
	case !s.HasSender:
		add(RulePostalAddress, SeverityWarning, "Choose a sender to check the postal address.")
	case addr == "":
		add(RulePostalAddress, SeverityFailure, "The sender has no postal address: add it on the sender's page. Anti-spam laws (CAN-SPAM, CASL) ask for one in every mail.")
	case !st.senderAddress && !strings.Contains(s.HTML, addr):
		add(RulePostalAddress, SeverityFailure, "The design does not show the sender's postal address: add ((sender_address)) to its footer.")
	default:
		add(RulePostalAddress, SeverityOK, "The design shows the sender's postal address.")
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// designFacts is what the design checks read of an HTML design.
type designFacts struct {
	words, images              int
	unsubscribe, senderAddress bool
}

// designStats counts the words a reader sees (not the head, styles,
// scripts or placeholders; alt texts do not count: they are shown only
// when images are not), the images, and finds the unsubscribe and postal
// address placeholders anywhere (a link's href or the text).
func designStats(src string) designFacts {
	f := designFacts{
		unsubscribe:   strings.Contains(src, "((unsubscribe_preferences))"),
		senderAddress: strings.Contains(src, "((sender_address))"),
	}
	z := html.NewTokenizer(strings.NewReader(src))
	skip := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return f
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			switch atom.Lookup(name) {
			case atom.Img:
				f.images++
			case atom.Head, atom.Style, atom.Script, atom.Title:
				if tt == html.StartTagToken {
					skip++
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch atom.Lookup(name) {
			case atom.Head, atom.Style, atom.Script, atom.Title:
				if skip > 0 {
					skip--
				}
			}
		case html.TextToken:
			if skip == 0 {
				f.words += countWords(string(z.Text()))
			}
		}
	}
}

// countWords counts the runs of text holding a letter, placeholders left
// out ("((first_name))" is not a word a reader sees as written).
func countWords(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		if strings.HasPrefix(w, "((") && strings.Contains(w, "))") {
			continue
		}
		if strings.IndexFunc(w, unicode.IsLetter) >= 0 {
			n++
		}
	}
	return n
}

// AccountRates are the counters of an account's sends first sent within
// the window: every single send and automation email, deleted ones too
// (reputation does not forget them).
type AccountRates struct {
	Delivered, Bounces, Complaints int64
}

// Rates sums the account's sends' counters over the last 30 days (index
// single_sends_user_sent).
func (c *Checklist) Rates(ctx context.Context, accountID int64) (AccountRates, error) {
	var r AccountRates
	since := models.DateTime{Time: c.now().Add(-rateWindow).UTC()}
	err := c.db.R.WithContext(ctx).Model(&models.SingleSend{}).
		Select("COALESCE(SUM(delivered), 0) AS delivered, COALESCE(SUM(bounces), 0) AS bounces, COALESCE(SUM(spam_reports), 0) AS complaints").
		Where("user_id = ? AND sent_at >= ?", accountID, since).Scan(&r).Error
	if err != nil {
		return r, fmt.Errorf("checklist: rates of account %d: %w", accountID, err)
	}
	return r, nil
}

// rates are the items of the account's hard-bounce and complaint rates.
func (c *Checklist) rates(ctx context.Context, accountID int64) ([]CheckItem, error) {
	r, err := c.Rates(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if r.Delivered == 0 {
		return []CheckItem{
			{Rule: RuleBounceRate, OK: true, Severity: SeverityOK, Message: "No mail delivered in the last 30 days: no hard-bounce rate yet."},
			{Rule: RuleComplaintRate, OK: true, Severity: SeverityOK, Message: "No mail delivered in the last 30 days: no complaint rate yet."},
		}, nil
	}
	pct := func(n int64) string {
		return strconv.FormatFloat(100*float64(n)/float64(r.Delivered), 'f', 2, 64) + " %"
	}
	bounce := CheckItem{Rule: RuleBounceRate, OK: true, Severity: SeverityOK}
	bOf := fmt.Sprintf(" (%d of %d delivered in the last 30 days)", r.Bounces, r.Delivered)
	if r.Bounces*1000 >= r.Delivered*bounceLimitPermille {
		bounce.OK, bounce.Severity = false, SeverityFailure
		bounce.Message = "Your hard-bounce rate is " + pct(r.Bounces) + bOf + ", at or above 2 %: mailbox providers read it as an old or bought list. Remove the addresses you are not sure of before sending."
	} else {
		bounce.Message = "Your hard-bounce rate is " + pct(r.Bounces) + bOf + ", under 2 %."
	}
	cmp := CheckItem{Rule: RuleComplaintRate, OK: true, Severity: SeverityOK}
	cOf := fmt.Sprintf(" (%d of %d delivered in the last 30 days)", r.Complaints, r.Delivered)
	switch {
	case r.Complaints*1000 >= r.Delivered*complaintLimitPermille:
		cmp.OK, cmp.Severity = false, SeverityFailure
		cmp.Message = "Your spam-complaint rate is " + pct(r.Complaints) + cOf + ", at or above 0.3 %: Gmail and Yahoo refuse bulk mail from senders over it. Send only to people who asked for this mail."
	case r.Complaints*1000 > r.Delivered*complaintWarnPermille:
		cmp.OK, cmp.Severity = false, SeverityWarning
		cmp.Message = "Your spam-complaint rate is " + pct(r.Complaints) + cOf + ", above the 0.1 % Gmail and Yahoo ask senders to stay under (they refuse mail at 0.3 %)."
	default:
		cmp.Message = "Your spam-complaint rate is " + pct(r.Complaints) + cOf + ", at most 0.1 %."
	}
	return []CheckItem{bounce, cmp}, nil
}

// Failures are the messages of the failed items, in order.
func Failures(items []CheckItem) []string {
	var out []string
	for _, it := range items {
		if it.Severity == SeverityFailure {
			out = append(out, it.Text())
		}
	}
	return out
}

// checklistRefusal is the validation error of a blocked send: one message per
// failure under "checklist"; nil when nothing failed.
func checklistRefusal(items []CheckItem) error {
	msgs := Failures(items)
	if len(msgs) == 0 {
		return nil
	}
	reasons := make([]core.Reason, len(msgs))
	return &core.Error{Code: core.CodeValidation, Message: "The pre-send checklist failed.", Fields: map[string][]string{ChecklistField: msgs},
		Reasons: map[string][]core.Reason{ChecklistField: reasons}}
}

// sendSubject is what a built send (models.SingleSend) is checked on.
func sendSubject(db *core.DB, ss *models.SingleSend) ChecklistSubject {
	s := ChecklistSubject{From: ss.FromSender, HasSender: ss.FromSender != ""}
	if ss.SenderAddress != nil {
		s.PostalAddr = *ss.SenderAddress
	}
	if ss.TemplateHTML != nil {
		s.HTML = *ss.TemplateHTML
	}
	s.audience = func(ctx context.Context) (int64, error) {
		if ss.Status >= models.SendRunning {
			return ss.Triggered, nil
		}
		return engine.CountAudience(ctx, db, ss)
	}
	return s
}

// ForSend evaluates a send as built from a valid body: its design, and
// each A/B variant's own design as a mail of its own ("Variant B: ").
func (c *Checklist) ForSend(ctx context.Context, accountID int64, ss *models.SingleSend) ([]CheckItem, error) {
	base := sendSubject(c.db, ss)
	subjects := []ChecklistSubject{base}
	for i, d := range ss.ABDesigns {
		if d != "" {
			subjects = append(subjects, ChecklistSubject{From: base.From, HasSender: base.HasSender, PostalAddr: base.PostalAddr, HTML: d,
				Label: "Variant " + string(rune('A'+i)) + ": "})
		}
	}
	return c.Evaluate(ctx, accountID, subjects)
}

// ForInput evaluates a send's form as it stands (the console's live
// panel): what is not chosen yet is reported as such, never refused.
func (c *Checklist) ForInput(ctx context.Context, accountID int64, in SingleSendInput) ([]CheckItem, error) {
	s := ChecklistSubject{HTML: in.TemplateHTML}
	if strings.TrimSpace(s.HTML) == "" && strings.TrimSpace(in.TemplateJSON) != "" {
		s.HTML = htmlOfJSON(in.TemplateJSON)
	}
	if strings.TrimSpace(s.HTML) == "" {
		if id, err := strconv.ParseInt(strings.TrimSpace(in.TemplateID), 10, 64); err == nil {
			if d, err := (Templates{}).Design(id); err == nil {
				s.HTML = d.HTMLCode
			}
		}
	}
	if id, err := core.ParseID(in.SenderID); err == nil {
		snd, err := deliverability.Sender(ctx, c.db.R, accountID, id)
		switch {
		case err == nil:
			s.From, s.HasSender, s.PostalAddr = snd.FromEmail, true, postalAddress(snd)
		case !core.IsNotFound(err):
			return nil, fmt.Errorf("checklist: sender %d: %w", id, err)
		}
	}
	if ts, ok := ParseTargets(nonBlank(in.RecipientID)); ok && len(ts) > 0 {
		ex, ok := ParseTargets(nonBlank(in.ExcludeRecipientID))
		if !ok {
			ex = nil
		}
		group, _ := core.ParseID(in.UnsubscribeGroupID)
		s.audience = func(ctx context.Context) (int64, error) {
			return engine.CountAudience(ctx, c.db, &models.SingleSend{UserID: accountID, RecipientID: ts, ExcludeSpecificRecipientID: ex, UnsubscribeGroupID: group})
		}
	}
	return c.Evaluate(ctx, accountID, []ChecklistSubject{s})
}

// warmup is the warm-up rule of a send from domain: nothing when the
// domain has no plan capping today; a warning, with the days the send
// will take, when its audience is larger than what is left of today's
// cap.
func (c *Checklist) warmup(ctx context.Context, accountID int64, domain string, audience func(context.Context) (int64, error)) ([]CheckItem, error) {
	days, _, _, err := deliverability.WarmupDaysFor(ctx, c.db, c.now(), accountID, domain, 1)
	if err != nil || days == 0 {
		return nil, err
	}
	n, err := audience(ctx)
	if err != nil {
		return nil, err
	}
	days, limit, left, err := deliverability.WarmupDaysFor(ctx, c.db, c.now(), accountID, domain, n)
	if err != nil || days == 0 {
		return nil, err
	}
	it := CheckItem{Rule: RuleWarmup, OK: days <= 1, Severity: SeverityOK,
		Message: fmt.Sprintf("The domain %s is warming up: today's cap of %d leaves %d, enough for this send's %d recipients.", domain, limit, left, n)}
	if !it.OK {
		it.Severity = SeverityWarning
		it.Message = fmt.Sprintf("The domain %s is warming up: today's cap is %d (%d left) and this send has %d recipients, so it will take %d days; the rest waits for the next days' caps.",
			domain, limit, left, n, days)
	}
	return []CheckItem{it}, nil
}

// ForAutomation evaluates every email of an automation, each email's
// messages led by its number. Errors: ErrNotFound.
func (c *Checklist) ForAutomation(ctx context.Context, accountID int64, utr string) ([]CheckItem, error) {
	a, err := (&Automations{db: c.db}).Get(ctx, accountID, utr)
	if err != nil {
		return nil, fmt.Errorf("checklist: automation: %w", err)
	}
	return c.forAutomation(ctx, c.db.R, a)
}

func (c *Checklist) forAutomation(ctx context.Context, q *gorm.DB, a *models.Automation) ([]CheckItem, error) {
	rows, err := record.OrderedSchedules(q.WithContext(ctx), a.ID)
	if err != nil {
		return nil, fmt.Errorf("checklist: automation: %w", err)
	}
	subjects := make([]ChecklistSubject, 0, len(rows))
	n := 0
	for _, r := range rows {
		if record.IsBranch(&r) {
			continue // no email to check
		}
		n++
		s := ChecklistSubject{Label: "Email " + strconv.Itoa(n) + ": "}
		if r.TemplateHTML != nil {
			s.HTML = *r.TemplateHTML
		}
		if r.SenderID != 0 {
			snd, err := deliverability.Sender(ctx, q, a.UserID, r.SenderID)
			switch {
			case err == nil:
				s.From, s.HasSender, s.PostalAddr = snd.FromEmail, true, postalAddress(snd)
			case !core.IsNotFound(err):
				return nil, fmt.Errorf("checklist: sender %d of automation %d: %w", r.SenderID, a.ID, err)
			}
		}
		subjects = append(subjects, s)
	}
	return c.Evaluate(ctx, a.UserID, subjects)
}

// enforceSend refuses a built send that fails a check when the account
// blocks on the checklist; nil otherwise (and without evaluating when it
// does not block, so an account that never turned it on pays one read).
func (c *Checklist) enforceSend(ctx context.Context, accountID int64, ss *models.SingleSend) error {
	if c == nil {
		return nil
	}
	on, err := c.Blocks(ctx, accountID)
	if err != nil {
		return fmt.Errorf("checklist: enforce: %w", err)
	}
	if !on {
		return nil
	}
	items, err := c.ForSend(ctx, accountID, ss)
	if err != nil {
		return fmt.Errorf("checklist: enforce: %w", err)
	}
	return checklistRefusal(items)
}

// enforceAutomation is enforceSend for an automation about to go live.
func (c *Checklist) enforceAutomation(ctx context.Context, a *models.Automation) error {
	if c == nil {
		return nil
	}
	on, err := c.Blocks(ctx, a.UserID)
	if err != nil {
		return fmt.Errorf("checklist: enforce: %w", err)
	}
	if !on {
		return nil
	}
	items, err := c.forAutomation(ctx, c.db.R, a)
	if err != nil {
		return fmt.Errorf("checklist: enforce: %w", err)
	}
	return checklistRefusal(items)
}
