// Package bare is `load bare`, the baseline of the API benchmark (make bench): a Fiber
// app configured like cmd/herald/app.go that answers GET / with a small
// JSON envelope and does nothing else. No middleware, no database.
//
// GET /bytes/N answers a ready-made JSON envelope of exactly N bytes (N up
// to 1 MiB): the cost of sending an answer as large as a list, with no
// work to make it (the harness's -calibrate target).
//
//	BARE_ADDR=127.0.0.1:8081 bin/load bare
package bare

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
)

// envelope is the shape of herald's API answers.
type envelope struct {
	Status  string `json:"status"`
	Message any    `json:"message,omitempty"`
}

// paddedEnvelope is {"status":"success","message":"xxx…"} of n bytes.
func paddedEnvelope(n int) []byte {
	const head, tail = `{"status":"success","message":"`, `"}`
	return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
}

func Main() {
	addr := os.Getenv("BARE_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8081"
	}
	app := fiber.New(fiber.Config{
		AppName:               "bare",
		BodyLimit:             10 << 20,
		DisableStartupMessage: true,
		ReadTimeout:           60 * time.Second,
		WriteTimeout:          10 * time.Minute,
		IdleTimeout:           2 * time.Minute,
	})
	app.Get("/", func(c *fiber.Ctx) error {
		return c.JSON(envelope{Status: "success", Message: "ok"})
	})
	var bodies sync.Map // size → []byte
	app.Get("/bytes/:n", func(c *fiber.Ctx) error {
		n, err := c.ParamsInt("n")
		if err != nil || n < 32 || n > 1<<20 {
			return c.SendStatus(fiber.StatusNotFound)
		}
		b, ok := bodies.Load(n)
		if !ok {
			b, _ = bodies.LoadOrStore(n, paddedEnvelope(n))
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		return c.Send(b.([]byte))
	})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	case <-ctx.Done():
	}
	_ = app.ShutdownWithTimeout(5 * time.Second)
}
