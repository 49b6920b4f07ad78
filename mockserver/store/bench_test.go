package store

import (
	"context"
	"sync/atomic"
	"testing"
)

// BenchmarkEngines measures each engine's list and update of 64 pets
// from 32 goroutines, in process: what the engine costs, without HTTP.
func BenchmarkEngines(b *testing.B) {
	ctx := context.Background()
	for _, e := range engines {
		b.Run(e.name+"/list", func(b *testing.B) {
			s := openBench(b, e)
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.List(ctx, DefaultSession); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run(e.name+"/update", func(b *testing.B) {
			s := openBench(b, e)
			var n atomic.Int64
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					if _, err := s.Update(ctx, DefaultSession, i%64+1, setQuantity(i)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// openBench opens a store of e with 64 pets.
func openBench(b *testing.B, e engine) Store {
	s, err := e.place(b)(pets(64), Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}
