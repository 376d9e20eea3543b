package delivery

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Event is one object of an events webhook POST (decisions.md 7). The
// JSON keys are the contract: event, event_id, timestamp, email,
// single_send_utr or automation_utr, message_id, and for some kinds url,
// reason, status and group_id.
type Event struct {
	Event         string `json:"event"`
	EventID       string `json:"event_id"`
	Timestamp     int64  `json:"timestamp"`
	Email         string `json:"email"`
	SingleSendUtr string `json:"single_send_utr,omitempty"`
	AutomationUtr string `json:"automation_utr,omitempty"`
	MessageID     string `json:"message_id,omitempty"`
	URL           string `json:"url,omitempty"`
	Reason        string `json:"reason,omitempty"`
	Status        string `json:"status,omitempty"`
	GroupID       *int64 `json:"group_id,omitempty"`
	// Machine is set on open and click events: true when herald took the
	// open or click for a privacy proxy's or a link scanner's.
	Machine *bool `json:"machine,omitempty"`
}

// EventBatch is the events one process claimed for one endpoint: at most
// MaxEventBatch, in the endpoint's order.
type EventBatch struct {
	WebhookID int64
	AccountID int64
	URL       string
	Secret    string
	IDs       []int64 // the event rows, in the order of Events
	Events    []Event
	Attempts  int       // the most attempts any of them had before this one
	Oldest    time.Time // when the oldest of them was recorded
}

// EventAttempt is how one POST went.
type EventAttempt struct {
	At         time.Time
	StatusCode int // 0 when no answer came
	Err        string
	Latency    time.Duration
}

// OK reports whether the endpoint took the batch (a 2xx answer).
func (a EventAttempt) OK() bool { return a.Err == "" && a.StatusCode >= 200 && a.StatusCode < 300 }

// EventStore is what the dispatcher needs from the database; the service
// layer implements it. Claims are leases: a claimed row comes due again
// after lease unless Finish settles it first, so a process that dies
// loses nothing (at least once).
type EventStore interface {
	// DueWebhooks returns endpoints with events due at now (at most n).
	DueWebhooks(ctx context.Context, now time.Time, n int) ([]int64, error)
	// Claim takes up to n due events of one endpoint for worker until
	// now+lease; an empty batch when none are due.
	Claim(ctx context.Context, webhookID int64, worker string, now time.Time, lease time.Duration, n int) (*EventBatch, error)
	// Finish records the attempt and settles the batch's rows still held
	// by worker: delivered when a.OK(); else due again at retryAt, or
	// failed for those recorded before giveUpBefore.
	Finish(ctx context.Context, b *EventBatch, worker string, a EventAttempt, retryAt, giveUpBefore time.Time) error
}

// MaxEventBatch is the most events one POST carries (decisions.md 7).
const MaxEventBatch = 1000

// EventTimeout is how long one POST may take (decisions.md 7).
const EventTimeout = 10 * time.Second

// EventGiveUp is how long an event is retried before it is marked failed.
const EventGiveUp = 24 * time.Hour

// SignEvents returns the Herald-Signature header of body sent at t:
// t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>.
func SignEvents(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

// EventPoster POSTs signed batches of events.
type EventPoster struct {
	Client  *http.Client  // nil: eventClient, or publicEventClient
	Timeout time.Duration // how long one POST may take; 0: EventTimeout
	// PublicOnly refuses to connect to an address that is not public
	// (PublicAddr: loopback, private, link-local such as a cloud's
	// metadata service, CGNAT, unique local, multicast, NAT64 and the
	// other special-purpose ranges): an account must not make herald
	// reach into the network it runs in. Checked on the address dialed,
	// after DNS, so a name cannot point around it.
	PublicOnly bool
}

// eventClient does not follow redirects: a 3xx is the endpoint's answer
// (not 2xx: retried), never a POST turned into a GET elsewhere.
var eventClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// publicEventClient is eventClient that connects to public addresses only,
// and never through a proxy (which would connect for it).
var publicEventClient = &http.Client{
	CheckRedirect: eventClient.CheckRedirect,
	Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: EventTimeout, Control: refuseNonPublic}).DialContext,
		TLSHandshakeTimeout: EventTimeout,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	},
}

// ErrNonPublicAddress is the error of a connection PublicOnly refused.
var ErrNonPublicAddress = errors.New("the endpoint's address is not public: herald does not post events into its own network")

func refuseNonPublic(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !PublicAddr(ip) {
		return ErrNonPublicAddress
	}
	return nil
}

// maxAnswer is how much of an endpoint's answer is read (and kept as the
// error of a failed attempt).
const maxAnswer = 512

// Post sends events to url signed with secret at now and reports how it
// went; it waits at most Timeout for the answer.
func (p *EventPoster) Post(ctx context.Context, url, secret string, events []Event, now time.Time) EventAttempt {
	a := EventAttempt{At: now}
	body, err := json.Marshal(events)
	if err != nil {
		a.Err = err.Error()
		return a
	}
	client := p.Client
	switch {
	case client != nil:
	case p.PublicOnly:
		client = publicEventClient
	default:
		client = eventClient
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = EventTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		a.Err = err.Error()
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Herald-Events/1")
	req.Header.Set("Herald-Signature", SignEvents(secret, now, body))
	start := time.Now()
	resp, err := client.Do(req)
	a.Latency = time.Since(start)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			a.Err = fmt.Sprintf("no answer within %s", timeout)
		} else if errors.Is(err, ErrNonPublicAddress) {
			a.Err = ErrNonPublicAddress.Error() + " (HERALD_EVENT_WEBHOOK_PRIVATE=1 allows it)"
		} else {
			a.Err = err.Error()
		}
		return a
	}
	defer resp.Body.Close()
	a.StatusCode = resp.StatusCode
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // lets the connection be reused
	if !a.OK() {
		a.Err = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, bytes.ToValidUTF8(bytes.TrimSpace(head), nil))
	}
	return a
}

// Dispatcher drains the events queue: every Tick it finds endpoints with
// due events, claims at most MaxEventBatch of one endpoint's events at a
// time, POSTs them signed, and settles them: delivered on 2xx, else
// retried with exponential backoff (Backoff, doubling, at most MaxBackoff)
// until EventGiveUp after they were recorded. Several processes may run
// one each over one database: claims keep them apart.
type Dispatcher struct {
	Store  EventStore
	Poster *EventPoster
	Worker string           // this process's name in claims
	Now    func() time.Time // nil: time.Now
	// Tick is how often the queue is read (1 s: a batch waits at most
	// about a second).
	Tick time.Duration
	// Lease is how long a claim holds (beyond EventTimeout, so that a
	// living process settles its batch first).
	Lease      time.Duration
	Backoff    time.Duration // the first retry's delay
	MaxBackoff time.Duration
	// Parallel is how many endpoints are served at once.
	Parallel int
	// AfterTick, when set, runs after each pass (the failing-endpoint
	// alerts).
	AfterTick func(ctx context.Context)
}

func (d *Dispatcher) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Dispatcher) defaults() {
	if d.Tick <= 0 {
		d.Tick = time.Second
	}
	if d.Lease <= 0 {
		d.Lease = time.Minute
	}
	if d.Backoff <= 0 {
		d.Backoff = 5 * time.Second
	}
	if d.MaxBackoff <= 0 {
		d.MaxBackoff = time.Hour
	}
	if d.Parallel <= 0 {
		d.Parallel = 8
	}
	if d.Poster == nil {
		d.Poster = &EventPoster{}
	}
}

// Run dispatches until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.defaults()
	t := time.NewTicker(d.Tick)
	defer t.Stop()
	for {
		if err := d.Pass(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("events: dispatch", "err", err)
		}
		if d.AfterTick != nil && ctx.Err() == nil {
			d.AfterTick(ctx)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// maxEndpointsPerPass bounds one pass; the next pass takes the others.
const maxEndpointsPerPass = 256

// Pass serves every endpoint with due events once: each one's due events
// go out in batches until none are left due or a POST fails. It returns
// when all are done (tests call it instead of Run).
func (d *Dispatcher) Pass(ctx context.Context) error {
	d.defaults()
	ids, err := d.Store.DueWebhooks(ctx, d.now(), maxEndpointsPerPass)
	if err != nil || len(ids) == 0 {
		return err
	}
	sem := make(chan struct{}, d.Parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, id := range ids {
		sem <- struct{}{}
		wg.Add(1)
		go func(id int64) {
			defer func() { <-sem; wg.Done() }()
			if err := d.serve(ctx, id); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}(id)
	}
	wg.Wait()
	return first
}

// serve drains one endpoint's due events, batch after batch, stopping at
// the first failed POST (its events wait for their retry).
func (d *Dispatcher) serve(ctx context.Context, webhookID int64) error {
	for ctx.Err() == nil {
		now := d.now()
		b, err := d.Store.Claim(ctx, webhookID, d.Worker, now, d.Lease, MaxEventBatch)
		if err != nil || b == nil || len(b.IDs) == 0 {
			return err
		}
		a := d.Poster.Post(ctx, b.URL, b.Secret, b.Events, now)
		if d.Now != nil {
			// A test clock: the latency is the wall clock's, the time the clock's.
			a.At = d.now()
		}
		retry := a.At.Add(d.backoff(b.Attempts + 1))
		if err := d.Store.Finish(context.WithoutCancel(ctx), b, d.Worker, a, retry, a.At.Add(-EventGiveUp)); err != nil {
			return err
		}
		if !a.OK() || len(b.IDs) < MaxEventBatch {
			return nil
		}
	}
	return nil
}

// backoff is the delay after the k-th failed attempt: Backoff, doubling
// each time, at most MaxBackoff.
func (d *Dispatcher) backoff(k int) time.Duration {
	b := d.Backoff
	for i := 1; i < k && b < d.MaxBackoff; i++ {
		b *= 2
	}
	return min(b, d.MaxBackoff)
}
