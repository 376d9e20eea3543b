package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

// Failure texts of the edge.
const (
	textInternal    = "Internal Server Error"
	textBadBody     = "The request body could not be parsed."
	textTooLarge    = "The request body is too large."
	textRateLimited = "Too Many Requests"
)

// envelope is every answer of the API: status first, then the message or
// the errors.
type envelope struct {
	Status  string `json:"status"`
	Message any    `json:"message,omitempty"`
	Errors  any    `json:"errors,omitempty"`
}

// success writes {"status":"success","message":message}.
func success(c *fiber.Ctx, message any) error {
	return c.Status(fiber.StatusOK).JSON(envelope{Status: "success", Message: message})
}

// successInErrors writes the few successes the spec carries in `errors`.
func successInErrors(c *fiber.Ctx, text string) error {
	return c.Status(fiber.StatusOK).JSON(envelope{Status: "success", Errors: text})
}

// failure writes the failure envelope with status.
func failure(c *fiber.Ctx, status int, errs any) error {
	return c.Status(status).JSON(envelope{Status: "failed", Errors: errs})
}

// fail maps any error to its status and envelope: the one place where
// service errors become HTTP. notFoundText overrides the NF text for the
// resources whose spec spells it `Record not found`.
func fail(c *fiber.Ctx, err error, notFoundText ...string) error {
	var se *service.Error
	if !errors.As(err, &se) {
		var fe *fiber.Error
		if errors.As(err, &fe) {
			return failure(c, fe.Code, fiberText(fe))
		}
		slog.ErrorContext(c.UserContext(), "api: unexpected error", "route", c.Route().Path, "err", err)
		return failure(c, fiber.StatusInternalServerError, textInternal)
	}
	switch se.Code {
	case service.CodeNotFound:
		text := se.Message
		if len(notFoundText) > 0 {
			text = notFoundText[0]
		}
		return failure(c, fiber.StatusNotFound, text)
	case service.CodeValidation:
		if len(se.Fields) > 0 {
			return failure(c, fiber.StatusUnprocessableEntity, se.Fields)
		}
		return failure(c, fiber.StatusUnprocessableEntity, se.Message)
	case service.CodeConflict:
		return failure(c, fiber.StatusUnprocessableEntity, se.Message)
	case service.CodeUnauthorized:
		return failure(c, fiber.StatusUnauthorized, se.Message)
	case service.CodeForbidden:
		return failure(c, fiber.StatusForbidden, se.Message)
	case service.CodeRateLimited:
		if se.RetryAfter > 0 {
			c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(int64((se.RetryAfter+time.Second-1)/time.Second), 10))
		}
		return failure(c, fiber.StatusTooManyRequests, se.Message)
	case service.CodeUnavailable:
		return failure(c, fiber.StatusServiceUnavailable, se.Message)
	}
	slog.ErrorContext(c.UserContext(), "api: internal error", "route", c.Route().Path, "err", err)
	return failure(c, fiber.StatusInternalServerError, textInternal)
}

func fiberText(fe *fiber.Error) string {
	switch fe.Code {
	case fiber.StatusRequestEntityTooLarge:
		return textTooLarge
	case fiber.StatusBadRequest:
		return textBadBody
	case fiber.StatusInternalServerError:
		return textInternal
	case fiber.StatusNotFound:
		return "Not Found" // Fiber's own text names the path
	case fiber.StatusMethodNotAllowed:
		return "Method Not Allowed"
	}
	return fe.Message
}

// ErrorHandler answers, in the envelope, every error that reaches Fiber
// for an /api/ path: unknown routes, bodies over the limit, panics.
func ErrorHandler(c *fiber.Ctx, err error) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return fail(c, err)
}

// streamThreshold is how much of a list is built in memory before the
// answer switches to streaming: short lists go out in one piece with a
// Content-Length; long ones are streamed so memory stays flat.
const streamThreshold = 64 << 10

// errStream stops the in-memory pass of a list that outgrew streamThreshold.
var errStream = errors.New("api: list continues as a stream")

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, streamThreshold+4096); return &b }}

// appendRow appends a row's JSON: hand-written for the hot lists
// (rows.go), encoding/json for the others.
func appendRow(b []byte, row any) ([]byte, error) {
	switch r := row.(type) {
	case *models.Unsubscriber:
		return appendUnsubscriber(b, r), nil
	case *models.UnsubscribeGroupCount:
		return appendGroup(b, r), nil
	case *models.NotificationRecipient:
		return appendNotification(b, r), nil
	case *models.ContactView:
		return appendContactView(b, r), nil
	}
	j, err := json.Marshal(row)
	return append(b, j...), err
}

// lister reads a list: from the start (f.AfterID 0) or after an id.
type lister[T any] func(ctx context.Context, f service.ListFilter, fn func(*T) error) error

// list answers {"status":"success","message":{key:[rows…]}}. The first
// rows are read in the handler into a pooled buffer, so an error before
// any output (such as not found) is a normal failure envelope and a short
// list costs no goroutine. Past streamThreshold the rest is read after the
// last id sent, while the answer streams; an error then can only cut the
// body short (logged).
func list[T any, PT interface {
	*T
	RowID() int64
}](c *fiber.Ctx, key string, f service.ListFilter, read lister[T], notFoundText ...string) error {
	ctx := c.UserContext()
	bp := bufPool.Get().(*[]byte)
	buf := append((*bp)[:0], `{"status":"success","message":{`...)
	buf = append(buf, jsonString(key)...)
	buf = append(buf, ":["...)
	var last int64
	n := 0
	err := read(ctx, f, func(row *T) error {
		if n > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = appendRow(buf, row); err != nil {
			return err
		}
		n++
		last = PT(row).RowID()
		if len(buf) > streamThreshold && f.PerPage == 0 {
			return errStream
		}
		return nil
	})
	switch {
	case err == nil:
		buf = append(buf, "]}}"...)
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		c.Status(fiber.StatusOK)
		c.Response().SetBody(buf) // copies: the buffer goes back to the pool
		*bp = buf
		bufPool.Put(bp)
		return nil
	case !errors.Is(err, errStream):
		*bp = buf
		bufPool.Put(bp)
		return fail(c, err, notFoundText...)
	}
	// Long list: stream the rest. Nothing of *fiber.Ctx is used below.
	head := buf
	rest := f
	rest.AfterID = last
	bg := context.WithoutCancel(ctx)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Status(fiber.StatusOK)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer func() { *bp = head[:0]; bufPool.Put(bp) }()
		if _, err := w.Write(head); err != nil {
			return
		}
		if err := streamRows(bg, w, rest, read); err != nil {
			slog.Error("api: list cut short", "list", key, "err", err)
			return
		}
		_, _ = w.WriteString("]}}")
	})
	return nil
}

// streamBatch is how many rows pass at once from the reading goroutine to
// the encoding one.
const streamBatch = 256

var errClientGone = errors.New("api: client gone")

// streamRows writes ",row" for every row of read, in two stages on two
// cores: one goroutine reads (and shapes) rows, copying them into batches;
// this one encodes and writes them. At most a few batches are in flight.
func streamRows[T any](ctx context.Context, w *bufio.Writer, f service.ListFilter, read lister[T]) error {
	batches := make(chan []T, 4)
	done := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(batches)
		batch := make([]T, 0, streamBatch)
		err := read(ctx, f, func(row *T) error {
			batch = append(batch, *row) // the reader re-uses its rows
			if len(batch) < streamBatch {
				return nil
			}
			select {
			case batches <- batch:
			case <-done:
				return errClientGone
			}
			batch = make([]T, 0, streamBatch)
			return nil
		})
		if err == nil && len(batch) > 0 {
			select {
			case batches <- batch:
			case <-done:
			}
		}
		errc <- err
	}()
	out := make([]byte, 0, 64<<10)
	var werr error
	for batch := range batches {
		if werr != nil {
			continue // drain so the reader ends
		}
		for i := range batch {
			out = append(out, ',')
			var err error
			if out, err = appendRow(out, &batch[i]); err != nil {
				werr = err
				break
			}
		}
		if werr == nil {
			_, werr = w.Write(out)
		}
		out = out[:0]
		if werr != nil {
			close(done)
		}
	}
	if err := <-errc; err != nil && !errors.Is(err, errClientGone) {
		return err
	}
	return werr
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
