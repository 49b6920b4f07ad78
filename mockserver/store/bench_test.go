package store

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/mockserver/store/redistest"
)

// benchClients is the number of goroutines of each benchmark: the 32
// clients of the update target.
const benchClients = 32

// BenchmarkEngines measures the list and update of 64 pets on file and
// redis from 32 goroutines, in process, without HTTP: what the engine
// itself costs. Each measurement runs the same operations on memory just
// before, untimed, and reports the engine's rate as a fraction of
// memory's (x-memory). Redis runs as the bench runs it, its append-only
// file synced on every write, with the store's production settings.
//
//	go test -run '^$' -bench BenchmarkEngines -count 5 ./mockserver/store
func BenchmarkEngines(b *testing.B) {
	ctx := context.Background()
	ops := map[string]func(s Store) func(i int64) error{
		"list": func(s Store) func(int64) error {
			return func(int64) error { _, err := s.List(ctx, DefaultSession); return err }
		},
		"update": func(s Store) func(int64) error {
			return func(i int64) error { _, err := s.Update(ctx, DefaultSession, i%64+1, setQuantity(i)); return err }
		},
	}
	for _, e := range benchEngines[1:] {
		for _, op := range []string{"list", "update"} {
			b.Run(e.name+"/"+op, func(b *testing.B) {
				memory, s := benchEngines[0].open(b), e.open(b)
				b.StopTimer()
				start := time.Now()
				parallel(b, ops[op](memory))
				took := time.Since(start)
				b.StartTimer()
				parallel(b, ops[op](s))
				b.ReportMetric(float64(took)/float64(b.Elapsed()), "x-memory")
			})
		}
	}
}

// benchEngines are the engines as the mock runs them, on 64 pets.
var benchEngines = []struct {
	name string
	open func(b *testing.B) Store
}{
	{"memory", func(b *testing.B) Store { return openBench(b, engines[0]) }},
	{"file", func(b *testing.B) Store { return openBench(b, engines[1]) }},
	{"redis", func(b *testing.B) Store {
		srv := redistest.Start(b, redistest.Durable...)
		ctx := context.Background()
		r, err := OpenRedis(ctx, srv.URL(0), pets(64), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		return r
	}},
}

// parallel runs op from benchClients goroutines, b.N times in all, with
// a number drawn from one counter.
func parallel(b *testing.B, op func(i int64) error) {
	var n atomic.Int64
	b.SetParallelism(max(1, benchClients/runtime.GOMAXPROCS(0)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(n.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// openBench opens a store of e with 64 pets.
func openBench(b *testing.B, e engine) Store {
	s, err := e.place(b)(pets(64), Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}
