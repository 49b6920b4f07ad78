package mcp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/inventory-mock/mcp"
	"github.com/petstore/inventory-kit/mockserver"
)

// BenchmarkMCPCost serves the contract's list and update from two mocks,
// one without the MCP server and one with it mounted at /__admin/mcp
// (Config.MCP), alternating request by request so that both see the same
// machine; it reports each one's time per request and the ratio with/without,
// which is what the MCP server costs the contract's operations.
//
//	go test -run '^$' -bench MCPCost -count 6 ./cmd/inventory-mock/mcp
func BenchmarkMCPCost(b *testing.B) {
	for _, op := range []struct{ name, method, path, body string }{
		{"list", "GET", "/v1/inventory", ""},
		{"update", "PATCH", "/v1/inventory/3", `{"quantity":7}`},
	} {
		b.Run(op.name, func(b *testing.B) {
			cfg := mockserver.Config{APIKeys: []string{apiKey}, AdminKey: adminKey, JournalSize: 100}
			without := mockserver.NewTest(b, cfg)
			cfg.MCP = mcp.Handler("bench")
			with := mockserver.NewTest(b, cfg)
			w := &discard{h: http.Header{}}
			serve := func(m http.Handler) time.Duration {
				r := httptest.NewRequest(op.method, op.path, strings.NewReader(op.body))
				r.Header.Set("Authorization", "Bearer "+apiKey)
				if op.body != "" {
					r.Header.Set("Content-Type", "application/json")
				}
				clear(w.h)
				start := time.Now()
				m.ServeHTTP(w, r)
				d := time.Since(start)
				if w.code != http.StatusOK {
					b.Fatalf("%s %s: status %d", op.method, op.path, w.code)
				}
				return d
			}
			var off, on time.Duration
			i := 0
			for b.Loop() {
				if i%2 == 0 { // each first half the time
					off += serve(without)
					on += serve(with)
				} else {
					on += serve(with)
					off += serve(without)
				}
				i++
			}
			b.ReportMetric(float64(off.Nanoseconds())/float64(i), "ns/without")
			b.ReportMetric(float64(on.Nanoseconds())/float64(i), "ns/with")
			b.ReportMetric(float64(on)/float64(off), "with/without")
			// Allocations do not depend on the machine's load: equal counts
			// say the same work is done.
			b.ReportMetric(testing.AllocsPerRun(50, func() { serve(without) }), "allocs/without")
			b.ReportMetric(testing.AllocsPerRun(50, func() { serve(with) }), "allocs/with")
		})
	}
}

// A discard is a ResponseWriter that keeps only the status.
type discard struct {
	h    http.Header
	code int
}

func (w *discard) Header() http.Header         { return w.h }
func (w *discard) WriteHeader(code int)        { w.code = code }
func (w *discard) Write(p []byte) (int, error) { return len(p), nil }
