package delivery

import (
	"bytes"
	"errors"
	"io"
	"mime/quotedprintable"
	"strings"
	"testing"
)

// stdlibQP is what appendQP must reproduce: mime/quotedprintable's Writer in
// text mode, then Close.
func stdlibQP(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := quotedprintable.NewWriter(&b)
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func qpCases() []string {
	x := func(n int) string { return strings.Repeat("x", n) }
	cases := []string{
		"",
		" ", "   ", "\t", " \t ",
		"a ", "a\t", "a \n", "a\t\n", "a \r\n", "a\t\r\nb", "a  \n \n\t\n", "a \rb",
		"hello world", "a=b", "=", "==\n=",
		"\r", "\n", "\r\n", "a\rb", "a\nb", "\r\r\n", "\n\r", "\r\n\r\n", "\n\n\r\r",
		"\r\x80\n", "\r=\n", "\r==\r\n", "\r\x00a\n", // a CR keeps an LF pending past encoded bytes
		".\n", ".leading dot\r\n.\r\n", "\n.\n",
		"\x00\x01\x7f\x80\xff",
		"Zoë café crème brûlée — ✓ 😀",
		strings.Repeat("\xff", 100),
		strings.Repeat("=", 60),
		strings.Repeat("é", 50),
		strings.Repeat("a=", 80),
		strings.Repeat("ab ", 60),
		strings.Repeat(" ", 200),
		strings.Repeat("\t", 80) + "\n",
		strings.Repeat(x(100)+"\n", 3),
		strings.Repeat(x(160)+"\r\n", 2),
		`<td style="padding:12px 24px;color:#333">Our café has new crème brûlée, <a href="https://shop.example.com/p/123?utm_source=herald">offer</a></td>`,
	}
	// Lines of 72..78 characters, ending in everything that matters at a break.
	for n := 72; n <= 78; n++ {
		for _, end := range []string{"", "\n", "\r\n", " ", "\t", " \n", "\t\r\n", " x", "=", "=\n", "é", "é\n", "\xff", "ab", "  \n", "\r", "\r\r"} {
			cases = append(cases, x(n)+end, x(n)+end+x(n))
		}
	}
	// Encoded bytes and spaces straddling the 76-character limit at every offset.
	for n := 60; n <= 76; n++ {
		cases = append(cases, x(n)+"é=é ", x(n)+"= \n", x(n)+"  ", x(n)+" =")
	}
	return cases
}

func TestQPMatchesStdlib(t *testing.T) {
	t.Parallel()
	for _, s := range qpCases() {
		if got, want := string(appendQP(nil, s)), stdlibQP(t, s); got != want {
			t.Errorf("appendQP(%q)\n got %q\nwant %q", s, got, want)
		}
	}
}

func TestQPAppends(t *testing.T) {
	t.Parallel()
	got := appendQP([]byte("head:"), "a b \n")
	if want := "head:a b=20\r\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWriteQP(t *testing.T) {
	t.Parallel()
	for _, s := range append(qpCases(), qpBenchHTML()) {
		var b bytes.Buffer
		if err := writeQP(&b, s); err != nil {
			t.Fatal(err)
		}
		if got, want := b.String(), stdlibQP(t, s); got != want {
			t.Errorf("writeQP(%q)\n got %q\nwant %q", s, got, want)
		}
	}
	boom := errors.New("boom")
	if err := writeQP(failWriter{boom}, "x"); !errors.Is(err, boom) {
		t.Errorf("writeQP to a failing writer: %v, want %v", err, boom)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// qpNormalized is s with every CRLF, lone CR and lone LF as CRLF: what
// decoding the encoding gives back. ok is false when s holds a CR, then only
// bytes that get encoded, then an LF: the encoder (like the standard library's)
// drops that LF.
func qpNormalized(s string) (norm string, ok bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\r':
			j := i + 1
			for j < len(s) && qpClass[s[j]] == qpEncoded {
				j++
			}
			if j > i+1 && j < len(s) && s[j] == '\n' {
				return "", false
			}
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			b.WriteString("\r\n")
		case '\n':
			b.WriteString("\r\n")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

func checkQPRoundTrip(t *testing.T, s string, enc []byte) {
	t.Helper()
	want, ok := qpNormalized(s)
	if !ok {
		return
	}
	got, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(enc)))
	if err != nil {
		t.Fatalf("decoding the encoding of %q (%q): %v", s, enc, err)
	}
	if string(got) != want {
		t.Errorf("round trip of %q via %q\n got %q\nwant %q", s, enc, got, want)
	}
}

func TestQPRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range append(qpCases(), qpBenchHTML()) {
		checkQPRoundTrip(t, s, appendQP(nil, s))
	}
}

func TestQPLineLength(t *testing.T) {
	t.Parallel()
	for _, s := range append(qpCases(), qpBenchHTML()) {
		for _, l := range strings.Split(string(appendQP(nil, s)), "\r\n") {
			if len(l) > 76 {
				t.Fatalf("encoding of %q has a line of %d characters: %q", s, len(l), l)
			}
		}
	}
}

func FuzzQP(f *testing.F) {
	for _, s := range qpCases() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendQP(nil, s)
		if want := stdlibQP(t, s); string(enc) != want {
			t.Fatalf("appendQP(%q)\n got %q\nwant %q", s, enc, want)
		}
		checkQPRoundTrip(t, s, enc)
	})
}

// qpBenchHTML is a ~16 KB newsletter part: ASCII markup full of '=' in
// attributes, some accented text, and long lines.
func qpBenchHTML() string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><style>td{font-family:Arial,sans-serif}</style></head>\n<body>")
	b.WriteString(`<table width="100%" cellpadding="0" cellspacing="0" role="presentation"><tr><td><h1>Hello Zoë Müller</h1></td></tr>`)
	for i := 0; b.Len() < 16_000; i++ {
		b.WriteString(`<tr><td style="padding:12px 24px;color:#333333;font-size:15px;line-height:22px">Our café has new crème brûlée, `)
		b.WriteString(`fresh croissants and a <a href="https://shop.example.com/p/123?utm_source=herald&amp;utm_medium=email">weekly offer</a> for you. `)
		b.WriteString("Opening hours: Monday to Friday, 8:00 – 18:00.</td></tr>")
		if i%4 == 3 {
			b.WriteString("\n")
		}
	}
	b.WriteString("<tr><td><a href=\"https://herald.example.com/u/tok\">Unsubscribe</a></td></tr></table>\n</body></html>\n")
	return b.String()
}

func BenchmarkQP(b *testing.B) {
	s := qpBenchHTML()
	var out bytes.Buffer
	b.Run("stdlib", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		b.ReportAllocs()
		for b.Loop() {
			out.Reset()
			w := quotedprintable.NewWriter(&out)
			io.WriteString(w, s)
			w.Close()
		}
	})
	b.Run("herald", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		b.ReportAllocs()
		for b.Loop() {
			out.Reset()
			writeQP(&out, s)
		}
	})
}
