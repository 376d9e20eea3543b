package delivery

import "context"

type fenceKey struct{}

// WithFence gives ctx the fence of a send: fresh reports whether this
// process may still hand its message over. A transport asks it at the last
// moment it can still take the message back (SMTP: before the dot that ends
// DATA) and, when it answers false, ends the transaction without the
// message and returns a *SendError wrapping ErrStale. A process that was
// stopped or starved long enough for another to take its claims over thus
// sends nothing the other may send too.
func WithFence(ctx context.Context, fresh func() bool) context.Context {
	return context.WithValue(ctx, fenceKey{}, fresh)
}

// fenceOf is ctx's fence; nil when it has none (always fresh).
func fenceOf(ctx context.Context) func() bool {
	f, _ := ctx.Value(fenceKey{}).(func() bool)
	return f
}

// fenced reports whether ctx's fence forbids handing a message over now.
func fenced(ctx context.Context) bool {
	f := fenceOf(ctx)
	return f != nil && !f()
}

// staleError is the error of a message the fence held back.
func staleError(stage string) *SendError {
	return &SendError{Temporary: true, Stage: stage, Message: "not handed over: this process's claim may have been taken over", Err: ErrStale}
}
