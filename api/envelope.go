package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"

	"github.com/gofiber/fiber/v2"

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
	case service.CodeRateLimited:
		return failure(c, fiber.StatusTooManyRequests, se.Message)
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

// streamThreshold is how much of a list is buffered before the answer
// switches to streaming: short lists go out in one piece with a
// Content-Length; long ones are streamed so memory stays flat.
const streamThreshold = 64 << 10

// list answers {"status":"success","message":{key:[rows…]}}, rows coming
// from each. each runs in its own goroutine writing into a pipe: an error
// it returns before the first streamThreshold bytes (such as not found)
// becomes a normal failure envelope; past that the body is streamed and
// an error can only cut it short (logged).
func list[T any](c *fiber.Ctx, key string, each func(ctx context.Context, fn func(*T) error) error, notFoundText ...string) error {
	ctx, cancel := context.WithCancel(context.WithoutCancel(c.UserContext()))
	pr, pw := io.Pipe()
	prefix := `{"status":"success","message":{` + jsonString(key) + `:[`
	go func() {
		bw := bufio.NewWriterSize(pw, streamThreshold)
		_, _ = bw.WriteString(prefix)
		first := true
		err := each(ctx, func(row *T) error {
			if !first {
				if err := bw.WriteByte(','); err != nil {
					return err
				}
			}
			first = false
			b, err := json.Marshal(row)
			if err != nil {
				return err
			}
			_, err = bw.Write(b)
			return err
		})
		if err == nil {
			_, _ = bw.WriteString("]}}")
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()

	buf := make([]byte, streamThreshold)
	n, err := io.ReadFull(pr, buf)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		cancel()
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		return c.Status(fiber.StatusOK).Send(buf[:n])
	case err != nil:
		cancel()
		return fail(c, err, notFoundText...)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Status(fiber.StatusOK)
	c.Context().SetBodyStream(&streamBody{Reader: io.MultiReader(bytes.NewReader(buf[:n]), pr), pr: pr, cancel: cancel}, -1)
	return nil
}

// streamBody is the rest of a streamed list; fasthttp closes it when the
// answer is written or the client has gone, which stops the producer.
type streamBody struct {
	io.Reader
	pr     *io.PipeReader
	cancel context.CancelFunc
}

func (s *streamBody) Read(p []byte) (int, error) {
	n, err := s.Reader.Read(p)
	if err != nil && err != io.EOF {
		slog.Error("api: list cut short", "err", err)
	}
	return n, err
}

func (s *streamBody) Close() error {
	s.cancel()
	return s.pr.Close()
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
