package delivery

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"herald/smtptest"
)

// BenchmarkRelaysSend compares one SMTP pool with Relays over two relays
// (the same 8 connections in all) on loopback sinks that keep only counts:
// the cost of routing, the round robin, the tokens of a rate= and the
// carrier note per message.
func BenchmarkRelaysSend(b *testing.B) {
	msg := []byte("From: news@shop.example\r\nTo: r@example.test\r\nSubject: x\r\n\r\n" + strings.Repeat("0123456789abcdef\r\n", 900))
	sink := func() *smtptest.Server {
		s := smtptest.Start(b)
		s.Discard = true
		return s
	}
	for _, tc := range []struct {
		name string
		open func(a, c *smtptest.Server) Transport
	}{
		{"pool", func(a, _ *smtptest.Server) Transport {
			return NewSMTPPool(SMTPConfig{Host: "127.0.0.1", Port: port(a), TLS: TLSNone}, 8)
		}},
		{"relays", func(a, c *smtptest.Server) Transport {
			t, err := Open(a.URL()+"&name=a&max_conns=4 "+c.URL()+"&name=c&max_conns=4&rate=1000000/s", OpenOptions{})
			if err != nil {
				b.Fatal(err)
			}
			return t
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			a, c := sink(), sink()
			tr := tc.open(a, c)
			defer tr.Close()
			b.SetBytes(int64(len(msg)))
			b.SetParallelism(4) // 4 × GOMAXPROCS goroutines; the pools bound the connections
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					ctx, _ := WithCarrier(context.Background())
					if err := tr.Send(ctx, "b@herald.test", []string{"r@example.test"}, msg); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func port(s *smtptest.Server) int {
	var p int
	fmt.Sscanf(s.Addr[strings.LastIndexByte(s.Addr, ':')+1:], "%d", &p)
	return p
}
