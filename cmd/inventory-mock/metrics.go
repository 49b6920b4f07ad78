package main

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/metrics"
)

// serveMetrics serves GET /metrics of m on its own listener at addr,
// without a key, for a scraper that cannot send one: the metrics hold no
// key, no session name and no path a client sent (package metrics), so
// they can go where the scraper is. The mux is private to this listener:
// nothing else of the mock is served on it.
func serveMetrics(addr string, m *metrics.Metrics, logger *slog.Logger) (stop func(), err error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", httpapi.Methods(map[string]http.Handler{"GET": m.Handler()}))
	mux.HandleFunc("/", httpapi.NotFound)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 16 << 10}
	return serveAside(srv, "--metrics-addr", addr, "metrics", "serving metrics without a key", "/metrics", logger)
}
