package delivery

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/mail"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"herald/templates"
)

// benchHTML is a ~20 KB table-layout newsletter with five placeholders, the size
// docs/BENCHMARKS.md names for the mail benchmarks.
func benchHTML() string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>td{font-family:Arial}</style></head><body>`)
	b.WriteString(`<table width="100%" cellpadding="0" cellspacing="0"><tr><td><h1>Hello ((first_name)) ((last_name))</h1></td></tr>`)
	for b.Len() < 19_500 {
		b.WriteString(`<tr><td style="padding:12px 24px;color:#333;font-size:15px;line-height:22px">Our café has new crème brûlée, `)
		b.WriteString(`fresh croissants and a <a href="https://shop.example.com/p/123?utm_source=herald">weekly offer</a> for you.</td></tr>`)
	}
	b.WriteString(`<tr><td>Your code: ((company_name))-((age))</td></tr>`)
	b.WriteString(`<tr><td><a href="((unsubscribe_preferences))">Unsubscribe</a></td></tr></table></body></html>`)
	return b.String()
}

func benchLookup(i int) func(string) string {
	return func(name string) string {
		switch name {
		case "first_name":
			return "Zoë"
		case "last_name":
			return fmt.Sprint("Nº", i)
		case "company_name":
			return "ACME"
		case "age":
			return "42"
		case "unsubscribe_preferences":
			return "https://herald.example.com/u/tok"
		}
		return ""
	}
}

func BenchmarkRender(b *testing.B) {
	tmpl := Compile(benchHTML())
	lookups := make([]func(string) string, 1000)
	for i := range lookups {
		lookups[i] = HTMLEscaped(benchLookup(i))
	}
	b.SetBytes(int64(len(benchHTML())))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = tmpl.Render(lookups[i%len(lookups)])
		i++
	}
}

func benchMessage(b *testing.B) *Message {
	b.Helper()
	html := Compile(benchHTML()).Render(HTMLEscaped(benchLookup(1)))
	return &Message{
		From:               mail.Address{Name: "Café Zoë", Address: "news@shop.example.com"},
		ReplyTo:            "help@shop.example.com",
		To:                 mail.Address{Name: "Ana", Address: "ana@example.net"},
		Subject:            "Spring sale — 20% off",
		HTML:               html,
		Preheader:          "Only this week",
		ListUnsubscribeURL: "https://herald.example.com/u/abc123",
		OneClick:           true,
	}
}

// BenchmarkBuild includes deriving the text part from the 20 KB HTML.
func BenchmarkBuild(b *testing.B) {
	m := benchMessage(b)
	b.ReportAllocs()
	for b.Loop() {
		mm := *m
		if _, err := Build(&mm); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSign(b *testing.B) {
	m := benchMessage(b)
	raw, err := Build(m)
	if err != nil {
		b.Fatal(err)
	}
	for _, algo := range []string{DKIMRSA, DKIMEd25519} {
		b.Run(algo, func(b *testing.B) {
			k := testKey(b, algo)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := k.Sign(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRSASignature is one RSA 2048 signature of a SHA-256 digest,
// the floor of a DKIM-signed message, by this build's RSA code (RSAEngine:
// crypto/rsa, or OpenSSL's libcrypto with -tags openssl); under
// GOEXPERIMENT=boringcrypto crypto/rsa is BoringSSL's.
func BenchmarkRSASignature(b *testing.B) {
	k := testKey(b, DKIMRSA)
	digest := sha256.Sum256([]byte("herald"))
	b.Run(RSAEngine, func(b *testing.B) {
		cpuPerOp(b, func() {
			if _, err := k.signRSA(digest[:]); err != nil {
				b.Error(err)
			}
		})
	})
}

// BenchmarkSign17KB signs library design 2 (the 17 KB newsletter of the
// send benchmark, rendered for a sample contact) on every core
// (GOMAXPROCS goroutines, as the engine's sending workers do), side by
// side: Build alone, Build then go-msgauth's signer (herald's path before
// its own signer), Build then SignMessage, and BuildSigned (the body hashed while
// it is written). msg/s is the parallel rate, cpu-µs/msg the process's CPU
// time per message (getrusage, GC included).
func BenchmarkSign17KB(b *testing.B) {
	designs, err := templates.Library()
	if err != nil {
		b.Fatal(err)
	}
	values := templates.SampleValues()
	m := benchMessage(b)
	m.HTML = Compile(designs[1].HTML).Render(HTMLEscaped(func(n string) string { return values[n] }))
	k := testKey(b, DKIMRSA)
	variants := []struct {
		name string
		f    func(m *Message) ([]byte, error)
	}{
		{"build-only", Build},
		{"build+go-msgauth", func(m *Message) ([]byte, error) {
			raw, err := Build(m)
			if err != nil {
				return nil, err
			}
			return msgauthSign(b, raw, k), nil
		}},
		{"build+SignMessage", func(m *Message) ([]byte, error) {
			raw, err := Build(m)
			if err != nil {
				return nil, err
			}
			return SignMessage(raw, k)
		}},
		{"BuildSigned", func(m *Message) ([]byte, error) { return BuildSigned(m, k) }},
	}
	for _, v := range variants {
		b.Run(v.name+"/"+RSAEngine, func(b *testing.B) {
			var size atomic.Int64
			cpuPerOp(b, func() {
				mm := *m
				out, err := v.f(&mm)
				if err != nil {
					b.Error(err)
				}
				size.Store(int64(len(out)))
			})
			b.ReportMetric(float64(size.Load()), "bytes/msg")
		})
	}
}

// cpuPerOp runs f on GOMAXPROCS goroutines and reports msg/s (the parallel
// rate) and cpu-µs/msg (this process's user and system time per call).
func cpuPerOp(b *testing.B, f func()) {
	b.ReportAllocs()
	before := cpuTime()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			f()
		}
	})
	wall := time.Since(start)
	cpu := cpuTime() - before
	b.ReportMetric(float64(b.N)/wall.Seconds(), "msg/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/msg")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBuildAndSign is one message per iteration from rendered template to
// signed bytes (render + build + RSA signature).
func BenchmarkBuildAndSign(b *testing.B) {
	tmpl := Compile(benchHTML())
	m := benchMessage(b)
	k := testKey(b, DKIMRSA)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		mm := *m
		mm.HTML = tmpl.Render(HTMLEscaped(benchLookup(i)))
		raw, err := Build(&mm)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := SignMessage(raw, k); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkSMTP sends the 20 KB message through the pool to the loopback sink,
// which runs in the same process (so it shares the CPU with the client).
func BenchmarkSMTP(b *testing.B) {
	raw, err := Build(benchMessage(b))
	if err != nil {
		b.Fatal(err)
	}
	const conns = 4
	b.Run("pool", func(b *testing.B) {
		s := startServer(b, serverOpts{tls: TLSNone})
		p := NewSMTPPool(s.config(TLSNone), conns)
		defer p.Close()
		b.SetParallelism(conns)
		b.SetBytes(int64(len(raw)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := p.Send(context.Background(), "b@herald.test", []string{"r@example.test"}, raw); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
