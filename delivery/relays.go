package delivery

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"time"
)

// RelaysConfig builds a Relays.
type RelaysConfig struct {
	Relays []RelayConfig
	// LocalName is the EHLO name of a relay whose URL names none.
	LocalName string
	// MaxConns is the connections of a relay without max_conns=
	// (HERALD_SMTP_MAX_CONNS; default DefaultMaxConns).
	MaxConns int
	// Rates counts what each relay carried; nil: a MemoryRates, whose
	// limits hold for this process alone.
	Rates RateStore
	// Now is the clock of pauses and rate windows (default time.Now).
	Now func() time.Time
	// PauseMin and PauseMax bound a failing relay's pause: the first is
	// PauseMin (default 5 s), each failure of the probe that follows
	// doubles it, up to PauseMax (default 5 min).
	PauseMin, PauseMax time.Duration
	// Batch is how many tokens a relay with limits takes from Rates at
	// once (default 10); a relay without limits takes 5 × Batch, only to
	// count.
	Batch int
	// MaxWait is the longest a Send waits for a relay's next rate window
	// before it answers a temporary failure (the ledger retries later);
	// default 1 min.
	MaxWait time.Duration
	// ProbeEvery, when set, looks this often for relays whose pause is
	// over and probes them on a connection of their own (greeting, EHLO,
	// AUTH, MAIL FROM:<>, RSET; the connection then serves mail), so that
	// a relay comes back without waiting for a message to try it. 0: the
	// next message is the probe.
	ProbeEvery time.Duration
	Logger     *slog.Logger
}

// Relays is the Transport over several relays (HERALD_SMTP_URL with more
// than one URL, or one with name=, weight=, max_conns=, rate= or
// from_domains=). Each message goes to one relay:
//
//   - by its From domain, read from the message's From header (the
//     envelope sender is herald's bounce address, the same for every
//     account, so it says nothing of the sender): to the relays whose
//     from_domains name that domain, else to those without from_domains;
//   - among those, by weight (smooth weighted round robin, so the split
//     follows the weights exactly, message by message) over the relays
//     that are up and under their rate;
//   - a relay that refuses connections, fails TLS, AUTH or the greeting,
//     times out, drops the connection or answers 421 is paused: 5 s, then
//     doubling up to 5 min while the probe after each pause fails; a
//     success resumes it. The message goes to another relay in the same
//     Send when the failure came before the message was complete (the
//     relay cannot have taken it); after the final dot without an answer
//     (InFlight) it is not resent here: the ledger retries it as ever.
//   - once a pause is over the relay is probed: by the prober
//     (ProbeEvery) on a connection of its own, else by the next message;
//     the other messages keep away from the relay until it answered.
//
// When every relay that may carry a message is paused, or over its rate
// with the next window more than MaxWait away, Send answers a temporary
// failure at the connect stage, which the ledger retries with backoff.
type Relays struct {
	cfg    RelaysConfig
	relays []*relay
	rates  RateStore

	stop   chan struct{} // closed by Close: ends the prober
	probes sync.WaitGroup

	pick    sync.Mutex        // the round robin's weights
	lastSet map[uint64]uint64 // candidates → the relays of their last pick (bits of relay.index)
}

type relay struct {
	cfg     RelayConfig
	index   uint
	pool    *SMTPPool
	limits  []RateLimit // the configured ones, then N == 0 ones to count per minute and per day
	limited bool
	batch   int

	mu          sync.Mutex
	pausedUntil time.Time
	pause       time.Duration // the last pause; 0: up
	probing     bool
	lastErr     string
	lastErrAt   time.Time
	current     int // smooth weighted round robin (under Relays.pick)

	tok       sync.Mutex // held across a Take: one store round trip at a time per relay
	tokens    int
	tokAt     time.Time // when the batch was counted
	tokUntil  time.Time // when it expires: the end of its shortest window
	fullUntil time.Time // the store granted nothing until then
}

// NewRelays builds the relays of cfg; they dial lazily, on the first Send.
func NewRelays(cfg RelaysConfig) *Relays {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PauseMin <= 0 {
		cfg.PauseMin = 5 * time.Second
	}
	if cfg.PauseMax <= 0 {
		cfg.PauseMax = 5 * time.Minute
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 10
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = time.Minute
	}
	if cfg.MaxConns < 1 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	rs := &Relays{cfg: cfg, rates: cfg.Rates, lastSet: map[uint64]uint64{}, stop: make(chan struct{})}
	if rs.rates == nil {
		rs.rates = NewMemoryRates()
	}
	for _, rc := range cfg.Relays {
		sc := rc.SMTP
		if sc.LocalName == "" {
			sc.LocalName = cfg.LocalName
		}
		conns := rc.MaxConns
		if conns < 1 {
			conns = cfg.MaxConns
		}
		r := &relay{cfg: rc, index: uint(len(rs.relays)), pool: NewSMTPPool(sc, conns), limited: len(rc.Limits) > 0, batch: cfg.Batch}
		r.limits = append(r.limits, rc.Limits...)
		for _, per := range []time.Duration{time.Minute, 24 * time.Hour} {
			if !slices.ContainsFunc(r.limits, func(l RateLimit) bool { return l.Per == per }) {
				r.limits = append(r.limits, RateLimit{Per: per})
			}
		}
		if !r.limited {
			r.batch = 5 * cfg.Batch
		}
		rs.relays = append(rs.relays, r)
	}
	if cfg.ProbeEvery > 0 {
		rs.probes.Add(1)
		go rs.prober(cfg.ProbeEvery)
	}
	return rs
}

// prober probes the relays whose pause is over, until Close.
func (rs *Relays) prober(every time.Duration) {
	defer rs.probes.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-rs.stop:
			return
		case <-t.C:
		}
		now := rs.cfg.Now()
		for _, r := range rs.relays {
			r.mu.Lock()
			due := r.pause > 0 && !now.Before(r.pausedUntil) && !r.probing
			if due {
				r.probing = true
			}
			r.mu.Unlock()
			if due {
				rs.probes.Add(1)
				go func() { defer rs.probes.Done(); rs.probe(r) }()
			}
		}
	}
}

// probe dials the relay and opens a transaction without a message: up
// when it answers, paused again (twice as long) when not.
func (rs *Relays) probe(r *relay) {
	select {
	case r.pool.slots <- struct{}{}:
	default:
		r.unprobe() // every connection busy: messages will tell
		return
	}
	defer func() { <-r.pool.slots }()
	ctx, cancel := context.WithTimeout(context.Background(), r.pool.cfg.DialTimeout)
	defer cancel()
	sc, err := r.pool.dial(ctx)
	if err == nil {
		err = guard(ctx, sc.sock, func() error {
			if _, err := sc.cmd(2, "MAIL FROM:<>"); err != nil {
				return err
			}
			return sc.reset()
		})
		if err != nil {
			r.pool.discard(sc)
			err = classify(StageMail, err)
		}
	}
	var se *SendError
	if errors.As(err, &se) {
		r.down(rs.cfg.Now(), se, rs.cfg.PauseMin, rs.cfg.PauseMax)
		return
	}
	r.pool.put(sc)
	r.up()
	rs.cfg.Logger.Info("delivery: relay back in use", "relay", r.cfg.Name)
}

// Conns is the connections of every relay together: the engine's workers.
func (rs *Relays) Conns() int {
	n := 0
	for _, r := range rs.relays {
		n += cap(r.pool.slots)
	}
	return n
}

type carrierKey struct{}

// WithCarrier gives ctx a place where a Send over Relays notes the name of
// the relay that took the message; the function reads it ("" when none
// did, or the transport is not Relays).
func WithCarrier(ctx context.Context) (context.Context, func() string) {
	var name string
	var mu sync.Mutex
	ctx = context.WithValue(ctx, carrierKey{}, func(n string) { mu.Lock(); name = n; mu.Unlock() })
	return ctx, func() string { mu.Lock(); defer mu.Unlock(); return name }
}

func noteCarrier(ctx context.Context, name string) {
	if f, ok := ctx.Value(carrierKey{}).(func(string)); ok {
		f(name)
	}
}

// Send implements Transport.
func (rs *Relays) Send(ctx context.Context, from string, to []string, msg []byte) error {
	if err := checkEnvelope(from, to); err != nil {
		return err
	}
	domain := headerFromDomain(msg)
	if domain == "" {
		domain = domainOf(from)
	}
	cands := rs.route(domain)
	var last *SendError
	tried := map[*relay]bool{}
	for {
		if ctx.Err() != nil {
			return ctxError(ctx, StageConnect)
		}
		r, wait, err := rs.choose(ctx, cands, tried)
		if err != nil {
			return &SendError{Temporary: true, Stage: StageConnect, Message: "relay rate store: " + err.Error(), Err: err}
		}
		if r == nil {
			if wait > 0 && wait <= rs.cfg.MaxWait {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
					continue
				case <-ctx.Done():
					t.Stop()
					return ctxError(ctx, StageConnect)
				}
			}
			if last != nil {
				return last
			}
			return rs.unavailable(cands, domain)
		}
		err = r.pool.Send(ctx, from, to, msg)
		var se *SendError
		if err == nil {
			r.up()
			noteCarrier(ctx, r.cfg.Name)
			return nil
		}
		if !errors.As(err, &se) || ctx.Err() != nil || !relayFault(se) {
			if se != nil && se.Code != 0 {
				r.up() // the relay answered: it is up, whatever it said of this message
			} else {
				r.unprobe() // nothing was asked of it (a stale claim, an unusable address)
			}
			return err
		}
		r.down(rs.cfg.Now(), se, rs.cfg.PauseMin, rs.cfg.PauseMax)
		rs.cfg.Logger.Warn("delivery: relay paused", "relay", r.cfg.Name, "err", se.Error())
		if se.InFlight {
			return se
		}
		tried[r] = true
		last = se
	}
}

// route is the relays that may carry mail of domain.
func (rs *Relays) route(domain string) []*relay {
	var own, general []*relay
	for _, r := range rs.relays {
		if len(r.cfg.FromDomains) == 0 {
			general = append(general, r)
		} else if slices.Contains(r.cfg.FromDomains, domain) {
			own = append(own, r)
		}
	}
	if len(own) > 0 {
		return own
	}
	return general
}

// choose picks a relay among cands not yet tried that is up (or due for
// its probe) and has a token. None: wait > 0 is how long until a relay
// that is only over its rate may have one.
func (rs *Relays) choose(ctx context.Context, cands []*relay, tried map[*relay]bool) (*relay, time.Duration, error) {
	full := map[*relay]bool{}
	for {
		now := rs.cfg.Now()
		r, soonest := rs.next(now, cands, tried, full)
		if r == nil {
			if soonest.IsZero() {
				return nil, 0, nil
			}
			return nil, max(soonest.Sub(now), time.Millisecond), nil
		}
		ok, err := r.token(ctx, rs.rates, now)
		if err != nil {
			r.unprobe()
			return nil, 0, err
		}
		if ok {
			return r, 0, nil
		}
		r.unprobe()
		full[r] = true
	}
}

// next is the smooth weighted round robin's pick among the relays that
// may take a message now; soonest is when the first relay over its rate
// may have a token again (zero: none is only over its rate).
func (rs *Relays) next(now time.Time, cands []*relay, tried, full map[*relay]bool) (pick *relay, soonest time.Time) {
	rs.pick.Lock()
	defer rs.pick.Unlock()
	total := 0
	var ok []*relay
	for _, r := range cands {
		if tried[r] {
			continue
		}
		r.mu.Lock()
		paused := now.Before(r.pausedUntil) || r.probing
		r.mu.Unlock()
		if paused {
			continue
		}
		if until := r.fullAt(); full[r] || now.Before(until) {
			if soonest.IsZero() || until.Before(soonest) {
				soonest = until
			}
			continue
		}
		ok = append(ok, r)
		total += r.cfg.Weight
	}
	// The round robin starts afresh whenever the relays it picks among
	// change (one paused, one back), so that within a steady set the
	// split is the weights' exactly, without debts from before.
	// Kept per set of candidates: mail of other From domains, routed to
	// other relays, does not restart it.
	var set, group uint64
	for _, r := range ok {
		set |= 1 << (r.index % 64)
	}
	for _, r := range cands {
		group |= 1 << (r.index % 64)
	}
	if set != rs.lastSet[group] {
		rs.lastSet[group] = set
		for _, r := range cands {
			r.current = 0
		}
	}
	for _, r := range ok {
		r.current += r.cfg.Weight
		if pick == nil || r.current > pick.current {
			pick = r
		}
	}
	if pick == nil {
		return nil, soonest
	}
	pick.current -= total
	pick.mu.Lock()
	if pick.pause > 0 {
		pick.probing = true // its pause is over: this message is the probe
	}
	pick.mu.Unlock()
	return pick, time.Time{}
}

// unavailable is the temporary failure of a message no relay can take now.
func (rs *Relays) unavailable(cands []*relay, domain string) *SendError {
	var why []string
	now := rs.cfg.Now()
	for _, r := range cands {
		r.mu.Lock()
		switch {
		case now.Before(r.pausedUntil) || r.probing:
			why = append(why, fmt.Sprintf("%s paused (%s)", r.cfg.Name, r.lastErr))
		default:
			why = append(why, r.cfg.Name+" over its rate")
		}
		r.mu.Unlock()
	}
	msg := "no relay can take the message now: " + strings.Join(why, "; ")
	if len(cands) == 0 {
		msg = fmt.Sprintf("no relay carries mail from %q", domain)
	}
	return &SendError{Temporary: true, Stage: StageConnect, Message: msg}
}

// relayFault reports whether a failure is the relay's rather than the
// message's: it could not be reached or set up, it is closing (421), or
// the connection failed or timed out mid-transaction.
func relayFault(se *SendError) bool {
	if errors.Is(se.Err, ErrStale) || errors.Is(se.Err, ErrClosed) {
		return false
	}
	switch {
	case se.Stage == StageConnect || se.Stage == StageAuth:
		return true
	case se.Code == 421:
		return true
	case se.Code == 0 && se.Err != nil && (se.Stage == StageMail || se.Stage == StageRcpt || se.Stage == StageData):
		return true
	}
	return false
}

// token takes one of the relay's tokens: from its batch, else from the
// store.
func (r *relay) token(ctx context.Context, rates RateStore, now time.Time) (bool, error) {
	r.tok.Lock()
	defer r.tok.Unlock()
	if r.tokens > 0 && now.Before(r.tokUntil) {
		r.tokens--
		return true, nil
	}
	if err := r.giveBack(ctx, rates); err != nil {
		return false, err
	}
	if now.Before(r.fullUntil) {
		return false, nil
	}
	got, retry, err := rates.Take(ctx, r.cfg.Name, r.limits, now, r.batch)
	if err != nil {
		return false, err
	}
	if got == 0 {
		r.fullUntil = retry
		return false, nil
	}
	r.tokens, r.tokAt, r.tokUntil = got-1, now, time.Time{}
	for _, l := range r.limits {
		if end := WindowStart(now, l.Per).Add(l.Per); r.tokUntil.IsZero() || end.Before(r.tokUntil) {
			r.tokUntil = end
		}
	}
	return true, nil
}

// giveBack returns the unused tokens of the batch (under tok).
func (r *relay) giveBack(ctx context.Context, rates RateStore) error {
	if r.tokens == 0 {
		return nil
	}
	if err := rates.Return(context.WithoutCancel(ctx), r.cfg.Name, r.limits, r.tokAt, r.tokens); err != nil {
		return err
	}
	r.tokens = 0
	return nil
}

func (r *relay) fullAt() time.Time {
	// A racy read is harmless: token() decides under tok.
	if !r.tok.TryLock() {
		return time.Time{}
	}
	defer r.tok.Unlock()
	if r.tokens > 0 {
		return time.Time{}
	}
	return r.fullUntil
}

// up marks a success: the pause is over.
func (r *relay) up() {
	r.mu.Lock()
	r.pause, r.pausedUntil, r.probing = 0, time.Time{}, false
	r.mu.Unlock()
}

// unprobe ends a probe that never reached the relay.
func (r *relay) unprobe() {
	r.mu.Lock()
	r.probing = false
	r.mu.Unlock()
}

// down pauses the relay after a failure of its own: twice the last pause,
// within [min, max].
func (r *relay) down(now time.Time, se *SendError, lo, hi time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.probing = false
	if now.Before(r.pausedUntil) {
		// Several messages were on their way when it failed: one pause.
		return
	}
	r.pause = min(max(2*r.pause, lo), hi)
	r.pausedUntil = now.Add(r.pause)
	r.lastErr, r.lastErrAt = se.Reply(), now
	if se.Stage != "" {
		r.lastErr = se.Stage + ": " + r.lastErr
	}
}

// Close closes every relay's pool and gives back unused tokens.
func (rs *Relays) Close() error {
	select {
	case <-rs.stop:
	default:
		close(rs.stop)
	}
	rs.probes.Wait()
	for _, r := range rs.relays {
		r.tok.Lock()
		if err := r.giveBack(context.Background(), rs.rates); err != nil {
			rs.cfg.Logger.Warn("delivery: give back relay tokens", "relay", r.cfg.Name, "err", err)
		}
		r.tok.Unlock()
		r.pool.Close()
	}
	return nil
}

// RelayStatus is what the console shows of a relay.
type RelayStatus struct {
	Name        string
	Server      string // the URL without the password
	Weight      int
	MaxConns    int
	Limits      []RateLimit
	FromDomains []string
	// Paused: the relay failed and rests until PausedUntil (or until its
	// probe answers); LastError is its last failure, at LastErrorAt.
	Paused      bool
	PausedUntil time.Time
	LastError   string
	LastErrorAt time.Time
	// Today is the messages handed to the relay since 00:00 UTC, by every
	// process sharing the rate store; DayQuota its daily limit (0: none).
	Today    int64
	DayQuota int
	// LastHour is the messages handed to it in the last 60 minutes.
	LastHour int64
}

// Status reports every relay, in the order of HERALD_SMTP_URL. The pause
// is this process's view (each process probes on its own); the counts
// are the store's.
func (rs *Relays) Status(ctx context.Context) ([]RelayStatus, error) {
	now := rs.cfg.Now()
	var out []RelayStatus
	for _, r := range rs.relays {
		s := RelayStatus{Name: r.cfg.Name, Server: r.cfg.SMTP.String(), Weight: r.cfg.Weight, MaxConns: cap(r.pool.slots),
			Limits: r.cfg.Limits, FromDomains: r.cfg.FromDomains}
		r.mu.Lock()
		s.Paused = now.Before(r.pausedUntil) || r.probing || r.pause > 0
		s.PausedUntil, s.LastError, s.LastErrorAt = r.pausedUntil, r.lastErr, r.lastErrAt
		r.mu.Unlock()
		for _, l := range r.cfg.Limits {
			if l.Per == 24*time.Hour {
				s.DayQuota = l.N
			}
		}
		day := WindowStart(now, 24*time.Hour)
		var err error
		if s.Today, err = rs.rates.Count(ctx, r.cfg.Name, 24*time.Hour, day, day.Add(time.Second)); err != nil {
			return nil, err
		}
		hour := WindowStart(now, time.Minute).Add(-59 * time.Minute)
		if s.LastHour, err = rs.rates.Count(ctx, r.cfg.Name, time.Minute, hour, now.Add(time.Minute)); err != nil {
			return nil, err
		}
		r.tok.Lock()
		if r.tokens > 0 { // counted, not yet handed over
			if !r.tokAt.Before(day) {
				s.Today = max(s.Today-int64(r.tokens), 0)
			}
			if !r.tokAt.Before(hour) {
				s.LastHour = max(s.LastHour-int64(r.tokens), 0)
			}
		}
		r.tok.Unlock()
		out = append(out, s)
	}
	return out, nil
}

// headerFromDomain is the domain of the message's From header, lower
// case; "" when it has none that parses.
func headerFromDomain(msg []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(msg))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	var from strings.Builder
	in := false
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			break
		}
		if in && (line[0] == ' ' || line[0] == '\t') {
			from.WriteString(line)
			continue
		}
		if in {
			break
		}
		if len(line) > 5 && strings.EqualFold(line[:5], "from:") {
			in = true
			from.WriteString(line[5:])
		}
	}
	if from.Len() == 0 {
		return ""
	}
	a, err := mail.ParseAddress(strings.TrimSpace(from.String()))
	if err != nil {
		list, lerr := mail.ParseAddressList(strings.TrimSpace(from.String()))
		if lerr != nil || len(list) == 0 {
			return ""
		}
		a = list[0]
	}
	return domainOf(a.Address)
}
