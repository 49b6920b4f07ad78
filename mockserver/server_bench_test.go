package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/metrics"
	"github.com/petstore/inventory-kit/mockserver/store"
)

// The benchmarks of the mock's hot paths: auth, list encoding, update, and
// the whole handler as an http.Handler (request validation alone is
// benchmarked in spec). Run them with
//
//	go test -run '^$' -bench . -benchmem ./mockserver
//
// They check nothing about time; they are for comparing a change with the
// code before it (benchstat), and for profiles (-cpuprofile).

// benchRequest builds a request the whole chain accepts.
func benchRequest(method, path, body string) *http.Request {
	var r *http.Request
	if body == "" {
		r = httptest.NewRequest(method, "http://mock.test"+path, nil)
	} else {
		r = httptest.NewRequest(method, "http://mock.test"+path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	}
	r.Header.Set("Authorization", "Bearer "+testKey)
	return r
}

// A discardWriter is a ResponseWriter that keeps only the status, so the
// benchmarks measure the mock rather than httptest.ResponseRecorder.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }

func (w *discardWriter) reset() {
	clear(w.h)
	w.code = 0
}

// serveBench serves requests made by next b.N times and fails on a status
// other than want.
func serveBench(b *testing.B, h http.Handler, want int, next func(i int) *http.Request) {
	b.Helper()
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.reset()
		h.ServeHTTP(w, next(i))
		if w.code != want {
			b.Fatalf("status %d; want %d", w.code, want)
		}
	}
}

// generated returns n generated records of the embedded contract.
func generated(b *testing.B, n int) []fixtures.Record {
	records, err := fixtures.Generate(shape(b), n, 1)
	if err != nil {
		b.Fatal(err)
	}
	return records
}

// BenchmarkStoreListAfterWrite is one write followed by one read of the
// list: the cost the 90/10 mix pays on every write. The list is written
// to io.Discard, as a connection would take it.
func BenchmarkStoreListAfterWrite(b *testing.B) {
	ctx := context.Background()
	sh := shape(b)
	for _, n := range []int{64, 10_000, 100_000, 1_000_000} {
		m := store.NewMemory(generated(b, n), store.Options{})
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			change := map[string]any{"quantity": json.Number("7")}
			for i := 0; b.Loop(); i++ {
				_, err := m.Update(ctx, store.DefaultSession, int64(i%n+1), func(r fixtures.Record) (fixtures.Record, error) {
					r, ps := sh.ApplyChecked(r, change, nil)
					if ps != nil {
						return r, problems(ps)
					}
					return r, nil
				})
				if err != nil {
					b.Fatal(err)
				}
				l, _ := m.List(ctx, store.DefaultSession)
				l.WriteTo(io.Discard)
			}
		})
		b.Run(strconv.Itoa(n)+"/gzip", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, err := m.Update(ctx, store.DefaultSession, int64(i%n+1), func(r fixtures.Record) (fixtures.Record, error) {
					r, ps := sh.ApplyChecked(r, map[string]any{"quantity": json.Number(strconv.Itoa(i % 1000))}, nil)
					if ps != nil {
						return r, problems(ps)
					}
					return r, nil
				})
				if err != nil {
					b.Fatal(err)
				}
				l, _ := m.List(ctx, store.DefaultSession)
				l.WriteGzipTo(io.Discard)
			}
		})
		m.Close()
	}
}

// BenchmarkHandler is the whole chain, as a user's server runs it, with
// access logging to io.Discard through httpapi.NewLogger, as inventory-mock logs.
func BenchmarkHandler(b *testing.B) {
	logged := func(c *Config) { c.Logger = httpapi.NewLogger(io.Discard, false) }
	b.Run("list", func(b *testing.B) {
		s := newServer(b, logged)
		r := benchRequest("GET", "/v1/inventory", "")
		serveBench(b, s, http.StatusOK, func(int) *http.Request { return r })
	})
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("list-%d", n), func(b *testing.B) {
			s := newServer(b, logged, func(c *Config) { c.Records = generated(b, n) })
			r := benchRequest("GET", "/v1/inventory", "")
			serveBench(b, s, http.StatusOK, func(int) *http.Request { return r })
		})
	}
	withMetrics := func(c *Config) { c.Metrics = metrics.New() }
	b.Run("list-metrics", func(b *testing.B) {
		s := newServer(b, logged, withMetrics)
		r := benchRequest("GET", "/v1/inventory", "")
		serveBench(b, s, http.StatusOK, func(int) *http.Request { return r })
	})
	for name, mod := range map[string]func(*Config){"update": func(*Config) {}, "update-metrics": withMetrics} {
		b.Run(name, func(b *testing.B) {
			s := newServer(b, logged, mod)
			bodies := make([]*strings.Reader, 1000)
			for i := range bodies {
				bodies[i] = strings.NewReader(`{"quantity":` + strconv.Itoa(i) + `}`)
			}
			r := benchRequest("PATCH", "/v1/inventory/3", `{"quantity":0}`)
			serveBench(b, s, http.StatusOK, func(i int) *http.Request {
				body := bodies[i%len(bodies)]
				body.Seek(0, io.SeekStart)
				r.Body, r.ContentLength = io.NopCloser(body), body.Size()
				return r
			})
		})
	}
	b.Run("unauthorized", func(b *testing.B) {
		s := newServer(b, logged)
		r := benchRequest("GET", "/v1/inventory", "")
		r.Header.Set("Authorization", "Bearer wrong-key")
		serveBench(b, s, http.StatusUnauthorized, func(int) *http.Request { return r })
	})
	b.Run("bad-request", func(b *testing.B) {
		s := newServer(b, logged)
		body := strings.NewReader(`{"quantity":"many"}`)
		r := benchRequest("PATCH", "/v1/inventory/3", `{"quantity":"many"}`)
		serveBench(b, s, http.StatusBadRequest, func(i int) *http.Request {
			body.Seek(0, io.SeekStart)
			r.Body = io.NopCloser(body)
			return r
		})
	})
	b.Run("mix-100000", func(b *testing.B) {
		// 9 lists then 1 update, as in inventory-bench's mix scenario.
		s := newServer(b, logged, func(c *Config) { c.Records = generated(b, 100_000) })
		list := benchRequest("GET", "/v1/inventory", "")
		w := &discardWriter{h: http.Header{}}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			w.reset()
			r := list
			if i%10 == 9 {
				r = benchRequest("PATCH", "/v1/inventory/"+strconv.Itoa(i%100_000+1), `{"quantity":`+strconv.Itoa(i%1000)+`}`)
			}
			s.ServeHTTP(w, r)
			if w.code != http.StatusOK {
				b.Fatalf("status %d", w.code)
			}
		}
	})
}

// BenchmarkServer is the whole handler behind a real httptest.Server, with
// keep-alive clients in parallel: what a user's client sees, client cost
// included. Profiles of it show net/http's share next to the mock's.
func BenchmarkServer(b *testing.B) {
	logged := func(c *Config) { c.Logger = httpapi.NewLogger(io.Discard, false) }
	run := func(b *testing.B, s *Server, method, body string) {
		srv := httptest.NewServer(s)
		defer srv.Close()
		client := srv.Client()
		client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				var r *http.Request
				if body == "" {
					r, _ = http.NewRequest(method, srv.URL+"/v1/inventory", nil)
				} else {
					r, _ = http.NewRequest(method, srv.URL+"/v1/inventory/"+strconv.Itoa(i%64+1), strings.NewReader(body))
					r.Header.Set("Content-Type", "application/json")
				}
				r.Header.Set("Authorization", "Bearer "+testKey)
				resp, err := client.Do(r)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
	b.Run("list", func(b *testing.B) { run(b, newServer(b, logged), "GET", "") })
	b.Run("update", func(b *testing.B) { run(b, newServer(b, logged), "PATCH", `{"quantity":7}`) })
}
