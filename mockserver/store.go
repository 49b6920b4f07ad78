package mockserver

import (
	"slices"
	"sync"

	"github.com/petstore/inventory-kit/fixtures"
)

// A Store holds the stock records in memory, sorted by petId. Writes are
// atomic: a reader sees a record before or after an update, never between.
// The encoded list is kept until the next write, so an unchanged list is not
// encoded again on every read.
type Store struct {
	seed []fixtures.Item // what Reset restores; never modified

	mu    sync.RWMutex // guards items, index and list
	items []fixtures.Item
	index map[int64]int // petId to position in items
	list  []byte        // items encoded as a JSON array; nil after a write
}

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
	s.mu.Lock()
	s.items, s.index, s.list = items, index, nil
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
	s.mu.RUnlock()
	if list != nil {
		return list
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.list == nil {
		s.list = encodeList(s.items)
	}
	return s.list
}

// encodeList encodes items as a JSON array.
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
		s.list = nil
	}
	return s.items[i], true
}
