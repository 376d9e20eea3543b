package api

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"herald/dbtest"
	"herald/service"
)

// hugeBody is a body just under the 10 MB limit holding n items of an
// array: a JSON object {"<key>":[1,1,…]}, or key[]=1&key[]=1… URL-encoded.
func hugeBody(key string, n int, json bool) []byte {
	var b bytes.Buffer
	if json {
		b.Grow(2*n + len(key) + 8)
		b.WriteString(`{"` + key + `":[`)
		b.WriteString(strings.Repeat("1,", n-1))
		b.WriteString("1]}")
		return b.Bytes()
	}
	item := key + "%5B%5D=1"
	b.Grow((len(item) + 1) * n)
	for i := range n {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(item)
	}
	return b.Bytes()
}

// benchHugeBulkDelete POSTs body to contacts/bulk-delete once per
// iteration and wants the 422 refusal of more than 10,000 ids. Run with
// -benchtime 1x under /usr/bin/time -v to see the peak memory of one
// such request:
//
//	go test -c -o /tmp/api.test ./api/ && /usr/bin/time -v /tmp/api.test -test.run '^$' -test.bench HugeBulkDelete/json -test.benchtime 1x -test.benchmem
func benchHugeBulkDelete(b *testing.B, contentType string, body []byte) {
	svc := dbtest.Service(b)
	_, keys, err := svc.Accounts.Create(context.Background(), service.AccountInput{Name: "Bench", Email: "bench@example.com", Password: "bench-password-1"})
	if err != nil {
		b.Fatal(err)
	}
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler, BodyLimit: 10 << 20, DisableStartupMessage: true})
	New(svc, Options{}).Mount(app.Group("/api"))
	h := app.Handler()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var req fasthttp.Request
		req.Header.SetMethod(fiber.MethodPost)
		req.SetRequestURI("/api/contacts/bulk-delete")
		req.Header.SetContentType(contentType)
		req.Header.Set("PublicKey", keys.PublicKey)
		req.Header.Set("SecretKey", keys.SecretKey)
		req.SetBodyRaw(body)
		var rc fasthttp.RequestCtx
		rc.Init(&req, nil, nil)
		h(&rc)
		if got := rc.Response.StatusCode(); got != fiber.StatusUnprocessableEntity ||
			!bytes.Contains(rc.Response.Body(), []byte("The str ids may not have more than 10000 items.")) {
			b.Fatalf("status %d: %.300s", got, rc.Response.Body())
		}
	}
}

// BenchmarkHugeBulkDelete is one bulk delete of about 4.9 million ids
// (9.8 MB of JSON), and of as many as fit 10 MB URL-encoded: both are
// refused once the 10,001st id is read.
func BenchmarkHugeBulkDelete(b *testing.B) {
	b.Run("json", func(b *testing.B) {
		benchHugeBulkDelete(b, fiber.MIMEApplicationJSON, hugeBody("strIds", 4_900_000, true))
	})
	b.Run("urlencoded", func(b *testing.B) {
		benchHugeBulkDelete(b, fiber.MIMEApplicationForm, hugeBody("strIds", 10<<20/15, false))
	})
}
