package engine

// Signals between the areas and the process's engine: wake it for due
// work, tell it of deleted or changed sends.

import "sync"

// Signals carries what the areas tell this process's engine: a
// send may be due now, sends were deleted, automations' emails changed.
// Until an engine listens (a process that does not send: the command
// line), the signals go nowhere; other processes' engines learn the same
// from the database on their next round.
type Signals struct {
	mu      sync.RWMutex
	sending *Sending
}

func (e *Signals) listen(sg *Sending) {
	e.mu.Lock()
	e.sending = sg
	e.mu.Unlock()
}

func (e *Signals) listener() *Sending {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.sending
}

// Wake: a send may be due now.
func (e *Signals) Wake() {
	if sg := e.listener(); sg != nil {
		sg.Wake()
	}
}

// Deleted: these sends were deleted; their claimed messages are skipped.
func (e *Signals) Deleted(ids []int64) {
	if sg := e.listener(); sg != nil {
		sg.scheduler.sends.cancel(ids)
	}
}

// Changed: these sends' messages changed; compile them again.
func (e *Signals) Changed(ids []int64) {
	if sg := e.listener(); sg != nil {
		sg.scheduler.sends.refresh(ids)
	}
}

// WakeLane: a single message is queued in the lane; it goes now.
func (e *Signals) WakeLane() {
	if sg := e.listener(); sg != nil {
		sg.engine.WakeLane()
	}
}

// WarmupChanged: a warm-up plan was started or ended; the next claim
// reads the plans again.
func (e *Signals) WarmupChanged() {
	if sg := e.listener(); sg != nil {
		sg.scheduler.ledger.warmup.changed()
	}
}
