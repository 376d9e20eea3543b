package send

// `load events`, or -webhook on `load send`: the account gets an
// events endpoint (all nine kinds) on a loopback receiver in this
// process, which counts the delivered events it takes (200 to every
// POST). After each herald run the benchmark waits for every delivered
// event of the run and reports how long after the sink's last message the
// last one arrived. Compare the herald/ceiling ratio of a run with
// -webhook to one without.

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"sync"
	"time"
)

// eventSink is the loopback events receiver.
type eventSink struct {
	srv *http.Server
	url string

	mu        sync.Mutex
	delivered int64
	events    int64
	posts     int64
	last      time.Time // when the last delivered event arrived
}

func startEventSink() (*eventSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &eventSink{url: "http://" + ln.Addr().String() + "/events"}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var evs []struct {
			Event string `json:"event"`
		}
		_ = json.Unmarshal(body, &evs)
		now := time.Now()
		s.mu.Lock()
		s.posts++
		for _, e := range evs {
			s.events++
			if e.Event == "delivered" {
				s.delivered++
				s.last = now
			}
		}
		s.mu.Unlock()
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *eventSink) stats() (delivered, events, posts int64, last time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delivered, s.events, s.posts, s.last
}

// addEndpoint saves the receiver as the account's endpoint
// (POST /api/event-webhooks/save, every kind).
func (b *bench) addEndpoint(ctx context.Context, h *heraldProc, url string) error {
	_, err := b.call(ctx, h, http.MethodPost, "/event-webhooks/save", neturl.Values{"url": {url}})
	return err
}
