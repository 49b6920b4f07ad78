package store

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/petstore/inventory-kit/fixtures"
)

// writeCounter counts the writes it is given.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestListWrites checks how many writes a list takes, which is what the
// kernel is asked to send at once: one for a small list and for one up to
// maxFlat, pieces of writeBufferSize past it; and that every way gives the
// same array, written after a write to the store shows it.
func TestListWrites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pets   int
		writes int // 0: more than one
	}{
		{"64 pets, one buffer", 64, 1},
		{"10,000 pets, one piece", 10_000, 1},
		{"past maxFlat, in pieces", 300_000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemory(pets(tc.pets), Options{})
			defer m.Close()
			ctx := context.Background()
			for round := range 2 {
				l, err := m.List(ctx, DefaultSession)
				if err != nil {
					t.Fatal(err)
				}
				var w writeCounter
				if _, err := l.WriteTo(&w); err != nil {
					t.Fatal(err)
				}
				if tc.writes != 0 && w.writes != tc.writes || tc.writes == 0 && w.writes < 2 {
					t.Errorf("round %d: %d bytes in %d writes; want %d (0: more than one)", round, w.Len(), w.writes, tc.writes)
				}
				if w.Len() != l.Size() || !bytes.Equal(w.Bytes(), l.Bytes()) || !bytes.Equal(w.Bytes(), l.join()) {
					t.Errorf("round %d: WriteTo, Bytes and join differ (%d bytes; Size %d)", round, w.Len(), l.Size())
				}
				want := fmt.Sprintf(`{"petId":3,"quantity":%d}`, 30+round)
				if !bytes.Contains(w.Bytes(), []byte(want)) {
					t.Errorf("round %d: the list lacks %s", round, want)
				}
				if _, err := m.Update(ctx, DefaultSession, 3, func(fixtures.Record) (fixtures.Record, error) { return pet(3, 31), nil }); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
