package traffic

import (
	"hash/maphash"
	"net/http"
	"strconv"
	"sync"

	"github.com/petstore/inventory-kit/spec"
)

// A verdictCache keeps the answer-only violations of answers already
// checked, by a hash of everything they depend on, so an answer seen again
// (a list polled between writes) is not validated again. It holds at most
// max verdicts and forgets them all when full.
type verdictCache struct {
	seed maphash.Seed
	max  int

	mu       sync.Mutex // guards verdicts
	verdicts map[uint64][]Violation
}

func newVerdictCache(max int) *verdictCache {
	return &verdictCache{seed: maphash.MakeSeed(), max: max, verdicts: map[uint64][]Violation{}}
}

// A verdictKey is what, besides headers and body, an answer's verdict
// depends on.
type verdictKey struct {
	op       *spec.Operation
	status   int
	readable bool // the body was kept whole and may be read
	head     bool
}

// hash hashes key, the Content-Type, the documented headers of resp and
// the body. Two answers with the same hash get the same verdict; with 64
// bits and a few thousand entries a collision is vanishingly unlikely.
func (c *verdictCache) hash(key verdictKey, h http.Header, resp *spec.Response, body []byte) uint64 {
	var m maphash.Hash
	m.SetSeed(c.seed)
	m.WriteString(key.op.Method)
	m.WriteString(key.op.Path)
	var flags [8]byte
	b := strconv.AppendInt(flags[:0], int64(key.status), 10)
	if key.readable {
		b = append(b, 'r')
	}
	if key.head {
		b = append(b, 'h')
	}
	m.Write(b)
	m.WriteByte(0)
	for _, v := range h["Content-Type"] {
		m.WriteString(v)
		m.WriteByte(0)
	}
	if resp != nil {
		for _, p := range resp.Headers {
			m.WriteString(p.Name)
			for _, v := range h.Values(p.Name) {
				m.WriteByte(1)
				m.WriteString(v)
			}
			m.WriteByte(0)
		}
	}
	m.Write(body)
	return m.Sum64()
}

func (c *verdictCache) get(hash uint64) ([]Violation, bool) {
	c.mu.Lock()
	vs, ok := c.verdicts[hash]
	c.mu.Unlock()
	return vs, ok
}

func (c *verdictCache) put(hash uint64, vs []Violation) {
	c.mu.Lock()
	if len(c.verdicts) >= c.max {
		clear(c.verdicts)
	}
	c.verdicts[hash] = vs
	c.mu.Unlock()
}
