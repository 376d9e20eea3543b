package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
)

// runningSends is what this process knows of the sends it is sending:
// which run (read at most every half second, round robin over them) and
// each one's compiled message, made once per process and send.
type runningSends struct {
	db      *core.DB
	baseURL string
	verp    *delivery.VERP // return paths, Message-IDs and mailto: unsubscribe addresses

	mu       sync.Mutex
	ids      []int64 // sends in status running and not paused
	readAt   time.Time
	next     int // round robin over ids
	compiled map[int64]*compiledSend
}

func newRunningSends(db *core.DB, baseURL string, verp *delivery.VERP) *runningSends {
	return &runningSends{db: db, baseURL: baseURL, verp: verp, compiled: map[int64]*compiledSend{}}
}

// list returns the running sends and where this claim's round robin
// starts among them.
func (rs *runningSends) list(ctx context.Context) ([]int64, int, error) {
	rs.mu.Lock()
	if time.Since(rs.readAt) < 500*time.Millisecond && len(rs.ids) > 0 {
		ids, start := rs.ids, rs.next
		rs.next++
		rs.mu.Unlock()
		return ids, start, nil
	}
	rs.mu.Unlock()
	var rows []struct {
		ID     int64
		Paused int
	}
	if err := rs.db.R.WithContext(ctx).Model(&models.SingleSend{}).Select("id, CASE WHEN paused_at IS NULL THEN 0 ELSE 1 END AS paused").
		Where("status = ?", models.SendRunning).Order("id").Scan(&rows).Error; err != nil {
		return nil, 0, fmt.Errorf("running: list sends: %w", err)
	}
	ids := make([]int64, 0, len(rows))
	paused := map[int64]bool{}
	for _, r := range rows {
		if r.Paused == 1 {
			paused[r.ID] = true
		} else {
			ids = append(ids, r.ID)
		}
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.ids, rs.readAt = ids, time.Now()
	// A send no longer running (deleted, here or by another process) stops:
	// its claimed messages are skipped. A paused one (here or by another
	// process) gives its claimed messages back to the queue.
	running := make(map[int64]bool, len(ids))
	for _, id := range ids {
		running[id] = true
	}
	for id, c := range rs.compiled {
		switch {
		case paused[id]:
			c.held.Store(true)
			delete(rs.compiled, id)
		case !running[id]:
			c.cancelled.Store(true)
			delete(rs.compiled, id)
		}
	}
	start := rs.next
	rs.next++
	return ids, start, nil
}

// get returns the send's compiled message parts, made once per process
// and send.
func (rs *runningSends) get(ctx context.Context, sendID int64) (*compiledSend, error) {
	rs.mu.Lock()
	c := rs.compiled[sendID]
	rs.mu.Unlock()
	if c != nil {
		return c, nil
	}
	var ss models.SingleSend
	if err := rs.db.R.WithContext(ctx).Where("id = ?", sendID).First(&ss).Error; err != nil {
		return nil, core.NotFound(err)
	}
	c, err := rs.compile(ctx, &ss)
	if err != nil {
		return nil, err
	}
	if ss.AutomationID != nil && !slices.Equal(ss.Links, c.links) {
		// An automation's email is never resolved like a single send,
		// which stores its links then: its send gets them here, before
		// its first message, so that a click on one is followed
		// (Tracking.linkTarget). An edited design replaces them.
		if err := rs.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ?", sendID).
			Update("links", models.StringArray(append([]string{}, c.links...))).Error; err != nil {
			return nil, fmt.Errorf("running: links of send %d: %w", sendID, err)
		}
	}
	rs.mu.Lock()
	rs.compiled[sendID] = c
	rs.mu.Unlock()
	return c, nil
}

// compile makes a send's compiled message (see compileSend) with the
// row's VERP addresses.
func (rs *runningSends) compile(ctx context.Context, ss *models.SingleSend) (*compiledSend, error) {
	c, err := compileSend(ctx, rs.db, rs.baseURL, ss)
	if c != nil {
		c.verp = rs.verp
	}
	return c, err
}

// forget drops a completed send's compiled message.
func (rs *runningSends) forget(sendID int64) {
	rs.mu.Lock()
	delete(rs.compiled, sendID)
	rs.mu.Unlock()
}

// refresh makes this process compile the sends again (an automation's
// email changed) and read which sends run.
func (rs *runningSends) refresh(ids []int64) {
	rs.mu.Lock()
	for _, id := range ids {
		delete(rs.compiled, id)
	}
	rs.readAt = time.Time{}
	rs.mu.Unlock()
}

// cancel stops deleted sends at once in this process: their claimed jobs
// are skipped.
func (rs *runningSends) cancel(ids []int64) {
	rs.stop(ids, func(c *compiledSend) { c.cancelled.Store(true) })
}

// hold stops sends this process just paused: their claimed jobs go back
// to the queue.
func (rs *runningSends) hold(ids []int64) {
	rs.stop(ids, func(c *compiledSend) { c.held.Store(true) })
}

// stop marks this process's compiled sends of ids so that their claimed
// jobs build nothing, forgets them, and has the running sends read again.
func (rs *runningSends) stop(ids []int64, mark func(*compiledSend)) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, id := range ids {
		if c := rs.compiled[id]; c != nil {
			mark(c)
			delete(rs.compiled, id)
		}
	}
	rs.readAt = time.Time{}
}
