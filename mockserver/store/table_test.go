package store

import (
	"strconv"
	"testing"
)

// TestTable pins that a table keeps its chunks in order across pages, and
// that with replaces one chunk in a new table, the old one unchanged.
func TestTable(t *testing.T) {
	for _, n := range []int{0, 1, pageSize - 1, pageSize, pageSize + 1, 3*pageSize + 7} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			cs := make([]*chunk, n)
			for i := range cs {
				cs[i] = newChunk([][]byte{[]byte(strconv.Itoa(i))})
			}
			tb := newTable(cs)
			if tb.len() != n {
				t.Fatalf("len = %d; want %d", tb.len(), n)
			}
			i := 0
			for c := range tb.all() {
				if c != cs[i] || tb.at(i) != cs[i] {
					t.Fatalf("chunk %d out of place", i)
				}
				i++
			}
			if i != n {
				t.Fatalf("all yielded %d chunks; want %d", i, n)
			}
			for _, at := range []int{0, pageSize - 1, pageSize, n - 1} {
				if at < 0 || at >= n {
					continue
				}
				repl := newChunk([][]byte{[]byte("new")})
				next := tb.with(at, repl)
				if next.at(at) != repl || tb.at(at) != cs[at] {
					t.Errorf("with(%d): new table has %p, old has %p; want the replacement in the new one only", at, next.at(at), tb.at(at))
				}
				for j := range n {
					if j != at && next.at(j) != cs[j] {
						t.Errorf("with(%d) moved chunk %d", at, j)
					}
				}
			}
		})
	}
}
