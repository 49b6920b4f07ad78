package main

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/mockserver/store/redistest"
)

// BenchmarkEnginesThroughTheMock serves GET /v1/inventory (64 pets) and
// PATCH /v1/inventory/{petId} through the mock's whole handler (key check,
// validation against the spec, the access log, the store), in process and
// without a network, from 32 goroutines, on file and redis: what
// inventory-bench's list and update scenarios measure, less HTTP and the
// client. Each measurement runs the same requests on the mock on memory
// just before, untimed, and reports the engine's rate as a fraction of
// memory's (x-memory): a ratio of two runs side by side. Redis runs as
// inventory-bench runs it, its append-only file synced on every write.
//
//	go test -run '^$' -bench EnginesThroughTheMock -count 5 ./cmd/inventory-mock
func BenchmarkEnginesThroughTheMock(b *testing.B) {
	for _, e := range []struct {
		name  string
		value func(b *testing.B) string
	}{
		{"file", func(b *testing.B) string { return "file:" + filepath.Join(b.TempDir(), "state.db") }},
		{"redis", func(b *testing.B) string { return redistest.Start(b, redistest.Durable...).URL(0) }},
	} {
		for _, op := range []string{"list", "update"} {
			b.Run(e.name+"/"+op, func(b *testing.B) {
				memory, engine := benchMock(b, "memory"), benchMock(b, e.value(b))
				b.StopTimer()
				start := time.Now()
				serveParallel(b, memory, op)
				took := time.Since(start)
				b.StartTimer()
				serveParallel(b, engine, op)
				b.ReportMetric(float64(took)/float64(b.Elapsed()), "x-memory")
			})
		}
	}
}

// serveParallel serves op b.N times from 32 goroutines.
func serveParallel(b *testing.B, h http.Handler, op string) {
	var n atomic.Int64
	b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0)))
	b.RunParallel(func(pb *testing.PB) {
		w := &benchWriter{h: http.Header{}}
		for pb.Next() {
			var r *http.Request
			if op == "list" {
				r = httptest.NewRequest("GET", "http://mock.test/v1/inventory", nil)
			} else {
				i := n.Add(1)
				r = httptest.NewRequest("PATCH", fmt.Sprintf("http://mock.test/v1/inventory/%d", i%64+1), strings.NewReader(fmt.Sprintf(`{"quantity":%d}`, i%1000)))
				r.Header.Set("Content-Type", "application/json")
			}
			r.Header.Set("Authorization", "Bearer "+engineKey)
			clear(w.h)
			w.code = 0
			h.ServeHTTP(w, r)
			if w.code != 200 {
				b.Errorf("%s: status %d", op, w.code)
				return
			}
		}
	})
}

// benchMock builds the mock as inventory-mock does, on the store value
// names, with the embedded contract and fixtures.
func benchMock(b *testing.B, value string) http.Handler {
	f, err := parseStore(value)
	if err != nil {
		b.Fatal(err)
	}
	d, err := load(context.Background(), &options{})
	if err != nil {
		b.Fatal(err)
	}
	logger := httpapi.NewLogger(io.Discard, false)
	st, err := openStore(context.Background(), f, d, store.Options{}, logger)
	if err != nil {
		b.Fatal(err)
	}
	mock, err := mockserver.New(mockserver.Config{Contract: d.contract, Shape: d.shape, Store: st, APIKeys: []string{engineKey}, Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mock.Close() })
	return mock
}

// A benchWriter is a ResponseWriter that keeps only the status.
type benchWriter struct {
	h    http.Header
	code int
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) WriteHeader(code int)        { w.code = code }
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }
