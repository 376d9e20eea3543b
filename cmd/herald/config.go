package main

import (
	"cmp"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"herald/delivery"
	"herald/service"
	"herald/web"
	"herald/world"
)

// config is what the environment sets (decisions.md section 1).
type config struct {
	Addr     string // HERALD_ADDR
	Database string // HERALD_DATABASE: SQLite path or postgres:// URL
	BaseURL  string // HERALD_BASE_URL: the public address put in mails
	SMTPURL  string // HERALD_SMTP_URL: one or more relays separated by spaces; unset = the outbox
	// HeloName is HERALD_HELO_NAME: the name herald gives the relay in
	// EHLO; default the host of HERALD_BASE_URL (an IP as "[192.0.2.1]").
	HeloName string
	// SMTPMaxConns is HERALD_SMTP_MAX_CONNS: connections to the relay.
	SMTPMaxConns int
	// MailFrom is HERALD_MAIL_FROM: the address of herald's own mail
	// (sender verification); default no-reply@<host of HERALD_BASE_URL>.
	MailFrom string
	APIRate  float64 // HERALD_API_RATE: API requests per second per key
	// MaxUploadMB bounds a CSV upload (HERALD_MAX_UPLOAD_MB).
	MaxUploadMB int64
	LogLevel    slog.Level
	// SendRate is HERALD_SEND_RATE: messages per second per account, 0 no limit.
	SendRate float64
	// BounceAddress is HERALD_BOUNCE_ADDRESS: the return path of every
	// campaign and automation message is <local>+<token>@<domain> of it
	// (VERP), and herald's own mail goes out from it as it is. Default
	// bounces@<host of HERALD_BASE_URL>.
	BounceAddress string
	// SoftBounceLimit is HERALD_SOFT_BOUNCE_LIMIT: that many soft bounces
	// of one address within 30 days suppress it (default 3).
	SoftBounceLimit int
	// MetricsToken is HERALD_METRICS_TOKEN: when set, /metrics answers only
	// a request with "Authorization: Bearer <token>".
	MetricsToken string
	// RetryBackoff (HERALD_RETRY_BACKOFF) is the first wait after a
	// temporary failure, doubling up to RetryWindow (HERALD_RETRY_WINDOW).
	RetryBackoff, RetryWindow time.Duration
	// BounceMailbox is HERALD_BOUNCE_MAILBOX: an IMAP or POP3 mailbox that
	// receives bounces, read every minute (unset: none).
	BounceMailbox string
	// TrustedProxies is HERALD_TRUSTED_PROXIES: the reverse proxies whose
	// X-Forwarded-For names the client (login throttling, per-IP limits).
	TrustedProxies []netip.Prefix
	// MachineRanges is HERALD_MACHINE_RANGES: address ranges whose opens
	// and clicks are a machine's (a scanner the built-in rules miss).
	MachineRanges []netip.Prefix
	// Countries is read from HERALD_GEOIP and HERALD_GEOIP_V6 (default:
	// Debian's geoip-database files; "off": none): the country of opens
	// and clicks in the reports. nil when no file is there.
	Countries *world.GeoIP
	// EventWebhookPrivate is HERALD_EVENT_WEBHOOK_PRIVATE=1: event
	// webhook endpoints may be loopback or private addresses.
	EventWebhookPrivate bool
	// Signup is HERALD_SIGNUP (default on): off closes the console's
	// sign-up; `herald account create` still opens accounts.
	Signup bool
	// SecretKey is HERALD_SECRET_KEY: a key kept outside the database
	// (at least 32 characters) that seals two-factor secrets; unset, two-
	// factor login cannot be turned on.
	SecretKey string
	// Inbound is the inbound SMTP server (HERALD_INBOUND_*, inbound.go).
	Inbound inboundConfig
	// Webhooks are the provider webhooks' secrets (decisions.md 7):
	// HERALD_SES_TOPIC_ARN (comma-separated), HERALD_SES_CERT_FILE,
	// HERALD_SENDGRID_VERIFICATION_KEY, HERALD_WEBHOOK_USER,
	// HERALD_WEBHOOK_PASSWORD, HERALD_MAILGUN_SIGNING_KEY. web.New checks
	// the certificate and the key.
	Webhooks web.WebhookOptions
	// DNSServer is HERALD_DNS_SERVER (host:port): the DNS server the
	// domain checks ask; unset: the name servers of /etc/resolv.conf.
	DNSServer string
}

func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		Addr:         or(getenv("HERALD_ADDR"), ":8080"),
		Database:     or(getenv("HERALD_DATABASE"), "data/herald.db"),
		BaseURL:      strings.TrimRight(or(getenv("HERALD_BASE_URL"), "http://localhost:8080"), "/"),
		SMTPURL:      getenv("HERALD_SMTP_URL"),
		MetricsToken: getenv("HERALD_METRICS_TOKEN"),
		APIRate:      100,
		MaxUploadMB:  1024,
		SMTPMaxConns: 10,
		RetryBackoff: time.Minute,
		RetryWindow:  24 * time.Hour,
	}
	if v := getenv("HERALD_SEND_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 {
			return c, fmt.Errorf("HERALD_SEND_RATE: %q is not a number of messages per second", v)
		}
		c.SendRate = r
	}
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{{"HERALD_RETRY_BACKOFF", &c.RetryBackoff}, {"HERALD_RETRY_WINDOW", &c.RetryWindow}} {
		if v := getenv(d.name); v != "" {
			t, err := time.ParseDuration(v)
			if err != nil || t <= 0 {
				return c, fmt.Errorf("%s: %q is not a duration such as 1m or 24h", d.name, v)
			}
			*d.dst = t
		}
	}
	if v := getenv("HERALD_SMTP_MAX_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c, fmt.Errorf("HERALD_SMTP_MAX_CONNS: %q is not a positive number", v)
		}
		c.SMTPMaxConns = n
	}
	c.SoftBounceLimit = 3
	if v := getenv("HERALD_SOFT_BOUNCE_LIMIT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c, fmt.Errorf("HERALD_SOFT_BOUNCE_LIMIT: %q is not a positive number", v)
		}
		c.SoftBounceLimit = n
	}
	if v := getenv("HERALD_MAX_UPLOAD_MB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return c, fmt.Errorf("HERALD_MAX_UPLOAD_MB: %q is not a positive number of megabytes", v)
		}
		c.MaxUploadMB = n
	}
	if v := getenv("HERALD_API_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 {
			return c, fmt.Errorf("HERALD_API_RATE: %q is not a number of requests per second", v)
		}
		c.APIRate = r
	}
	if v := getenv("HERALD_LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return c, fmt.Errorf("HERALD_LOG_LEVEL: %w", err)
		}
	}
	if !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		return c, fmt.Errorf("HERALD_BASE_URL: %q must start with http:// or https://", c.BaseURL)
	}
	proxies, err := web.ParseTrustedProxies(getenv("HERALD_TRUSTED_PROXIES"))
	if err != nil {
		return c, fmt.Errorf("HERALD_TRUSTED_PROXIES: %w", err)
	}
	c.TrustedProxies = proxies
	if c.MachineRanges, err = delivery.ParseMachineRanges(getenv("HERALD_MACHINE_RANGES")); err != nil {
		return c, fmt.Errorf("HERALD_MACHINE_RANGES: %w", err)
	}
	v4, v6 := cmp.Or(getenv("HERALD_GEOIP"), world.DebianGeoIP), cmp.Or(getenv("HERALD_GEOIP_V6"), world.DebianGeoIPv6)
	if v4 == "off" {
		v4 = ""
	}
	if v6 == "off" {
		v6 = ""
	}
	if c.Countries, err = world.OpenGeoIP(v4, v6); err != nil {
		return c, fmt.Errorf("HERALD_GEOIP: %w", err)
	}
	c.Webhooks = web.WebhookOptions{
		SESCertFile:             getenv("HERALD_SES_CERT_FILE"),
		SendGridVerificationKey: getenv("HERALD_SENDGRID_VERIFICATION_KEY"),
		WebhookUser:             getenv("HERALD_WEBHOOK_USER"),
		WebhookPassword:         getenv("HERALD_WEBHOOK_PASSWORD"),
		MailgunSigningKey:       getenv("HERALD_MAILGUN_SIGNING_KEY"),
	}
	for _, arn := range strings.Split(getenv("HERALD_SES_TOPIC_ARN"), ",") {
		if arn = strings.TrimSpace(arn); arn != "" {
			if !strings.HasPrefix(arn, "arn:") {
				return c, fmt.Errorf("HERALD_SES_TOPIC_ARN: %q is not an ARN (arn:aws:sns:<region>:<account>:<topic>)", arn)
			}
			c.Webhooks.SESTopicARNs = append(c.Webhooks.SESTopicARNs, arn)
		}
	}
	if (c.Webhooks.WebhookUser == "") != (c.Webhooks.WebhookPassword == "") {
		return c, fmt.Errorf("HERALD_WEBHOOK_USER and HERALD_WEBHOOK_PASSWORD go together: set both or neither")
	}
	c.MailFrom = or(getenv("HERALD_MAIL_FROM"), service.DefaultSystemFrom(c.BaseURL))
	c.BounceAddress = or(getenv("HERALD_BOUNCE_ADDRESS"), service.DefaultBounceAddress(c.BaseURL))
	if _, err := delivery.NewVERP(c.BounceAddress, nil); err != nil {
		return c, fmt.Errorf("HERALD_BOUNCE_ADDRESS: %w", err)
	}
	c.HeloName = delivery.HeloName(c.BaseURL) // "" (an odd host): the pool's "localhost"
	if v := getenv("HERALD_HELO_NAME"); v != "" {
		if !delivery.ValidHeloName(v) {
			return c, fmt.Errorf("HERALD_HELO_NAME: %q is not a host name or an address literal such as [192.0.2.1]", v)
		}
		c.HeloName = v
	}
	if _, err := delivery.ParseRelays(c.SMTPURL); c.SMTPURL != "" && err != nil {
		return c, fmt.Errorf("HERALD_SMTP_URL: %w", err)
	}
	if c.Inbound, err = loadInboundConfig(getenv); err != nil {
		return c, err
	}
	switch v := getenv("HERALD_EVENT_WEBHOOK_PRIVATE"); v {
	case "", "0", "false":
	case "1", "true":
		c.EventWebhookPrivate = true
	default:
		return c, fmt.Errorf("HERALD_EVENT_WEBHOOK_PRIVATE: %q must be 1 or 0", v)
	}
	switch v := strings.ToLower(getenv("HERALD_SIGNUP")); v {
	case "", "on", "1", "true":
		c.Signup = true
	case "off", "0", "false":
	default:
		return c, fmt.Errorf("HERALD_SIGNUP: %q must be on or off", v)
	}
	c.SecretKey = getenv("HERALD_SECRET_KEY")
	if c.SecretKey != "" && len(c.SecretKey) < 32 {
		return c, fmt.Errorf("HERALD_SECRET_KEY: at least 32 characters (for example the output of `openssl rand -hex 32`)")
	}
	c.BounceMailbox = getenv("HERALD_BOUNCE_MAILBOX")
	if c.DNSServer = getenv("HERALD_DNS_SERVER"); c.DNSServer != "" {
		if _, err := service.NewResolver(c.DNSServer); err != nil {
			return c, fmt.Errorf("HERALD_DNS_SERVER: %w", err)
		}
	}
	if _, err := delivery.ParseMailboxURL(c.BounceMailbox); c.BounceMailbox != "" && err != nil {
		return c, err // names HERALD_BOUNCE_MAILBOX, never the password
	}
	return c, nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// domainChecks is what the DNS checks of sending domains read.
func (c config) domainChecks() service.DomainCheckConfig {
	dc := service.DomainCheckConfig{DNSServer: c.DNSServer, Inbound: c.Inbound.Addr != ""}
	// A listener on a named host (not ":2525" nor 0.0.0.0) is herald's
	// own inbound host: an MX naming it reaches herald.
	if h, _, err := net.SplitHostPort(c.Inbound.Addr); err == nil && h != "" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsUnspecified() {
			dc.InboundHost = h
		}
	}
	// With several relays, the first names the relay checked.
	if rs, err := delivery.ParseRelays(c.SMTPURL); c.SMTPURL != "" && err == nil {
		dc.RelayHost = rs[0].SMTP.Host
	}
	return dc
}

// hearing is what the console's bounce setup page shows of the
// configuration: which ways of hearing back are on, without secrets.
func (c config) hearing() web.Hearing {
	h := web.Hearing{InboundAddr: c.Inbound.Addr, InboundTLS: c.Inbound.TLS != nil,
		SendGrid: c.Webhooks.SendGridVerificationKey != "", Postmark: c.Webhooks.WebhookUser != "", Mailgun: c.Webhooks.MailgunSigningKey != "",
		SESPinned: c.Webhooks.SESCertFile != "", SESTopics: len(c.Webhooks.SESTopicARNs)}
	if u, err := delivery.ParseMailboxURL(c.BounceMailbox); c.BounceMailbox != "" && err == nil {
		h.Mailbox = u.String() // without the password
	}
	return h
}

// baseURLMismatch warns when HERALD_BASE_URL names this machine on another
// port than HERALD_ADDR listens on: every link put into a mail (tracking,
// unsubscribe, verification) would then lead nowhere. "" when they agree
// or the base URL names another host (a proxy in front).
func baseURLMismatch(addr, baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	host := u.Hostname()
	local := host == "localhost" || strings.HasSuffix(host, ".localhost")
	if ip := net.ParseIP(host); ip != nil {
		local = ip.IsLoopback() || ip.IsUnspecified()
	}
	if !local {
		return ""
	}
	_, listen, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if port == listen {
		return ""
	}
	return "HERALD_BASE_URL names this machine on port " + port + " but HERALD_ADDR listens on " + listen +
		": links in mails will not reach herald; set HERALD_BASE_URL to http://localhost:" + listen + " (or the public address of your proxy)"
}

// mail is how mail leaves, for the console and the log: the relays' URLs
// without their passwords, "" for the outbox.
func (c config) mail() string {
	rs, err := delivery.ParseRelays(c.SMTPURL)
	if c.SMTPURL == "" || err != nil {
		return ""
	}
	var out []string
	for _, r := range rs {
		out = append(out, r.SMTP.String())
	}
	return strings.Join(out, " ")
}
