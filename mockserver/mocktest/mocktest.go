// Package mocktest starts the mock under test, as net/http/httptest starts
// a server: the one helper the kit's tests outside package mockserver use
// to serve the mock.
package mocktest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/petstore/inventory-kit/mockserver"
)

// New returns a mock built from cfg (the embedded contract, fixtures and
// development key where cfg leaves them out), closed when the test ends.
func New(tb testing.TB, cfg mockserver.Config) *mockserver.Server {
	tb.Helper()
	m, err := mockserver.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// Start serves a mock built from cfg on a loopback port, its handler
// wrapped by wrap where given, and returns the mock and the server; both
// are closed when the test ends.
func Start(tb testing.TB, cfg mockserver.Config, wrap func(http.Handler) http.Handler) (*mockserver.Server, *httptest.Server) {
	tb.Helper()
	m := New(tb, cfg)
	var h http.Handler = m
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return m, srv
}
