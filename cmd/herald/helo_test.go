package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"herald/dbtest"
)

// heloSink is an SMTP server that tells the EHLO name of each session.
type heloSink struct{ names chan string }

func (s *heloSink) NewSession(c *smtp.Conn) (smtp.Session, error) {
	// go-smtp calls NewSession once the client said EHLO (or HELO).
	s.names <- c.Hostname()
	return &sinkSession{s: &sink{got: make(chan struct{}, 16)}}, nil
}

// The EHLO name is HERALD_HELO_NAME, else the host of HERALD_BASE_URL
// (an IP as an address literal), and the relay URL's own helo= wins.
func TestHeloName(t *testing.T) {
	for _, tc := range []struct {
		name, helo, param, want string
	}{
		{"HERALD_HELO_NAME", "mail.shop.example", "", "mail.shop.example"},
		{"host of HERALD_BASE_URL", "", "", "[127.0.0.1]"},
		{"helo= of HERALD_SMTP_URL", "mail.shop.example", "&helo=relay-says.example", "relay-says.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &heloSink{names: make(chan string, 16)}
			srv := smtp.NewServer(s)
			srv.Domain = "sink.test"
			srv.ErrorLog = log.New(io.Discard, "", 0)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })

			dsn := dbtest.DSN(t)
			var out bytes.Buffer
			if err := run(context.Background(), []string{"herald", "account", "create", "--email", "owner@example.com", "--password", "test-passphrase-9", "--name", "O"},
				envFrom(map[string]string{"HERALD_DATABASE": dsn, "HERALD_LOG_LEVEL": "error"}), &out); err != nil {
				t.Fatal(err)
			}
			var keys keysOut
			_ = json.Unmarshal(out.Bytes(), &keys)
			addr := freeAddr(t)
			env := map[string]string{"HERALD_DATABASE": dsn, "HERALD_SMTP_URL": "smtp://" + ln.Addr().String() + "?tls=none" + tc.param,
				"HERALD_BASE_URL": "http://" + addr, "HERALD_ADDR": addr}
			if tc.helo != "" {
				env["HERALD_HELO_NAME"] = tc.helo
			}
			_, _ = startServer(t, env)
			// A sender's verification mail goes through the relay.
			body := url.Values{"from_name": {"Ann"}, "from_email": {"ann@shop.example.com"}, "reply_to_email": {"help@shop.example.com"},
				"country_id": {"840"}, "company_address": {"1 Main St"}, "nickname": {"shop"}}
			req, _ := http.NewRequest("POST", "http://"+addr+"/api/sender/save", strings.NewReader(body.Encode()))
			req.Header.Set("PublicKey", keys.PublicKey)
			req.Header.Set("SecretKey", keys.SecretKey)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("save: %d", resp.StatusCode)
			}
			select {
			case got := <-s.names:
				if got != tc.want {
					t.Fatalf("EHLO %q, want %q", got, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no connection reached the relay")
			}
		})
	}
}

func TestHeloNameRefused(t *testing.T) {
	for _, bad := range []string{"mail shop.example", "a\r\nQUIT"} {
		if _, err := loadConfig(envFrom(map[string]string{"HERALD_HELO_NAME": bad})); err == nil || !strings.Contains(err.Error(), "HERALD_HELO_NAME") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	c, err := loadConfig(envFrom(map[string]string{"HERALD_BASE_URL": "https://news.shop.example"}))
	if err != nil || c.HeloName != "news.shop.example" {
		t.Fatalf("default %q %v", c.HeloName, err)
	}
	if c, _ := loadConfig(envFrom(nil)); c.HeloName != "localhost" {
		t.Fatalf("without a base URL %q", c.HeloName)
	}
}
