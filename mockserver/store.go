package mockserver

import (
	"slices"
	"sync"

	"github.com/petstore/inventory-kit/fixtures"
)

// A Store holds the stock records in memory, sorted by petId. Writes are
// atomic: a reader sees a record before or after an update, never between.
//
// The encoded list is kept between reads, so an unchanged list is not
// encoded again on every read. A write only marks the chunk of
// listChunk records it changed; the next read builds a new list from the
// old one, copying the unchanged chunks and encoding the changed ones, so
// a write to one pet of 100,000 costs a copy of the list, not its encoding.
// A list once returned is never modified.
type Store struct {
	seed []fixtures.Item // what Reset restores; never modified

	mu     sync.RWMutex // guards items, index, list, starts, stale and nstale
	items  []fixtures.Item
	index  map[int64]int // petId to position in items
	list   []byte        // items encoded as a JSON array; nil: encode it all
	starts []int         // starts[c]: offset in list of chunk c; the last: where "]" is
	stale  []bool        // stale[c]: chunk c has changed since list was made
	nstale int           // the number of stale chunks
}

// listChunk is the number of records in one chunk of the encoded list:
// about 45 KB, encoded in about 50 µs.
const listChunk = 1024

// NewStore returns a store holding a copy of items.
func NewStore(items []fixtures.Item) *Store {
	seed := slices.Clone(items)
	slices.SortFunc(seed, func(a, b fixtures.Item) int {
		switch {
		case a.PetID < b.PetID:
			return -1
		case a.PetID > b.PetID:
			return 1
		}
		return 0
	})
	s := &Store{seed: seed}
	s.Reset()
	return s
}

// Reset restores the records the store was made with.
func (s *Store) Reset() {
	items := slices.Clone(s.seed)
	index := make(map[int64]int, len(items))
	for i, it := range items {
		index[it.PetID] = i
	}
	chunks := (len(items) + listChunk - 1) / listChunk
	s.mu.Lock()
	s.items, s.index, s.list = items, index, nil
	s.starts, s.stale, s.nstale = make([]int, chunks+1), make([]bool, chunks), 0
	s.mu.Unlock()
}

// Len returns the number of records.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}

// ListJSON returns every record as a JSON array, in ascending petId order.
// The caller must not modify the returned bytes.
func (s *Store) ListJSON() []byte {
	s.mu.RLock()
	list := s.list
	fresh := list != nil && s.nstale == 0
	s.mu.RUnlock()
	if fresh {
		return list
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.list == nil || s.nstale > 0 {
		s.list = s.encode()
	}
	return s.list
}

// encode returns a new encoded list and records where its chunks start.
// A chunk that has not changed is copied from the old list. s.mu must be
// held for writing.
func (s *Store) encode() []byte {
	size := 2 + len(s.items)*52
	if s.list != nil {
		size = len(s.list) + 4*min(s.nstale*listChunk, len(s.items)) // room for longer quantities
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for c := range s.stale {
		start := len(b)
		if s.list != nil && !s.stale[c] {
			b = append(b, s.list[s.starts[c]:s.starts[c+1]]...)
		} else {
			for i := c * listChunk; i < min((c+1)*listChunk, len(s.items)); i++ {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendItem(b, s.items[i])
			}
		}
		s.starts[c] = start
		s.stale[c] = false
	}
	s.starts[len(s.stale)] = len(b)
	s.nstale = 0
	return append(b, "]\n"...)
}

// Get returns the record of petId.
func (s *Store) Get(petID int64) (fixtures.Item, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i, ok := s.index[petID]
	if !ok {
		return fixtures.Item{}, false
	}
	return s.items[i], true
}

// SetQuantity sets the quantity of petId and returns the updated record. The
// status is left as it is. It reports false if there is no such pet.
func (s *Store) SetQuantity(petID, quantity int64) (fixtures.Item, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.index[petID]
	if !ok {
		return fixtures.Item{}, false
	}
	if s.items[i].Quantity != quantity {
		s.items[i].Quantity = quantity
		if c := i / listChunk; !s.stale[c] {
			s.stale[c] = true
			s.nstale++
		}
	}
	return s.items[i], true
}
