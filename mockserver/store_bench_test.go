package mockserver

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/petstore/inventory-kit/fixtures"
)

// encodeList encodes items as a JSON array, all at once: what the list
// cost on every read after a write before the chunks, and the reference the
// chunked list is checked against.
func encodeList(items []fixtures.Item) []byte {
	b := make([]byte, 0, 2+len(items)*52)
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItem(b, it)
	}
	return append(b, "]\n"...)
}

// BenchmarkStoreListAfterWrite is one write followed by one read of the
// list: the cost the 90/10 mix pays on every write.
func BenchmarkStoreListAfterWrite(b *testing.B) {
	for _, n := range []int{64, 10_000, 100_000} {
		s := NewStore(fixtures.Generate(n, 1))
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				s.SetQuantity(int64(i%n)+1, int64(i))
				s.ListJSON()
			}
		})
	}
}

// TestListAfterWritesIsFullEncoding checks the chunked list against an
// encoding of the whole list, after writes that change the length of the
// records, across chunk borders, and after a reset. The benchmark above
// would be worthless if the cheap list were wrong.
func TestListAfterWritesIsFullEncoding(t *testing.T) {
	for _, n := range []int{0, 1, listChunk - 1, listChunk, listChunk + 1, 3*listChunk + 17} {
		items := fixtures.Generate(n, 7)
		s := NewStore(items)
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		check := func(when string) {
			t.Helper()
			want := encodeList(s.items)
			if got := s.ListJSON(); !bytes.Equal(got, want) {
				t.Fatalf("%d pets, %s: list differs from a full encoding", n, when)
			}
		}
		check("at start")
		old := s.ListJSON()
		oldCopy := bytes.Clone(old)
		for round := range 20 {
			for range rng.IntN(5) + 1 {
				if n == 0 {
					break
				}
				id := int64(rng.IntN(n)) + 1
				q := []int64{0, 7, 12345, MaxQuantity}[rng.IntN(4)]
				s.SetQuantity(id, q)
			}
			check("after round " + strconv.Itoa(round))
		}
		if !bytes.Equal(old, oldCopy) {
			t.Fatalf("%d pets: a list returned before the writes was modified", n)
		}
		s.Reset()
		if got, want := s.ListJSON(), encodeList(items); !bytes.Equal(got, want) {
			t.Fatalf("%d pets: after Reset the list is not the fixtures", n)
		}
	}
}
