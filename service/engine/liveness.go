package engine

import (
	"context"
	"fmt"
	"herald/service/core"
	"herald/service/internal/record"
	"sync"
	"time"

	"github.com/google/uuid"
)

// liveness is this process's place among the processes that share the
// send ledger: its worker id, written with a heartbeat that other
// processes read to tell a live claim from an abandoned one.
type liveness struct {
	db        *core.DB
	worker    string
	deadAfter time.Duration // silence after which other processes take this one's claims

	mu    sync.Mutex
	last  time.Time // when the last successful heartbeat was written
	epoch int64     // counts lapses: heartbeats further apart than lapseAfter
	// serverStart is when the database server started, as the last
	// heartbeat read it (Unix ms; 0 before the first, or on SQLite).
	serverStart int64
}

func newLiveness(db *core.DB, deadAfter time.Duration) *liveness {
	return &liveness{db: db, worker: uuid.NewString(), deadAfter: deadAfter}
}

// beat tells other processes this one is alive. The engine beats every
// third of deadAfter.
func (l *liveness) beat(ctx context.Context) error {
	at := time.Now()
	err := l.db.W.WithContext(ctx).Exec(
		"INSERT INTO send_workers (id, heartbeat_at) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at",
		l.worker, at.UnixMilli()).Error
	if err != nil {
		return fmt.Errorf("liveness: beat: %w", err)
	}
	restarted, err := l.serverRestarted(ctx)
	if err != nil {
		return err
	}
	l.mu.Lock()
	if !l.last.IsZero() && at.Sub(l.last) > l.lapseAfter() || restarted {
		l.epoch++
	}
	l.last = at
	l.mu.Unlock()
	if restarted {
		// The outcomes' relaxed commits (core.DB.Relaxed) of the server's
		// last moments may be lost, their messages still claimed by this
		// process: every claim goes back to the queue. The jobs claimed
		// before are of the old epoch, so none is handed over any more;
		// only those already on the wire may be sent twice.
		if err := l.db.W.WithContext(ctx).Exec(giveBackAll, l.worker).Error; err != nil {
			return fmt.Errorf("liveness: give back claims after the database restarted: %w", err)
		}
	}
	return nil
}

// giveBackAll: every claim of a worker back to the queue (worker).
var giveBackAll = record.LedgerSQL("UPDATE send_messages SET state = {queued}, worker = NULL WHERE worker = ? AND state = {claimed}")

// serverRestarted reports whether the database server started again since
// the last heartbeat read its start (never on SQLite, nor on the first).
func (l *liveness) serverRestarted(ctx context.Context) (bool, error) {
	q := l.db.SQL().ServerStarted()
	if q == "" {
		return false, nil
	}
	var start int64
	if err := l.db.W.WithContext(ctx).Raw(q).Scan(&start).Error; err != nil {
		return false, fmt.Errorf("liveness: database server's start: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	was := l.serverStart
	l.serverStart = start
	return was != 0 && was != start, nil
}

// leave removes this process's heartbeat: it stopped.
func (l *liveness) leave(ctx context.Context) error {
	if err := l.db.W.WithContext(ctx).Exec("DELETE FROM send_workers WHERE id = ?", l.worker).Error; err != nil {
		return fmt.Errorf("liveness: leave: %w", err)
	}
	return nil
}

// aliveSince is the oldest heartbeat (Unix ms, wall clock) of a process
// still taken for alive. Heartbeats use the wall clock (processes agree on
// it), not the injectable one, which only decides what is due.
func (l *liveness) aliveSince() int64 { return time.Now().Add(-l.deadAfter).UnixMilli() }

// lapseAfter is the gap between heartbeats after which this process's
// claims are no longer trusted: two thirds of deadAfter, when other
// processes take them over (heartbeats come every third of it).
func (l *liveness) lapseAfter() time.Duration { return l.deadAfter * 2 / 3 }

// claimEpoch is the heartbeat lapse count a claim is made under.
func (l *liveness) claimEpoch() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

// held reports whether a claim made under epoch is surely still this
// process's: no heartbeat lapse since, and none going on now (a process
// stopped with SIGSTOP resumes its workers before its next heartbeat).
// Another process reclaims only after deadAfter of silence, so a claim
// that passes here was not taken over, and a queued job that fails it is
// given back instead of sent: after a stall this process sends again only
// what was already on the wire.
func (l *liveness) held(epoch int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return epoch == l.epoch && time.Since(l.last) <= l.lapseAfter()
}

// fresh reports whether this process may still hand over a message claimed
// under epoch: held, and its last heartbeat younger than half of deadAfter.
// The transport asks it just before the relay takes the message (the end
// of DATA), after the message may have waited for a connection: a process
// stopped or starved in that wait renews its heartbeat before it sends
// again, so it never hands over a message another process took over,
// which takes deadAfter of silence (half of it is the margin for the
// heartbeat's own delay and for clocks of other hosts).
func (l *liveness) fresh(epoch int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return epoch == l.epoch && time.Since(l.last) <= l.deadAfter/2
}
