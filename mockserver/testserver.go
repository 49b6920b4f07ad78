package mockserver

import (
	"net/http"
	"net/http/httptest"
)

// TB is the part of testing.TB that NewTest and StartTest use.
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// NewTest returns a mock built from cfg (the embedded contract, fixtures
// and development key where cfg leaves them out), closed when the test
// ends: the one helper the kit's tests use to build the mock under test.
func NewTest(tb TB, cfg Config) *Server {
	tb.Helper()
	m, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// StartTest serves a mock built from cfg on a loopback port, as
// httptest.NewServer serves a handler, its handler wrapped by wrap where
// given, and returns the mock and the server; both are closed when the
// test ends.
func StartTest(tb TB, cfg Config, wrap func(http.Handler) http.Handler) (*Server, *httptest.Server) {
	tb.Helper()
	m := NewTest(tb, cfg)
	var h http.Handler = m
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return m, srv
}
