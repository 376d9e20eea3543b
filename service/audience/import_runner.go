package audience

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"

	"herald/models"
	"herald/service/core"
)

// errImportShutdown is the cause an import is cut short with when herald
// stops: the import is marked failed with it, and nothing it wrote is
// lost (each committed batch stays; importing the file again updates).
var errImportShutdown = errors.New("herald was stopped before it finished. Import the file again: rows already imported are updated, not duplicated.")

// importRunner owns the imports under way: each runs under a context
// of the runner, which Shutdown cancels and then waits for them.
type importRunner struct {
	mu      sync.Mutex
	ctx     context.Context
	cancel  context.CancelCauseFunc
	wg      sync.WaitGroup
	stopped bool
}

// enter counts one import in and returns the runner's context; once the
// runner is stopped, it returns its (cancelled) context and false.
func (r *importRunner) enter() (context.Context, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx == nil {
		r.ctx, r.cancel = context.WithCancelCause(context.Background())
	}
	if r.stopped {
		return r.ctx, false
	}
	r.wg.Add(1)
	return r.ctx, true
}

// Go runs the import of r in the background, under a context the
// service owns, and calls done (close the file, free the upload's slot)
// when it has ended. Once Shutdown has begun the import is not started:
// it is marked failed at once, in the caller's goroutine. The import
// records its progress and its end (done or failed) itself; a failure
// of the database is logged.
func (s *Imports) Go(imp *models.Import, r io.Reader, done func()) {
	ctx, ok := s.runner.enter()
	if !ok {
		defer done()
		s.runLogged(ctx, imp, r)
		return
	}
	go func() {
		defer s.runner.wg.Done()
		defer done()
		s.runLogged(ctx, imp, r)
	}()
}

func (s *Imports) runLogged(ctx context.Context, imp *models.Import, r io.Reader) {
	// Run ends the import itself whatever happens (a panic of its stages
	// included); what is left to catch here is a panic of OnDone, after
	// the import's end is recorded: it must not take the process down.
	defer func() {
		if p := recover(); p != nil {
			slog.Error("import: OnDone panicked", "import", imp.ID, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	err := s.Run(ctx, imp, r)
	switch {
	case err == nil || core.ErrorCode(err) == core.CodeValidation || errors.Is(err, errImportPanic): // the panic is logged where it was met
	case errors.Is(context.Cause(ctx), errImportShutdown):
		slog.Info("import stopped by shutdown", "import", imp.ID)
	default:
		slog.Error("import failed", "import", imp.ID, "error", err)
	}
}

// ErrImportShutdown answers an upload whose import herald's shutdown cut
// short (or refused): the import is recorded failed.
var ErrImportShutdown = &core.Error{Code: core.CodeUnavailable, Message: "The import stopped: " + errImportShutdown.Error()}

// Import runs the import of r in the caller's goroutine (an upload that
// answers with the report), counted by the service like those of Go: it
// is cut short by Shutdown as well as by ctx. Errors: as Run's, and
// ErrImportShutdown.
func (s *Imports) Import(ctx context.Context, imp *models.Import, r io.Reader) error {
	rctx, ok := s.runner.enter()
	if ok {
		defer s.runner.wg.Done()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if rctx.Err() != nil {
		// Already shut down: AfterFunc would cancel only later, in a
		// goroutine of its own, and a short file could be imported first.
		cancel(context.Cause(rctx))
	}
	stop := context.AfterFunc(rctx, func() { cancel(context.Cause(rctx)) })
	defer stop()
	err := s.Run(ctx, imp, r)
	if err != nil && errors.Is(context.Cause(ctx), errImportShutdown) {
		return ErrImportShutdown
	}
	return err
}

// Shutdown cuts short the imports under way (each is marked failed with
// the rows it committed kept), refuses new ones, and waits for them to
// have ended, or for ctx. Call it after the HTTP server has stopped
// taking uploads and before the database closes.
func (s *Imports) Shutdown(ctx context.Context) error {
	r := &s.runner
	r.mu.Lock()
	if r.ctx == nil {
		r.ctx, r.cancel = context.WithCancelCause(context.Background())
	}
	r.stopped = true
	r.cancel(errImportShutdown)
	r.mu.Unlock()
	ended := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(ended)
	}()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
