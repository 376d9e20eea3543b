package web

import (
	"net"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
	"herald/views/suppressions"
)

// Hearing is how herald is set up to hear back (decisions.md 7): what the
// setup page shows as on or off. It holds no secret.
type Hearing struct {
	InboundAddr string // HERALD_INBOUND_ADDR; "" off
	InboundTLS  bool   // STARTTLS offered (HERALD_INBOUND_TLS_CERT/_KEY)
	Mailbox     string // HERALD_BOUNCE_MAILBOX without its password; "" off
	// The provider webhooks whose secret is set (SES needs none).
	SendGrid, Postmark, Mailgun bool
	SESPinned                   bool // HERALD_SES_CERT_FILE is set
	SESTopics                   int  // topics of HERALD_SES_TOPIC_ARN
}

// bounceSetup shows what makes reports come back to herald for the
// account: the bounce domain's DNS, the relay's settings, each channel's
// state and each sender's alignment.
func (w *Web) bounceSetup(c *fiber.Ctx) error {
	st, err := w.svc.Bounces.Setup(c.UserContext(), accountID(c))
	if err != nil {
		return err
	}
	untied, err := w.svc.Feedback.Untied(c.UserContext())
	if err != nil {
		return err
	}
	h := w.opt.Hearing
	base := w.opt.BaseURL
	host := "herald.example.com"
	if u, err := url.Parse(base); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	local := st.Address[:strings.LastIndexByte(st.Address, '@')]
	s := suppressions.Setup{
		Address: st.Address, Domain: st.Domain, MX: st.MX, MXError: st.MXError, Last: st.Last, HTTPSWarning: service.OneClickWarning(base),
		Examples: []suppressions.Example{
			{What: "Return path of a message", Address: local + "+b<token>@" + st.Domain},
			{What: "List-Unsubscribe mail address", Address: local + "+u<token>@" + st.Domain},
		},
	}
	for _, a := range st.Senders {
		s.Senders = append(s.Senders, suppressions.Alignment{Domain: a.Domain, Verified: a.Verified, Aligned: a.Aligned})
	}
	s.Untied = suppressions.Untied{Days: service.UntiedDays, Reports: untied.Reports, Kept: untied.Kept, Mailbox: h.Mailbox != ""}
	for _, c := range untied.ByWhy {
		s.Untied.ByWhy = append(s.Untied.ByWhy, suppressions.WhyCount{Why: c.Why, N: c.N})
	}
	for _, c := range untied.BySender {
		s.Untied.BySender = append(s.Untied.BySender, suppressions.SenderCount{Source: c.Source, IP: c.RemoteIP, N: c.N})
	}
	for _, c := range untied.KeptWhy {
		s.Untied.KeptWhy = append(s.Untied.KeptWhy, suppressions.WhyCount{Why: c.Why, N: c.N})
	}

	port := "25"
	if h.InboundAddr != "" {
		if _, p, err := net.SplitHostPort(h.InboundAddr); err == nil && p != "" {
			port = p
		}
	}
	mxExplain := "Bounce reports, complaint reports and unsubscribe mails for " + st.Domain + " are delivered to this host, which must reach herald's inbound SMTP server on port 25."
	if port != "25" {
		mxExplain += " Herald listens on port " + port + ": forward port 25 to it, or put a relay in front (below)."
	}
	s.Records = []suppressions.Record{
		{ID: "mx", DNSRecord: views.DNSRecord{Purpose: "MX: where reports go", Explain: mxExplain, Type: "MX", Name: st.Domain, Value: "10 " + host + "."}},
		{ID: "spf", DNSRecord: views.DNSRecord{Purpose: "SPF: who may send with this return path", Type: "TXT", Name: st.Domain,
			Value:   w.svc.DomainChecks.SPFProposal(c.UserContext(), accountID(c), st.Domain),
			Explain: "Receiving servers check SPF against the return path's domain, " + st.Domain + ". It names where herald's mail leaves from, as the SPF record on a sender's page does; if the domain already has an SPF record, merge the two: a domain may publish only one."}},
	}

	inbound := suppressions.Channel{ID: "inbound", Name: "Inbound SMTP (bounce reports, complaints, unsubscribe mails)",
		Hint: "Off. Set HERALD_INBOUND_ADDR (for example :25) to receive reports by mail."}
	if h.InboundAddr != "" {
		inbound.On, inbound.Hint = true, ""
		inbound.Detail = "listening on " + h.InboundAddr
		if h.InboundTLS {
			inbound.Detail += ", STARTTLS offered"
		} else {
			inbound.Hint = "Set HERALD_INBOUND_TLS_CERT and HERALD_INBOUND_TLS_KEY to offer STARTTLS."
		}
	}
	mailbox := suppressions.Channel{ID: "mailbox", Name: "Bounce mailbox",
		Hint: "Off. When the return path lands in an ordinary mailbox, set HERALD_BOUNCE_MAILBOX (imaps://user:pass@host/INBOX or pop3s://user:pass@host); herald reads it every minute."}
	if h.Mailbox != "" {
		mailbox.On, mailbox.Detail, mailbox.Hint = true, "read every minute: "+h.Mailbox, ""
	}
	hook := func(id, name string, on bool, hint string) suppressions.Channel {
		c := suppressions.Channel{ID: id, Name: name, On: on, Detail: base + "/webhooks/" + id}
		if !on {
			c.Hint = hint
		}
		return c
	}
	ses := hook("ses", "Amazon SES (through SNS)", true, "")
	ses.Hint = "Subscribe this URL to the SNS topic of the identity's bounce, complaint and delivery notifications (HTTPS). Signatures are checked against Amazon's certificate"
	if h.SESPinned {
		ses.Hint += " pinned by HERALD_SES_CERT_FILE."
	} else {
		ses.Hint += ", fetched from sns.<region>.amazonaws.com."
	}
	if h.SESTopics == 0 {
		ses.Hint += " Set HERALD_SES_TOPIC_ARN to your topic: then only its notifications count and herald confirms the subscription itself (until then, open the SubscribeURL herald logs)."
	}
	s.Channels = []suppressions.Channel{inbound, mailbox, ses,
		hook("sendgrid", "SendGrid Event Webhook", h.SendGrid, "Off. Turn on the signed Event Webhook in SendGrid and set HERALD_SENDGRID_VERIFICATION_KEY to its verification key."),
		hook("postmark", "Postmark webhooks", h.Postmark, "Off. Set HERALD_WEBHOOK_USER and HERALD_WEBHOOK_PASSWORD, and give them to Postmark as the webhook's basic auth."),
		hook("mailgun", "Mailgun webhooks", h.Mailgun, "Off. Set HERALD_MAILGUN_SIGNING_KEY to the domain's HTTP webhook signing key."),
	}

	target := "[127.0.0.1]:" + port
	s.Relay = []suppressions.Snippet{
		{ID: "postfix", Title: "Postfix in front of herald",
			Explain: "When Postfix is the MX of " + st.Domain + " (or relays herald's mail and receives its reports), have it hand every mail for the bounce domain to herald's inbound server. Then run postmap /etc/postfix/transport and postfix reload.",
			Code:    "# /etc/postfix/main.cf\nrelay_domains = " + st.Domain + "\ntransport_maps = hash:/etc/postfix/transport\n\n# /etc/postfix/transport\n" + st.Domain + "    smtp:" + target},
		{ID: "relay", Title: "A relay that reports by mail",
			Explain: "Relays send their bounce reports (DSNs) to the return path. Keep the envelope sender herald sets: do not rewrite it (no sender_canonical_maps, no \"envelope from\" override in the relay's settings).",
			Code:    "Return-Path: " + local + "+b<token>@" + st.Domain},
	}
	return page(c, fiber.StatusOK, "Bounces & complaints", views.NavBounced, suppressions.SetupPage(s))
}
