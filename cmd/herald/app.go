package main

import (
	"context"
	"crypto/subtle"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/filesystem"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"herald/api"
	"herald/delivery"
	"herald/service"
	"herald/static"
	"herald/web"
)

// bodyLimit is the largest request body (decisions.md section 1: 10 MB;
// 413 beyond).
const bodyLimit = 10 << 20

// newApp wires the console, the API, the public pages, static files,
// health and metrics into one Fiber app. relays, when the transport is
// several relays, feeds the console's Relays page.
// access writes the request lines (nil: through slog, as tests run it).
func newApp(ctx context.Context, svc *service.Service, cfg config, relays *delivery.Relays, access *accessLog) (*fiber.App, error) {
	errorHandler := func(c *fiber.Ctx, err error) error {
		// A request fasthttp could not read (a header block over the read
		// buffer: 431; a malformed request line) never reached the router:
		// its path is unknown, so it gets the API's envelope, which is what
		// an API client needs and a browser still shows (decisions.md 8).
		if isAPI(c) || c.Locals(localRouted) == nil {
			return api.ErrorHandler(c, err)
		}
		return web.ErrorHandler(c, err)
	}
	app := fiber.New(fiber.Config{
		AppName:      "herald",
		BodyLimit:    bodyLimit,
		ErrorHandler: errorHandler,
		// Bodies over BodyLimit are not refused by fasthttp but handed over
		// as a stream: the upload routes read them as one, limitBody refuses
		// them everywhere else. Multipart bodies are not parsed ahead, so an
		// upload is imported while it arrives.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		// The request line and headers must fit the read buffer: 32 KiB
		// lets an 8 KiB URL and ordinary headers through; a longer URL is
		// refused by limitURI (414), a larger header block by fasthttp (431).
		ReadBufferSize:        readBuffer,
		DisableStartupMessage: true,
		ReadTimeout:           60 * time.Second,
		WriteTimeout:          10 * time.Minute,
		IdleTimeout:           2 * time.Minute,
	})

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := newHTTPMetrics(reg)

	app.Use(observe(m, access, errorHandler))
	app.Use(limitURI(maxURI))
	app.Use(limitBody(bodyLimit, api.UploadPath, web.UploadPath))
	app.Use(recover.New(recover.Config{
		EnableStackTrace: true,
		StackTraceHandler: func(c *fiber.Ctx, e any) {
			slog.Error("panic", "route", c.Route().Path, "panic", e)
		},
	}))

	app.Get("/healthz", func(c *fiber.Ctx) error {
		if err := svc.DB.Ping(c.UserContext()); err != nil {
			return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable"})
		}
		return c.JSON(fiber.Map{"status": "ok"})
	})
	app.Get("/metrics", metricsToken(cfg.MetricsToken), adaptor.HTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	// Browsers ask for /favicon.ico on pages that name no icon (a mail's
	// "view in browser", a raw JSON answer): the same SVG as the console's.
	app.Get("/favicon.ico", func(c *fiber.Ctx) error {
		b, err := static.FS.ReadFile("img/favicon.svg")
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderCacheControl, "public, max-age=86400")
		c.Type("svg")
		return c.Send(b)
	})
	app.Use("/static", filesystem.New(filesystem.Config{
		Root:   http.FS(static.FS),
		MaxAge: 3600,
	}))

	api.New(svc, api.Options{RatePerSecond: cfg.APIRate, MaxUploadBytes: cfg.MaxUploadMB << 20}).Mount(app.Group("/api"))

	opt := web.Options{BaseURL: cfg.BaseURL, MaxUploadBytes: cfg.MaxUploadMB << 20, TrustedProxies: cfg.TrustedProxies,
		Hearing: cfg.hearing(), Webhooks: cfg.Webhooks, Mail: cfg.mail()}
	if relays != nil {
		opt.Relays = relays
	}
	w, err := web.New(ctx, svc, opt)
	if err != nil {
		return nil, err
	}
	w.Mount(app)
	return app, nil
}

// metricsToken lets /metrics answer only a request bearing token
// (HERALD_METRICS_TOKEN, decisions.md 8); an empty token leaves it open.
func metricsToken(token string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if token == "" {
			return c.Next()
		}
		got, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) != 1 {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="herald metrics"`)
			return c.Status(fiber.StatusUnauthorized).SendString("Unauthorized")
		}
		return c.Next()
	}
}

// Sizes of a request's head: the read buffer every request line and
// header block must fit, and the longest URL served (414 beyond).
const (
	readBuffer = 32 << 10
	maxURI     = 16 << 10
)

// localRouted marks a request that reached the router (see errorHandler).
const localRouted = "herald.routed"

// limitURI refuses (414) a URL longer than max, in the envelope of its
// edge: the API's JSON or the console's page.
func limitURI(max int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if len(c.Request().Header.RequestURI()) > max {
			return fiber.ErrRequestURITooLong
		}
		return c.Next()
	}
}

// limitBody refuses (413) a body over limit on every route but the upload
// paths, which read their streamed bodies with their own limit.
func limitBody(limit int, uploads ...string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		for _, p := range uploads {
			if c.Path() == p {
				return c.Next()
			}
		}
		req := c.Request()
		if cl := req.Header.ContentLength(); cl > limit {
			return fiber.ErrRequestEntityTooLarge
		}
		if req.IsBodyStream() && req.Header.ContentLength() < 0 {
			// Chunked: read at most limit+1 bytes before deciding.
			body, err := io.ReadAll(io.LimitReader(req.BodyStream(), int64(limit)+1))
			if err != nil {
				return fiber.ErrBadRequest
			}
			if len(body) > limit {
				return fiber.ErrRequestEntityTooLarge
			}
			req.SetBody(body)
		}
		return c.Next()
	}
}

func isAPI(c *fiber.Ctx) bool { return strings.HasPrefix(c.Path(), "/api/") || c.Path() == "/api" }

type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	// The two series of each method, route and status, looked up once:
	// the vectors hash their label values on every WithLabelValues.
	mu     sync.RWMutex
	series map[seriesKey]*series
}

type seriesKey struct {
	method, route string
	status        int
}

type series struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// maxSeries bounds httpMetrics.series (the methods a client may send are
// many); beyond it, a request's series are looked up in the vectors.
const maxSeries = 4096

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_http_requests_total", Help: "HTTP requests answered, by method, route and status.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "herald_http_request_duration_seconds", Help: "Time to answer HTTP requests, by method, route and status.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route", "status"}),
		series: map[seriesKey]*series{},
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// observe records one answered request. method may be fasthttp's bytes of
// the request: it is copied before it is kept.
func (m *httpMetrics) observe(method, route string, status int, elapsed time.Duration) {
	k := seriesKey{method: method, route: route, status: status}
	m.mu.RLock()
	s := m.series[k]
	m.mu.RUnlock()
	if s == nil {
		k.method = strings.Clone(method)
		st := strconv.Itoa(status)
		s = &series{requests: m.requests.WithLabelValues(k.method, route, st), latency: m.latency.WithLabelValues(k.method, route, st)}
		m.mu.Lock()
		if len(m.series) < maxSeries {
			m.series[k] = s
		}
		m.mu.Unlock()
	}
	s.requests.Inc()
	s.latency.Observe(elapsed.Seconds())
}

// observe logs one line per request and records its metrics. It answers
// errors itself (through errorHandler) so that the status it records is
// the one sent. Nothing secret is logged: no headers, no bodies, no query.
func observe(m *httpMetrics, access *accessLog, errorHandler fiber.ErrorHandler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		c.Locals(localRouted, true)
		if err := c.Next(); err != nil {
			if herr := errorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		elapsed := time.Since(start)
		status := c.Response().StatusCode()
		route := c.Route().Path
		m.observe(c.Method(), route, status, elapsed)
		r := request{method: c.Method(), path: c.Path(), route: route, status: status, duration: elapsed}
		r.account, r.hasAccount = c.Locals("account").(int64)
		access.log(c.UserContext(), r)
		return nil
	}
}
