package proxy

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// DefaultTimeout bounds each wait on the backend: connecting, the TLS
// handshake, and the time without a byte from it or to it, before or
// during its answer.
const DefaultTimeout = 30 * time.Second

// TransportOptions say how the proxy talks to the backend.
type TransportOptions struct {
	// CACertFile names a PEM file of certificates to trust for the
	// backend, besides the system's.
	CACertFile string
	// InsecureSkipVerify skips the check of the backend's certificate.
	InsecureSkipVerify bool
	// Timeout bounds connecting, the TLS handshake, and the time a
	// connection to the backend may go without a byte read or written, as
	// nginx's proxy_read_timeout does: a backend that stops sending, before
	// or during its answer, ends the exchange. An idle keep-alive
	// connection is closed after it. 0: DefaultTimeout.
	Timeout time.Duration
	// MaxIdleConns is the number of idle keep-alive connections kept to
	// the backend. 0: 256.
	MaxIdleConns int
}

// NewTransport builds the transport to the backend: keep-alive
// connections, HTTP/2 where the backend offers it over TLS, the given
// roots and timeouts, and no proxy from the environment (the backend is
// addressed directly).
func NewTransport(o TransportOptions) (*http.Transport, error) {
	o.Timeout = cmp.Or(max(o.Timeout, 0), DefaultTimeout)
	o.MaxIdleConns = cmp.Or(max(o.MaxIdleConns, 0), 256)
	cfg := &tls.Config{InsecureSkipVerify: o.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	if o.CACertFile != "" {
		pool, err := exchange.TrustedRoots(o.CACertFile)
		if err != nil {
			return nil, fmt.Errorf("CA certificates: %w", err)
		}
		cfg.RootCAs = pool
	}
	dialer := &net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &idleConn{Conn: c, timeout: o.Timeout}, nil
	}
	return &http.Transport{
		DialContext:           dial,
		TLSClientConfig:       cfg,
		TLSHandshakeTimeout:   o.Timeout,
		ResponseHeaderTimeout: o.Timeout,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
		// The client's Accept-Encoding passes as it came: the transport
		// must not ask for gzip itself and decode the answer.
		DisableCompression:  true,
		MaxIdleConns:        o.MaxIdleConns,
		MaxIdleConnsPerHost: o.MaxIdleConns,
		IdleConnTimeout:     90 * time.Second,
	}, nil
}

// An idleConn gives its peer the timeout again at every read and write:
// one deadline per connection, none per request.
type idleConn struct {
	net.Conn
	timeout time.Duration
}

func (c *idleConn) Read(p []byte) (int, error) {
	c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
	return c.Conn.Read(p)
}

func (c *idleConn) Write(p []byte) (int, error) {
	deadline := time.Now().Add(c.timeout)
	c.Conn.SetWriteDeadline(deadline)
	c.Conn.SetReadDeadline(deadline) // an upload in progress is not silence
	return c.Conn.Write(p)
}
