package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"herald/delivery"
	"herald/service"
)

// inboundConfig is the inbound SMTP server's part of the environment
// (decisions.md 7).
type inboundConfig struct {
	// Addr is HERALD_INBOUND_ADDR: unset, no inbound server.
	Addr string
	// TLS is the certificate of HERALD_INBOUND_TLS_CERT and _KEY (PEM
	// files, both or neither), offered with STARTTLS; nil without.
	TLS *tls.Config
	// MaxConnsPerIP is HERALD_INBOUND_MAX_CONNS_PER_IP (default 10): the
	// connections one client address may hold at once, of the server's 50.
	MaxConnsPerIP int
}

func loadInboundConfig(getenv func(string) string) (inboundConfig, error) {
	c := inboundConfig{MaxConnsPerIP: 10}
	c.Addr = getenv("HERALD_INBOUND_ADDR")
	if v := getenv("HERALD_INBOUND_MAX_CONNS_PER_IP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c, fmt.Errorf("HERALD_INBOUND_MAX_CONNS_PER_IP: %q is not a positive number", v)
		}
		c.MaxConnsPerIP = n
	}
	cert, key := getenv("HERALD_INBOUND_TLS_CERT"), getenv("HERALD_INBOUND_TLS_KEY")
	if (cert == "") != (key == "") {
		return c, errors.New("HERALD_INBOUND_TLS_CERT and HERALD_INBOUND_TLS_KEY go together: set both or neither")
	}
	if c.Addr == "" {
		if cert != "" {
			return c, errors.New("HERALD_INBOUND_TLS_CERT is set but HERALD_INBOUND_ADDR is not: the inbound SMTP server is off")
		}
		return c, nil
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return c, fmt.Errorf("HERALD_INBOUND_ADDR: %q is not host:port such as :2525", c.Addr)
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return c, fmt.Errorf("HERALD_INBOUND_TLS_CERT/HERALD_INBOUND_TLS_KEY: %w", err)
		}
		c.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	return c, nil
}

// startInbound listens on HERALD_INBOUND_ADDR and serves the inbound SMTP
// server in the background: reports go to svc.Feedback. The returned stop
// closes it and waits for the messages being handled; with no address it
// does nothing.
func startInbound(cfg config, svc *service.Service) (stop func(), err error) {
	if cfg.Inbound.Addr == "" {
		return func() {}, nil
	}
	domain := "localhost"
	if v, err := delivery.NewVERP(cfg.BounceAddress, nil); err == nil {
		domain = v.Domain()
	}
	in, err := delivery.NewInbound(delivery.InboundConfig{Domain: domain, TLS: cfg.Inbound.TLS, MaxConnsPerIP: cfg.Inbound.MaxConnsPerIP,
		VERP: svc.Bounces.VERP, Reports: svc.Feedback})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Inbound.Addr)
	if err != nil {
		return nil, fmt.Errorf("HERALD_INBOUND_ADDR: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := in.Serve(ln); err != nil {
			slog.Error("inbound SMTP server stopped", "err", err)
		}
	}()
	slog.Info("herald inbound SMTP", "addr", ln.Addr().String(), "domain", domain, "starttls", cfg.Inbound.TLS != nil)
	return func() {
		if err := in.Close(); err != nil {
			slog.Warn("inbound SMTP server close", "err", err)
		}
		<-done
	}, nil
}

// The inbound server and Feedback meet on delivery.Reports.
var _ delivery.Reports = (*service.Feedback)(nil)
