// Package store keeps the mock's stock records: one Store interface, and
// engines behind it (Memory, File, Redis). Every engine keeps records per
// session: a namespace whose records start as the fixtures, change only by
// its own writes, and go back to the fixtures on Reset. Requests without a
// session use DefaultSession.
package store

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/spec"
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
	// Shape is what a record is. Engines that keep state outside the
	// process check every record they read back against it (File at start,
	// Redis at start and when another process changed a session), and
	// refuse one that is not a record of its key. nil: a record must be a
	// JSON object, nothing more.
	Shape *fixtures.Shape
}

// sessionOrder orders the names of sessions as Sessions lists them: the
// default first, then by name.
func sessionOrder(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == DefaultSession:
		return -1
	case b == DefaultSession:
		return 1
	}
	return cmp.Compare(a, b)
}

// Defaults of Options.
const (
	DefaultMaxSessions = 1000
	DefaultIdleTimeout = time.Hour
)

func (o Options) withDefaults() Options {
	o.MaxSessions = cmp.Or(max(o.MaxSessions, 0), DefaultMaxSessions)
	o.IdleTimeout = cmp.Or(max(o.IdleTimeout, 0), DefaultIdleTimeout)
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	return o
}

// sweepEvery is how often an engine looks for idle sessions.
func (o Options) sweepEvery() time.Duration {
	return max(min(o.IdleTimeout/2, time.Minute), 10*time.Millisecond)
}

// every calls fn every d until stop is closed.
func every(d time.Duration, stop <-chan struct{}, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			fn()
		}
	}
}

// A dataset is what an engine serves its sessions from: the fixtures,
// which a session holds until it writes, and the engine's Options.
type dataset struct {
	ids  []int64   // every key in ascending order, the same in every snapshot
	seed *snapshot // the fixtures; never modified
	opts Options
}

// newDataset sorts records by key; keys must be unique.
func newDataset(records []fixtures.Record, opts Options) dataset {
	sorted := slices.SortedFunc(slices.Values(records), func(a, b fixtures.Record) int { return cmp.Compare(a.ID, b.ID) })
	ids, encoded := make([]int64, len(sorted)), make([][]byte, len(sorted))
	for i, r := range sorted {
		ids[i], encoded[i] = r.ID, r.JSON
	}
	return dataset{ids: ids, seed: NewList(encoded).snapshot, opts: opts.withDefaults()}
}

// find returns the position of key id in every snapshot.
func (d *dataset) find(id int64) (int, bool) { return slices.BinarySearch(d.ids, id) }

// restore returns the fixtures with a session's records read back from
// outside the process, changes, in place of theirs. Each is checked
// (checkStored) against prev, what this process last read of the session
// (nil: none).
func (d *dataset) restore(session string, changes map[int64][]byte, prev *snapshot) (*snapshot, error) {
	byPos := make(map[int][]byte, len(changes))
	for id, rec := range changes {
		pos, ok := d.find(id)
		if !ok {
			return nil, fmt.Errorf("session %q holds a record of key %d, which the fixtures do not have", session, id)
		}
		if err := d.checkStored(session, id, pos, rec, prev); err != nil {
			return nil, err
		}
		byPos[pos] = rec
	}
	return d.seed.withAll(byPos), nil
}

// checkStored checks a record of the session read back from outside the
// process, unless it is the fixture's or the one at pos in prev, which
// were checked.
func (d *dataset) checkStored(session string, id int64, pos int, rec []byte, prev *snapshot) error {
	if bytes.Equal(rec, d.seed.record(pos)) || (prev != nil && bytes.Equal(rec, prev.record(pos))) {
		return nil
	}
	if err := d.opts.checkRecord(id, rec); err != nil {
		return fmt.Errorf("session %q: %v", session, err)
	}
	return nil
}

// checkRecord checks a record read back from outside the process: a JSON
// object, and with Shape, a record of the record schema whose key is id.
func (o Options) checkRecord(id int64, b []byte) error {
	if o.Shape == nil {
		if !json.Valid(b) || len(b) == 0 || b[0] != '{' {
			return fmt.Errorf("the record of key %d is not a JSON object", id)
		}
		return nil
	}
	v, err := spec.DecodeJSON(b)
	if err != nil {
		return fmt.Errorf("the record of %s %d is not JSON: %v", o.Shape.Key, id, err)
	}
	rec, ps := o.Shape.Make(v)
	switch {
	case len(ps) > 0:
		return fmt.Errorf("the record of %s %d is not a %s: %s", o.Shape.Key, id, o.Shape.Schema.Name, spec.Join(ps))
	case rec.ID != id:
		return fmt.Errorf("the record kept under %s %d has %s %d", o.Shape.Key, id, o.Shape.Key, rec.ID)
	}
	return nil
}

// fingerprint identifies the data set: Options.Origin and the records, in
// key order. Engines that keep state outside the process record it, and
// refuse state with another one.
func (d *dataset) fingerprint() string {
	h := sha256.New()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(len(d.opts.Origin)))
	h.Write(b[:8])
	h.Write([]byte(d.opts.Origin))
	for pos, id := range d.ids {
		r := d.seed.record(pos)
		binary.BigEndian.PutUint64(b[:8], uint64(id))
		binary.BigEndian.PutUint64(b[8:], uint64(len(r)))
		h.Write(b[:])
		h.Write(r)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// A queue gathers work for one goroutine that takes it in batches: what
// is pushed while a batch is under way goes in the next, which is how
// concurrent writes share File's commits and Redis's pipelines.
type queue[T any] struct {
	mu     sync.Mutex // guards items and closed, and sending on or closing wake
	items  []T
	closed bool
	wake   chan struct{} // capacity 1: items is not empty; closed by close
}

func newQueue[T any]() *queue[T] { return &queue[T]{wake: make(chan struct{}, 1)} }

// push adds v to the next batch, and reports false once the queue is
// closed. It never blocks.
func (q *queue[T]) push(v T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.items = append(q.items, v)
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// take removes up to n items, the oldest first.
func (q *queue[T]) take(n int) []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(len(q.items), n)
	batch := q.items[:n:n]
	if q.items = q.items[n:]; len(q.items) == 0 {
		q.items = nil
	}
	return batch
}

func (q *queue[T]) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// close refuses every later push and closes wake: a loop over wake that
// takes what is queued at each wake-up takes every item pushed before.
func (q *queue[T]) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.wake)
	}
}
