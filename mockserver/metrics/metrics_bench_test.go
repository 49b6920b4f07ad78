package metrics

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// BenchmarkRequests is what counting one request costs: the access log
// and an empty handler, with and without the metrics between them.
//
//	go test -run '^$' -bench . -count 10 ./mockserver/metrics
func BenchmarkRequests(b *testing.B) {
	c, err := spec.Shared()
	if err != nil {
		b.Fatal(err)
	}
	op := c.Operations[0]
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.EntryOf(r).Op = op
		w.WriteHeader(http.StatusOK)
	})
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rd := exchange.NewRedactor()
	for _, tt := range []struct {
		name string
		h    http.Handler
	}{
		{"off", httpapi.Front{Logger: logger, Redactor: rd}.Serve(h)},
		{"on", httpapi.Front{Logger: logger, Redactor: rd, After: []httpapi.After{New().Observe}}.Serve(h)},
	} {
		b.Run(tt.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/v1/inventory", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				tt.h.ServeHTTP(w, r)
			}
		})
	}
}

// BenchmarkObserve is the counting alone, of one request.
func BenchmarkObserve(b *testing.B) {
	c, _ := spec.Shared()
	op := c.Operations[0]
	m := New()
	rd := exchange.NewRedactor()
	var n int
	h := httpapi.Front{Logger: slog.New(slog.DiscardHandler), Redactor: rd}.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := httpapi.EntryOf(r)
		e.Op = op
		w.WriteHeader(http.StatusOK)
		for range n {
			m.Observe(w, r, e)
		}
	}))
	r := httptest.NewRequest("GET", "/v1/inventory", nil)
	w := httptest.NewRecorder()
	n = b.N
	b.ResetTimer()
	h.ServeHTTP(w, r)
}
