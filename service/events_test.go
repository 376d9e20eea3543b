package service_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/dbtest"
	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
	"herald/smtptest"
)

func TestEventWebhooksSaveUpdateDeleteScopedByAccount(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	a := servicetest.NewAccount(t, svc, "a@herald.test")
	b := servicetest.NewAccount(t, svc, "b@herald.test")
	ew := svc.EventWebhooks

	for _, c := range []struct {
		name  string
		in    service.EventWebhookInput
		field string
		want  string
	}{
		{"missing url", service.EventWebhookInput{}, "url", "The url field is required."},
		{"ftp", service.EventWebhookInput{URL: "ftp://x.example/in"}, "url", "The url must start with http:// or https://."},
		{"relative", service.EventWebhookInput{URL: "/hooks"}, "url", "The url must be a valid URL."},
		{"line break", service.EventWebhookInput{URL: "https://x.example/a\r\nX: y"}, "url", "The url must not contain line breaks."},
		{"too long", service.EventWebhookInput{URL: "https://x.example/" + strings.Repeat("a", 2048)}, "url", "The url may not be greater than 2048 characters."},
		{"unknown event", service.EventWebhookInput{URL: "https://x.example/", Events: []string{"open", "opened"}}, "events", "The selected events are invalid (opened)"},
		{"enabled", service.EventWebhookInput{URL: "https://x.example/", Enabled: "maybe"}, "enabled", "The enabled field must be true or false."},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ew.Save(ctx, a, c.in)
			var se *service.Error
			if !asError(err, &se) || se.Code != service.CodeValidation || len(se.Fields[c.field]) != 1 || !strings.HasPrefix(se.Fields[c.field][0], c.want) {
				t.Fatalf("err %v; want %s: %q", err, c.field, c.want)
			}
		})
	}

	all, err := ew.Save(ctx, a, service.EventWebhookInput{URL: " https://hooks.example/in "})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Secret) != 64 || strings.Trim(all.Secret, "0123456789abcdef") != "" || all.URL != "https://hooks.example/in" || all.Enabled != 1 ||
		!slices.Equal(all.Events, service.EventNames) {
		t.Fatalf("saved %+v", all)
	}
	some, err := ew.Save(ctx, a, service.EventWebhookInput{URL: "http://hooks.example/clicks", Events: []string{"click", "OPEN", "click"}, Enabled: "0"})
	if err != nil || !slices.Equal(some.Events, models.EventKinds{"open", "click"}) || some.Enabled != 0 {
		t.Fatalf("saved %+v %v", some, err)
	}
	// The secret is shown once: never in a list or a get.
	list, err := ew.List(ctx, a)
	if err != nil || len(list) != 2 || list[0].Secret != "" || list[1].Secret != "" {
		t.Fatalf("list %+v %v", list, err)
	}
	js, _ := json.Marshal(list[0])
	if strings.Contains(string(js), all.Secret) || strings.Contains(string(js), "secret") {
		t.Fatalf("JSON carries the secret: %s", js)
	}

	// Another account sees none of them.
	if other, _ := ew.List(ctx, b); len(other) != 0 {
		t.Fatalf("b lists %+v", other)
	}
	if _, err := ew.Get(ctx, b, all.ID); !service.IsNotFound(err) {
		t.Fatalf("b gets a's endpoint: %v", err)
	}
	if _, err := ew.Update(ctx, b, all.ID, service.EventWebhookInput{Enabled: "0", EnabledSet: true}); !service.IsNotFound(err) {
		t.Fatalf("b updates a's endpoint: %v", err)
	}
	if err := ew.Delete(ctx, b, all.ID); !service.IsNotFound(err) {
		t.Fatalf("b deletes a's endpoint: %v", err)
	}

	// Update changes only what it is given.
	up, err := ew.Update(ctx, a, some.ID, service.EventWebhookInput{Enabled: "1", EnabledSet: true})
	if err != nil || up.Enabled != 1 || up.URL != "http://hooks.example/clicks" || !slices.Equal(up.Events, models.EventKinds{"open", "click"}) {
		t.Fatalf("update %+v %v", up, err)
	}
	if _, err := ew.Update(ctx, a, 0, service.EventWebhookInput{}); err == nil || service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("update without id: %v", err)
	}
	if err := ew.Delete(ctx, a, some.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := ew.List(ctx, a); len(list) != 1 {
		t.Fatalf("after delete: %+v", list)
	}
	// At most 10 endpoints per account.
	for i := 1; i < 10; i++ {
		if _, err := ew.Save(ctx, a, service.EventWebhookInput{URL: "https://hooks.example/" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ew.Save(ctx, a, service.EventWebhookInput{URL: "https://hooks.example/11"}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("11th endpoint: %v", err)
	}
}

func asError(err error, target **service.Error) bool {
	e, ok := err.(*service.Error)
	if ok {
		*target = e
	}
	return ok
}

// eventRows returns the kinds of the events queued for an endpoint, with
// the address of each: "kind email".
func eventRows(t *testing.T, svc *service.Service, webhookID int64) []models.Event {
	t.Helper()
	var rows []models.Event
	if err := svc.DB.R.Where("webhook_id = ?", webhookID).Order("id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	return rows
}

func kindsOf(rows []models.Event) map[string][]string {
	out := map[string][]string{}
	for _, r := range rows {
		out[r.Kind] = append(out[r.Kind], r.Email)
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// TestEventsAreWrittenWithTheirChange: a send's deliveries, its relay's
// refusal and retry, an open, a click, a one-click unsubscribe and the
// reports of feedback each write their event for the endpoints that want
// it, and nothing is written for an account without one.
// Public addresses only (the default), an endpoint written as a
// loopback, private or link-local address is refused when saved or
// updated; a public name or address is taken.
func TestEventWebhooksPublicOnly(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t) // public addresses only: the default
	ctx := context.Background()
	a := servicetest.NewAccount(t, svc, "a@herald.test")
	ew := svc.EventWebhooks
	for _, u := range []string{"http://127.0.0.1:8080/in", "http://localhost/in", "http://api.localhost/in", "http://[::1]/in",
		"http://10.0.0.5/in", "http://169.254.169.254/latest/meta-data", "http://[fd00::1]/in", "http://0.0.0.0/in"} {
		_, err := ew.Save(ctx, a, service.EventWebhookInput{URL: u})
		var se *service.Error
		if !asError(err, &se) || len(se.Fields["url"]) != 1 || se.Fields["url"][0] != "The url must be a public address." {
			t.Errorf("%s: %v", u, err)
		}
	}
	w, err := ew.Save(ctx, a, service.EventWebhookInput{URL: "https://hooks.example/in"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ew.Update(ctx, a, w.ID, service.EventWebhookInput{URL: "http://192.168.1.2/in", URLSet: true}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("update to a private address: %v", err)
	}
	if _, err := ew.Save(ctx, a, service.EventWebhookInput{URL: "https://93.184.216.34/in"}); err != nil {
		t.Fatalf("a public address: %v", err)
	}
}

// At save, an endpoint written as an address is refused in every special
// range of delivery.PublicAddr's table (the one the dialer checks too),
// by the first and the last address of each, IPv4 ones also mapped into
// IPv6: NAT64, 6to4, Teredo, benchmarking, documentation and reserved
// blocks included, not only loopback and private ones.
func TestEventWebhooksRefuseEverySpecialRange(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t) // public addresses only: the default
	ctx := context.Background()
	a := servicetest.NewAccount(t, svc, "a@herald.test")
	ew := svc.EventWebhooks
	last := func(p netip.Prefix) netip.Addr {
		b := p.Masked().Addr().AsSlice()
		for i := p.Bits(); i < len(b)*8; i++ {
			b[i/8] |= 0x80 >> (i % 8)
		}
		addr, _ := netip.AddrFromSlice(b)
		return addr
	}
	url := func(addr netip.Addr) string {
		if addr.Is4() {
			return "https://" + addr.String() + "/in"
		}
		return "https://[" + addr.String() + "]/in"
	}
	for _, r := range delivery.SpecialRanges() {
		addrs := []netip.Addr{r.Prefix.Addr(), last(r.Prefix)}
		if r.Prefix.Addr().Is4() {
			addrs = append(addrs, netip.AddrFrom16(addrs[0].As16()), netip.AddrFrom16(addrs[1].As16()))
		}
		for _, addr := range addrs {
			_, err := ew.Save(ctx, a, service.EventWebhookInput{URL: url(addr)})
			var se *service.Error
			if !asError(err, &se) || len(se.Fields["url"]) != 1 || se.Fields["url"][0] != "The url must be a public address." {
				t.Errorf("%s (%s, %s): %v", url(addr), r.Prefix, r.Name, err)
			}
		}
	}
	for _, u := range []string{"https://[2001:4860:4860::8888]/in", "https://198.20.0.1/in", "https://100.128.0.1/in"} {
		if _, err := ew.Save(ctx, a, service.EventWebhookInput{URL: u}); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestEventsAreWrittenWithTheirChange(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com", "cy@example.com", "gone@example.com", "slow@example.com")
	to := []string{"contacts_" + strconv.FormatInt(typeA, 10)}

	// Without an endpoint: a whole send writes no event.
	first := f.Create(f.Input("Before", to, nil))
	f.WaitStatus(first.Utr, models.SendCompleted, 20*time.Second)
	var n int64
	if err := f.Svc.DB.R.Model(&models.Event{}).Count(&n).Error; err != nil || n != 0 {
		t.Fatalf("events without an endpoint: %d %v", n, err)
	}

	all, err := f.Svc.EventWebhooks.Save(f.Ctx, f.Acct, service.EventWebhookInput{URL: "https://hooks.example/all"})
	if err != nil {
		t.Fatal(err)
	}
	clicks, err := f.Svc.EventWebhooks.Save(f.Ctx, f.Acct, service.EventWebhookInput{URL: "https://hooks.example/clicks", Events: []string{"click"}})
	if err != nil {
		t.Fatal(err)
	}
	off, err := f.Svc.EventWebhooks.Save(f.Ctx, f.Acct, service.EventWebhookInput{URL: "https://hooks.example/off", Enabled: "0"})
	if err != nil {
		t.Fatal(err)
	}
	f.SMTP.Refuse(smtptest.AtRcpt, "gone@example.com", 550, "5.1.1", "User unknown")
	f.SMTP.Fail("slow@example.com", 451)
	ss := f.Create(f.Input("After", to, nil))
	deadline := time.Now().Add(20 * time.Second)
	for f.Get(ss.Utr).Status != models.SendCompleted {
		if time.Now().After(deadline) {
			t.Fatalf("not completed: %+v", f.Get(ss.Utr))
		}
		f.Advance(50 * time.Millisecond) // past the retry's backoff
		f.Sending.Wake()
		time.Sleep(20 * time.Millisecond)
	}
	got := kindsOf(eventRows(t, f.Svc, all.ID))
	want := map[string][]string{
		"processed": {"ann@example.com", "bob@example.com", "cy@example.com", "gone@example.com", "slow@example.com"},
		"delivered": {"ann@example.com", "bob@example.com", "cy@example.com", "slow@example.com"},
		"bounce":    {"gone@example.com"},
		"deferred":  {"slow@example.com"},
	}
	if !equalKinds(got, want) {
		t.Fatalf("send events %v; want %v", got, want)
	}
	rows := eventRows(t, f.Svc, all.ID)
	for _, r := range rows {
		if r.Kind == "bounce" && (r.Status != "5.1.1" || !strings.Contains(r.Reason, "User unknown") || r.SendMessageID == nil || r.SendID == nil || *r.SendID != ss.ID) {
			t.Fatalf("bounce row %+v", r)
		}
		if r.Kind == "deferred" && (r.Status != "451" && !strings.HasPrefix(r.Status, "4.")) {
			t.Fatalf("deferred row %+v", r)
		}
	}

	// Opens, clicks and a one-click unsubscribe through the recipient's links.
	ann, bob := f.SentTo(ss.Utr, "ann@example.com"), f.SentTo(ss.Utr, "bob@example.com")
	if err := f.Svc.Tracking.Open(f.Ctx, tokenOf(t, ann)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Tracking.Click(f.Ctx, tokenOf(t, ann), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Tracking.OneClick(f.Ctx, tokenOf(t, bob)); err != nil {
		t.Fatal(err)
	}
	// Feedback: a hard bounce, a soft bounce (the relay gave up: the
	// message will not arrive, a bounce event), a deferral (the relay is
	// still trying: a deferred event), a complaint.
	cy, dee := f.SentTo(ss.Utr, "cy@example.com"), f.SentTo(ss.Utr, "slow@example.com")
	f.Handle(service.Report{Kind: delivery.ReportSoftBounce, Source: delivery.SourceDSN, Token: returnToken(t, cy), Status: "4.2.2", Diagnostic: "mailbox full"},
		service.Report{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, Token: returnToken(t, ann), Status: "5.1.1", Diagnostic: "no such user"},
		service.Report{Kind: delivery.ReportDeferral, Source: delivery.SourceDSN, Token: returnToken(t, dee), Status: "4.4.1", Diagnostic: "Connection timed out"},
		service.Report{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, Token: returnToken(t, cy)})
	got = kindsOf(eventRows(t, f.Svc, all.ID))
	want["open"] = []string{"ann@example.com"}
	want["click"] = []string{"ann@example.com"}
	want["group_unsubscribe"] = []string{"bob@example.com"}
	want["deferred"] = []string{"slow@example.com", "slow@example.com"}
	want["bounce"] = []string{"ann@example.com", "cy@example.com", "gone@example.com"}
	want["spam_report"] = []string{"cy@example.com"}
	want["unsubscribe"] = []string{"cy@example.com"}
	if !equalKinds(got, want) {
		t.Fatalf("events %v; want %v", got, want)
	}
	for _, r := range eventRows(t, f.Svc, all.ID) {
		switch r.Kind {
		case "click":
			if r.URL != "https://shop.example.com/sale" {
				t.Fatalf("click row %+v", r)
			}
		case "group_unsubscribe":
			if r.GroupID == nil || *r.GroupID != f.Group {
				t.Fatalf("group_unsubscribe row %+v", r)
			}
		}
	}
	if got := kindsOf(eventRows(t, f.Svc, clicks.ID)); !equalKinds(got, map[string][]string{"click": {"ann@example.com"}}) {
		t.Fatalf("click-only endpoint: %v", got)
	}
	if rows := eventRows(t, f.Svc, off.ID); len(rows) != 0 {
		t.Fatalf("disabled endpoint: %v", kindsOf(rows))
	}
}

func equalKinds(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// receiver is a real HTTP endpoint that checks each POST's signature and
// keeps the events it took. answer decides each POST's status (nil: 200).
type receiver struct {
	t       *testing.T
	secret  string
	secrets map[string]string // per path, over secret
	srv     *httptest.Server
	mu      sync.Mutex
	posts   int
	bad     int               // POSTs whose signature did not verify
	sizes   []int             // events per POST, in order
	events  []json.RawMessage // every event object taken (2xx), in order
	seen    map[string]int    // event_id → times taken
	answer  func(n int) int   // n: the POST's number from 1
	block   chan struct{}     // when set, every POST waits on it
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, seen: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.mu.Lock()
		if r.block != nil {
			close(r.block)
			r.block = nil
		}
		r.mu.Unlock()
		r.srv.Close()
	})
	return r
}

// verify checks a Herald-Signature header as a receiver would.
func verify(secret, header string, body []byte) bool {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	want := hex.EncodeToString(m.Sum(nil))
	return ts != "" && hmac.Equal([]byte(sig), []byte(want))
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	block := r.block
	r.posts++
	n := r.posts
	secret := r.secret
	if s, found := r.secrets[req.URL.Path]; found {
		secret = s
	}
	ok := verify(secret, req.Header.Get("Herald-Signature"), body)
	if !ok {
		r.bad++
	}
	code := 200
	if r.answer != nil {
		code = r.answer(n)
	}
	r.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-req.Context().Done():
		}
		return
	}
	var evs []json.RawMessage
	if err := json.Unmarshal(body, &evs); err != nil || req.Header.Get("Content-Type") != "application/json" {
		w.WriteHeader(400)
		return
	}
	if code/100 == 2 {
		r.mu.Lock()
		r.sizes = append(r.sizes, len(evs))
		for _, e := range evs {
			var id struct {
				EventID string `json:"event_id"`
			}
			_ = json.Unmarshal(e, &id)
			r.seen[id.EventID]++
			r.events = append(r.events, e)
		}
		r.mu.Unlock()
	}
	w.WriteHeader(code)
}

// dispatcher returns a dispatcher over svc's database, on svc's clock.
func dispatcher(t *testing.T, svc *service.Service) (*delivery.Dispatcher, *service.EventStore) {
	t.Helper()
	d, st, err := svc.NewEventDispatcher(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d.Backoff = time.Second
	return d, st
}

// queue writes n events of kind for the endpoint straight into its queue,
// as the recording does, at the clock's time.
func queue(t *testing.T, svc *service.Service, w *models.EventWebhook, n int, at time.Time) {
	t.Helper()
	rows := make([]models.Event, n)
	for i := range rows {
		rows[i] = models.Event{WebhookID: w.ID, UserID: w.UserID, Kind: "open", Email: "r" + strconv.Itoa(i) + "@example.com", CreatedAt: models.NewTimestamp(at)}
	}
	if err := svc.DB.W.CreateInBatches(rows, 500).Error; err != nil {
		t.Fatal(err)
	}
}

func states(t *testing.T, svc *service.Service, webhookID int64) map[models.EventState]int {
	t.Helper()
	out := map[models.EventState]int{}
	for _, r := range eventRows(t, svc, webhookID) {
		out[models.EventState(r.State)]++
	}
	return out
}

func pass(t *testing.T, d *delivery.Dispatcher) {
	t.Helper()
	if err := d.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestEventsDispatchSignedPayloads: the events of a real send reach a
// real receiver signed, with the contract's keys, the message's
// Message-ID and the send's utr.
func TestEventsDispatchSignedPayloads(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixtureWith(t, true, 0, allowPrivate)
	rcv := newReceiver(t)
	w, err := f.Svc.EventWebhooks.Save(f.Ctx, f.Acct, service.EventWebhookInput{URL: rcv.srv.URL + "/hook", Events: []string{"delivered", "click"}})
	if err != nil {
		t.Fatal(err)
	}
	rcv.secret = w.Secret
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com")
	ss := f.Create(f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	ann := f.SentTo(ss.Utr, "ann@example.com")
	if _, err := f.Svc.Tracking.Click(f.Ctx, tokenOf(t, ann), 0); err != nil {
		t.Fatal(err)
	}
	d, _ := dispatcher(t, f.Svc)
	pass(t, d)
	if rcv.bad != 0 || len(rcv.events) != 3 || len(rcv.sizes) != 1 {
		t.Fatalf("bad signatures %d, events %d, posts %v", rcv.bad, len(rcv.events), rcv.sizes)
	}
	mids := map[string]string{}
	for _, m := range f.Sent(ss.Utr) {
		mids[m.To] = strings.Trim(m.Header().Get("Message-Id"), "<>")
	}
	for _, raw := range rcv.events {
		var ev map[string]any
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 0, len(ev))
		for k := range ev {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := []string{"email", "event", "event_id", "group_id", "message_id", "single_send_utr", "timestamp"}
		if ev["event"] == "click" {
			// A click whose request is unknown (Tracking.Click) is not
			// taken for a person's: "machine" is true.
			want = []string{"email", "event", "event_id", "group_id", "machine", "message_id", "single_send_utr", "timestamp", "url"}
			if ev["machine"] != true {
				t.Fatalf("click %s: want machine true", raw)
			}
		}
		if !slices.Equal(keys, want) {
			t.Fatalf("keys %v; want %v (%s)", keys, want, raw)
		}
		email := ev["email"].(string)
		if ev["message_id"] != mids[email] || mids[email] == "" || ev["single_send_utr"] != ss.Utr || ev["group_id"] != float64(f.Group) {
			t.Fatalf("event %s; message ids %v", raw, mids)
		}
		if ev["event"] == "click" && ev["url"] != "https://shop.example.com/sale" {
			t.Fatalf("click %s", raw)
		}
	}
	// Settled: a second pass posts nothing.
	pass(t, d)
	if rcv.posts != 1 {
		t.Fatalf("posts %d after a second pass", rcv.posts)
	}
	dels, err := f.Svc.EventWebhooks.Deliveries(f.Ctx, f.Acct, w.ID)
	if err != nil || len(dels) != 1 || dels[0].StatusCode != 200 || dels[0].Events != 3 || dels[0].Error != "" {
		t.Fatalf("deliveries %+v %v", dels, err)
	}
}

// TestEventsBatchRetryAndGiveUp: 2,500 events go in POSTs of at most
// 1,000; a receiver answering 500 three times then 200 gets every event
// (once its retries come due on the test clock); a receiver that never
// answers 2xx makes the events fail after 24 hours, and its account is
// mailed once that it has failed for an hour.
func TestEventsBatchRetryAndGiveUp(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixtureWith(t, false, 0, allowPrivate)
	if _, err := f.Svc.Notifications.Save(f.Ctx, f.Acct, service.NotificationInput{EmailAddress: "ops@herald.test", EmailOwner: "Ops"}); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t)
	w, err := f.Svc.EventWebhooks.Save(f.Ctx, f.Acct, service.EventWebhookInput{URL: rcv.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	rcv.secret = w.Secret
	rcv.answer = func(n int) int {
		if n <= 3 {
			return 500
		}
		return 200
	}
	queue(t, f.Svc, w, 2500, f.Now())
	d, st := dispatcher(t, f.Svc)
	for i := 0; i < 3; i++ {
		pass(t, d) // 500: the first batch waits for its retry
		if rcv.posts != i+1 {
			t.Fatalf("pass %d: %d posts", i, rcv.posts)
		}
		pass(t, d) // not due yet: nothing
		if rcv.posts != i+1 {
			t.Fatalf("pass %d: posted before the backoff", i)
		}
		f.Advance(time.Duration(1<<i) * time.Second)
	}
	pass(t, d)
	if !slices.Equal(rcv.sizes, []int{1000, 1000, 500}) || len(rcv.seen) != 2500 || rcv.bad != 0 {
		t.Fatalf("sizes %v, distinct events %d, bad signatures %d", rcv.sizes, len(rcv.seen), rcv.bad)
	}
	if s := states(t, f.Svc, w.ID); s[models.EventDelivered] != 2500 {
		t.Fatalf("states %v", s)
	}
	// The retried batch kept its place: the events arrived in their order.
	last := int64(0)
	for _, raw := range rcv.events {
		var ev struct {
			EventID string `json:"event_id"`
		}
		_ = json.Unmarshal(raw, &ev)
		id, _ := strconv.ParseInt(ev.EventID, 10, 64)
		if id <= last {
			t.Fatalf("event %d after %d", id, last)
		}
		last = id
	}
	dels, _ := f.Svc.EventWebhooks.Deliveries(f.Ctx, f.Acct, w.ID)
	var codes []int
	for _, dl := range dels {
		codes = append(codes, dl.StatusCode)
	}
	if !slices.Equal(codes, []int{200, 200, 200, 500, 500, 500}) || !strings.HasPrefix(dels[3].Error, "HTTP 500") {
		t.Fatalf("deliveries, newest first: %v %+v", codes, dels[3])
	}

	// Resend one delivery: its events go again.
	if n, err := f.Svc.EventWebhooks.Resend(f.Ctx, f.Acct, dels[0].ID); err != nil || n != 500 {
		t.Fatalf("resend: %d %v", n, err)
	}
	other := servicetest.NewAccount(t, f.Svc, "other@herald.test")
	if _, err := f.Svc.EventWebhooks.Resend(f.Ctx, other, dels[0].ID); !service.IsNotFound(err) {
		t.Fatalf("another account's resend: %v", err)
	}
	pass(t, d)
	if !slices.Equal(rcv.sizes, []int{1000, 1000, 500, 500}) {
		t.Fatalf("after resend: %v", rcv.sizes)
	}

	// An endpoint that always fails: retried for 24 hours, then given up.
	rcv.answer = func(int) int { return 503 }
	mails := f.SMTP.Count()
	queue(t, f.Svc, w, 3, f.Now())
	start := f.Now()
	for f.Now().Sub(start) < 25*time.Hour {
		pass(t, d)
		st.Housekeep(f.Ctx)
		f.Advance(10 * time.Minute)
	}
	pass(t, d)
	if s := states(t, f.Svc, w.ID); s[models.EventFailed] != 3 || s[models.EventPending] != 0 {
		t.Fatalf("after 25 hours: states %v", s)
	}
	// One mail for the failing period, however many passes.
	if !f.SMTP.WaitCount(mails+1, 5*time.Second) {
		t.Fatal("no failing-endpoint mail")
	}
	st.AlertFailing(f.Ctx)
	time.Sleep(50 * time.Millisecond)
	msgs := f.SMTP.Messages()
	var alerts int
	for _, m := range msgs[mails:] {
		if strings.Contains(m.Header().Get("Subject"), "Event webhook failing") && m.To == "ops@herald.test" {
			alerts++
		}
	}
	if alerts != 1 {
		t.Fatalf("%d failing-endpoint mails", alerts)
	}
	var ew models.EventWebhook
	if err := f.Svc.DB.R.First(&ew, w.ID).Error; err != nil || ew.FailingSince == nil || ew.FailureAlertedAt == nil {
		t.Fatalf("endpoint %+v %v", ew, err)
	}
	// A success (once the endpoint's backoff, at most an hour, is over)
	// ends the failing period.
	rcv.answer = nil
	queue(t, f.Svc, w, 1, f.Now())
	pass(t, d)
	if s := states(t, f.Svc, w.ID); s[models.EventPending] != 1 {
		t.Fatalf("during the backoff: states %v", s)
	}
	f.Advance(time.Hour)
	pass(t, d)
	ew = models.EventWebhook{}
	if err := f.Svc.DB.R.First(&ew, w.ID).Error; err != nil || ew.FailingSince != nil || ew.FailureAlertedAt != nil {
		t.Fatalf("endpoint after a success %+v %v", ew, err)
	}
}

// TestEventsTimeoutIsRetried: an endpoint that does not answer within the
// timeout is an attempt that failed; the events come due again.
func TestEventsTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	c := dbtest.NewClock(time.Now())
	svc := dbtest.Service(t, service.Config{EventWebhooksPrivate: true, Now: c.Now})
	acct := servicetest.NewAccount(t, svc, "a@herald.test")
	rcv := newReceiver(t)
	rcv.block = make(chan struct{})
	w, err := svc.EventWebhooks.Save(context.Background(), acct, service.EventWebhookInput{URL: rcv.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	rcv.secret = w.Secret
	queue(t, svc, w, 2, c.Now())
	d, _ := dispatcher(t, svc)
	d.Poster = &delivery.EventPoster{Timeout: 200 * time.Millisecond}
	pass(t, d)
	dels, _ := svc.EventWebhooks.Deliveries(context.Background(), acct, w.ID)
	if len(dels) != 1 || dels[0].StatusCode != 0 || !strings.Contains(dels[0].Error, "no answer within 200ms") {
		t.Fatalf("deliveries %+v", dels)
	}
	rcv.mu.Lock()
	close(rcv.block)
	rcv.block = nil
	rcv.mu.Unlock()
	c.Advance(time.Second)
	pass(t, d)
	if s := states(t, svc, w.ID); s[models.EventDelivered] != 2 {
		t.Fatalf("states %v", s)
	}
}

// TestEventsClaimedByADeadProcessComeBack: rows claimed by a process that
// died (claimed, never settled) are skipped by the others until the lease
// runs out, then delivered (after the housekeeping that runs after every
// pass puts the endpoint's cursor back): at least once.
func TestEventsClaimedByADeadProcessComeBack(t *testing.T) {
	t.Parallel()
	c := dbtest.NewClock(time.Now())
	svc := dbtest.Service(t, service.Config{EventWebhooksPrivate: true, Now: c.Now})
	acct := servicetest.NewAccount(t, svc, "a@herald.test")
	rcv := newReceiver(t)
	w, err := svc.EventWebhooks.Save(context.Background(), acct, service.EventWebhookInput{URL: rcv.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	rcv.secret = w.Secret
	queue(t, svc, w, 5, c.Now())
	_, st := dispatcher(t, svc)
	b, err := st.Claim(context.Background(), w.ID, "dead-process", c.Now(), time.Minute, 3)
	if err != nil || len(b.IDs) != 3 {
		t.Fatalf("claim %v %v", b, err)
	}
	d, st2 := dispatcher(t, svc)
	pass(t, d)
	if len(rcv.seen) != 2 {
		t.Fatalf("while the lease holds: %d events", len(rcv.seen))
	}
	c.Advance(61 * time.Second)
	st2.Housekeep(context.Background()) // each pass's housekeeping: the cursor back to the lowest pending event
	pass(t, d)
	if len(rcv.seen) != 5 || states(t, svc, w.ID)[models.EventDelivered] != 5 {
		t.Fatalf("after the lease: %d events, states %v", len(rcv.seen), states(t, svc, w.ID))
	}
	// The dead process's late settle changes nothing it no longer holds.
	if err := st.Finish(context.Background(), b, "dead-process", delivery.EventAttempt{At: c.Now(), StatusCode: 500, Err: "HTTP 500"}, c.Now(), c.Now().Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if s := states(t, svc, w.ID); s[models.EventDelivered] != 5 {
		t.Fatalf("after the late settle: %v", s)
	}
}

// TestEventsTwoProcessesShareTheQueue: two services on one database
// dispatch one queue at once; every event reaches the receiver exactly
// once (no retry happens, so no repeat is allowed).
func TestEventsTwoProcessesShareTheQueue(t *testing.T) {
	t.Parallel()
	c := dbtest.NewClock(time.Now())
	procs := dbtest.Processes(t, 2, service.Config{EventWebhooksPrivate: true, Now: c.Now})
	acct := servicetest.NewAccount(t, procs[0], "a@herald.test")
	rcv := newReceiver(t)
	var ws []*models.EventWebhook
	for i := 0; i < 3; i++ {
		w, err := procs[0].EventWebhooks.Save(context.Background(), acct, service.EventWebhookInput{URL: rcv.srv.URL + "/" + strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	// One secret per endpoint: the receiver checks against the right one.
	secrets := map[string]string{}
	for i, w := range ws {
		secrets["/"+strconv.Itoa(i)] = w.Secret
		queue(t, procs[0], w, 2200, c.Now())
	}
	rcv.secrets = secrets
	var wg sync.WaitGroup
	for _, p := range procs {
		d, _ := dispatcher(t, p)
		d.Parallel = 2
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				if err := d.Pass(context.Background()); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if len(rcv.seen) != 6600 || rcv.bad != 0 {
		t.Fatalf("distinct events %d, bad signatures %d", len(rcv.seen), rcv.bad)
	}
	for id, n := range rcv.seen {
		if n != 1 {
			t.Fatalf("event %s posted %d times", id, n)
		}
	}
}

// allowPrivate lets the events endpoints be on loopback (the tests'
// receivers).
func allowPrivate(c *service.Config) { c.EventWebhooksPrivate = true }
