// Package store keeps the mock's stock records: one Store interface, and
// engines behind it. Every engine keeps records per session: a session is
// a namespace whose records start as the fixtures, change only by its own
// writes, and go back to the fixtures on Reset. Requests without a session
// use DefaultSession.
//
// The engine in this file's package is Memory, the default and the
// fastest; the others keep state across restarts or share it between
// replicas.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"iter"
	"log/slog"
	"time"

	"github.com/petstore/inventory-kit/fixtures"
)

// DefaultSession is the session of requests that name none.
const DefaultSession = "default"

// Errors a Store returns.
var (
	// ErrNotFound: the session has no record with that key.
	ErrNotFound = errors.New("store: no such record")
	// ErrUnavailable wraps the error of an engine that cannot serve now,
	// such as a Redis server that is down. The mock answers 503.
	ErrUnavailable = errors.New("store: unavailable")
)

// A Store keeps the records of every session. Its methods are safe for
// concurrent use.
type Store interface {
	// List returns the session's records in ascending key order.
	List(ctx context.Context, session string) (List, error)
	// Get returns the session's record with key id, or ErrNotFound.
	Get(ctx context.Context, session string, id int64) (fixtures.Record, error)
	// Update replaces the session's record with key id by what change
	// makes of it, atomically: no other write to the session comes between
	// the record change is given and the write of its result. If change
	// returns an error, nothing is written and Update returns that error.
	// change must not keep or modify the record it is given; it may be
	// called more than once. ErrNotFound if there is no such record.
	Update(ctx context.Context, session string, id int64, change func(fixtures.Record) (fixtures.Record, error)) (fixtures.Record, error)
	// Reset puts the session's records back to the fixtures.
	Reset(ctx context.Context, session string) error
	// Sessions describes the sessions that have state, the default first.
	Sessions(ctx context.Context) ([]SessionInfo, error)
	// Drop forgets a session; its next use starts from the fixtures. The
	// default session cannot be dropped, only reset.
	Drop(ctx context.Context, session string) error
	// Health reports whether the engine can serve; nil if it can.
	Health(ctx context.Context) error
	// Close releases the engine's resources.
	Close() error
}

// SessionInfo describes one session.
type SessionInfo struct {
	Name     string    `json:"name"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"lastUsed"`
	Writes   int64     `json:"writes"` // writes since it was created or reset
}

// Options bound the sessions an engine keeps.
type Options struct {
	// MaxSessions is the most sessions kept besides the default; past it,
	// the least recently used is dropped. 0: DefaultMaxSessions.
	MaxSessions int
	// IdleTimeout drops a session unused for this long. 0: DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Origin names what the records were made from, such as a hash of the
	// contract. Engines that keep state outside the process (File, Redis)
	// record it with a hash of the records, and refuse state made from
	// other ones.
	Origin string
	// Logger receives what an engine has to say: what it found at start,
	// and a server that goes away and comes back. nil: nothing is logged.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultMaxSessions = 1000
	DefaultIdleTimeout = time.Hour
)

func (o Options) withDefaults() Options {
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// fingerprint identifies a data set: its origin and its records, in key
// order. Engines that keep state outside the process record it, and
// refuse state with another one.
func fingerprint(origin string, ids []int64, seed *snapshot) string {
	h := sha256.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(len(origin)))
	h.Write(b[:])
	h.Write([]byte(origin))
	n := 0
	for _, c := range seed.chunks {
		for i := range c.len() {
			r := c.record(i)
			binary.BigEndian.PutUint64(b[:], uint64(ids[n]))
			h.Write(b[:])
			binary.BigEndian.PutUint64(b[:], uint64(len(r)))
			h.Write(b[:])
			h.Write(r)
			n++
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// A List is the records of a session at one moment, encoded as a JSON
// array. It is held as chunks of encoded records, which are written one
// after the other and never joined into one buffer: a list of a million
// records costs no copy to serve. A List is never modified.
type List struct {
	chunks []*chunk
	size   int // bytes of the whole array
	n      int // records
}

// Len returns the number of records.
func (l List) Len() int { return l.n }

// Size returns the length in bytes of the JSON array WriteTo writes.
func (l List) Size() int { return l.size }

// WriteTo writes the list as a JSON array followed by a newline.
func (l List) WriteTo(w io.Writer) (int64, error) {
	var total int64
	write := func(b []byte) error {
		n, err := w.Write(b)
		total += int64(n)
		return err
	}
	sep := []byte{'['}
	for _, c := range l.chunks {
		if len(c.data) == 0 {
			continue
		}
		if err := write(sep); err != nil {
			return total, err
		}
		if err := write(c.data); err != nil {
			return total, err
		}
		sep = comma
	}
	if len(l.chunks) == 0 || l.n == 0 {
		if err := write(sep); err != nil {
			return total, err
		}
	}
	err := write(closing)
	return total, err
}

var (
	comma   = []byte{','}
	closing = []byte("]\n")
)

// Bytes returns the list as one JSON array, for callers that need it
// whole; serving uses WriteTo.
func (l List) Bytes() []byte {
	b := make([]byte, 0, l.size)
	w := appendWriter{&b}
	l.WriteTo(w)
	return b
}

type appendWriter struct{ b *[]byte }

func (w appendWriter) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}

// All yields the encoded records in order.
func (l List) All() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for _, c := range l.chunks {
			for i := range c.len() {
				if !yield(c.record(i)) {
					return
				}
			}
		}
	}
}

// NewList makes a List of encoded records, given in ascending key order.
// Engines that do not keep chunks build their lists with it.
func NewList(records [][]byte) List {
	l := List{n: len(records)}
	for start := 0; start < len(records); start += ChunkSize {
		c := newChunk(records[start:min(start+ChunkSize, len(records))])
		l.chunks = append(l.chunks, c)
	}
	l.size = listSize(l.chunks)
	return l
}

// ChunkSize is the number of records in one chunk of a List: a write to
// one record of a million copies one chunk (about 25 KB) and the list of
// chunk pointers (about 16 KB), never the whole list.
const ChunkSize = 512

// A chunk is up to ChunkSize encoded records, separated by commas.
type chunk struct {
	data []byte  // record 0, ",", record 1, ...
	offs []int32 // offs[i]: where record i starts; offs[len]: len(data)+1
}

func newChunk(records [][]byte) *chunk {
	size := len(records)
	for _, r := range records {
		size += len(r)
	}
	c := &chunk{data: make([]byte, 0, size), offs: make([]int32, 0, len(records)+1)}
	for i, r := range records {
		if i > 0 {
			c.data = append(c.data, ',')
		}
		c.offs = append(c.offs, int32(len(c.data)))
		c.data = append(c.data, r...)
	}
	c.offs = append(c.offs, int32(len(c.data)+1))
	return c
}

func (c *chunk) len() int { return len(c.offs) - 1 }

// record returns record i; the caller must not modify it.
func (c *chunk) record(i int) []byte {
	return c.data[c.offs[i] : c.offs[i+1]-1 : c.offs[i+1]-1]
}

// with returns a new chunk with record i replaced by r.
func (c *chunk) with(i int, r []byte) *chunk {
	start, end := int(c.offs[i]), int(c.offs[i+1]-1)
	delta := len(r) - (end - start)
	n := &chunk{data: make([]byte, 0, len(c.data)+delta), offs: make([]int32, len(c.offs))}
	n.data = append(n.data, c.data[:start]...)
	n.data = append(n.data, r...)
	n.data = append(n.data, c.data[end:]...)
	copy(n.offs, c.offs[:i+1])
	for j := i + 1; j < len(c.offs); j++ {
		n.offs[j] = c.offs[j] + int32(delta)
	}
	return n
}

// listSize is the length of the JSON array of chunks, with its newline.
func listSize(chunks []*chunk) int {
	size, nonEmpty := 0, 0
	for _, c := range chunks {
		if len(c.data) > 0 {
			size += len(c.data)
			nonEmpty++
		}
	}
	if nonEmpty == 0 {
		return 3 // "[]\n"
	}
	return size + nonEmpty - 1 + 3
}
