package spec

import (
	"hash/maphash"
	"io"
	"strconv"
	"sync"
)

// A hashCache keeps values by a 64-bit hash of what they depend on, and
// forgets them all once it holds max. It is safe for concurrent use.
type hashCache[V any] struct {
	seed maphash.Seed
	max  int
	mu   sync.Mutex // guards m
	m    map[uint64]V
}

func newHashCache[V any](max int) *hashCache[V] {
	return &hashCache[V]{seed: maphash.MakeSeed(), max: max, m: map[uint64]V{}}
}

func (c *hashCache[V]) get(h uint64) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[h]
	return v, ok
}

func (c *hashCache[V]) put(h uint64, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[h] = v
}

// maxValidItems bounds the items a plain array schema remembers as valid:
// a list checked again (a long list polled between writes, which changes
// one record at a time) decodes only the items it has not seen.
const maxValidItems = 1 << 20

// plainItems returns the compiled schema of the items where s is a plain
// array schema: its rules are a type of array and items, nothing else
// (no minItems, uniqueItems, contains, ...). Then an array is valid
// exactly when each item is valid against the items' schema, and a long
// list can be checked one item at a time. nil otherwise.
func (s *Schema) plainItems() *Schema {
	if s == nil || s.Model == nil || s.compiler == nil {
		return nil
	}
	s.itemsOnce.Do(func() {
		v, err := DecodeJSON([]byte(s.rules))
		m, ok := v.(map[string]any)
		if err != nil || !ok || len(m) != 2 || m["items"] == nil || s.Model.Items == nil || !s.Model.Items.IsA() {
			return
		}
		if t, _ := m["type"].([]any); m["type"] != "array" && (len(t) != 1 || t[0] != "array") {
			return // a type of array, alone or as the one of a list
		}
		items, err := s.compiler.compile(s.Model.Items.A, s.purpose)
		if err == nil {
			s.items, s.valid = items, newHashCache[struct{}](maxValidItems)
		}
	})
	return s.items
}

// validateArrayJSON validates body, a JSON array, against s, a plain
// array schema, one item at a time, so a long list is never held decoded
// whole; its problems are those Validate finds on the whole array
// ("[3].status"). It returns false, having decided nothing, where s is no
// plain array schema or body is no well-formed JSON array: the caller then
// decodes the whole body, whose error says what is wrong.
func (s *Schema) validateArrayJSON(body []byte) ([]Problem, bool) {
	items := s.plainItems()
	if items == nil {
		return nil, false
	}
	d := borrowDecoder(body)
	defer d.release()
	if tok, err := d.dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, false
	}
	var ps []Problem
	for i := 0; d.dec.PeekKind() != ']'; i++ {
		raw, err := d.dec.ReadValue()
		if err != nil {
			return nil, false
		}
		h := maphash.Bytes(s.valid.seed, raw)
		if _, ok := s.valid.get(h); ok {
			continue
		}
		v, err := DecodeJSON(raw)
		if err != nil {
			return nil, false
		}
		found := items.Validate(v)
		for _, p := range found {
			p.Field = Under("["+strconv.Itoa(i)+"]", p.Field) // as the validator names it on the whole array
			ps = append(ps, p)
		}
		if len(found) == 0 {
			s.valid.put(h, struct{}{})
		}
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return nil, false
	}
	if _, err := d.dec.ReadToken(); err != io.EOF {
		return nil, false // data after the array: DecodeJSON words it
	}
	return ps, true
}
