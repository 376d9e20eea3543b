package delivery

import (
	"context"
	"fmt"
	"net/mail"
	"strings"
	"testing"
)

// benchHTML is a ~20 KB table-layout newsletter with five placeholders, the size
// issue 4's benchmark names.
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
		if _, err := k.Sign(raw); err != nil {
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
