package store

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/inventory-kit/fixtures"
)

// Memory keeps records in this process's memory: the default engine and
// the fastest. Reads take no lock: each session's records are an
// immutable snapshot, swapped whole by a write. A new session shares the
// fixtures' snapshot and copies only the chunks it writes to (copy on
// write), so a thousand sessions over ten thousand pets do not copy ten
// million records.
type Memory struct {
	dataset
	now func() time.Time

	mu       sync.RWMutex // guards sessions
	sessions map[string]*session
	// dropped, if set, is called with m.mu held after a session other than
	// the default is dropped (evicted, idle, or by Drop). It must not block
	// or call m's methods. An engine that persists sessions sets it.
	dropped func(name string)

	stop chan struct{} // closed by Close, ending the sweeper
	once sync.Once
}

// A session is one namespace of records.
type session struct {
	name    string
	created time.Time
	used    atomic.Int64 // last use, UnixNano
	writes  atomic.Int64

	mu   sync.Mutex // serialises writes: guards the swap of snap, and head
	snap atomic.Pointer[snapshot]
	// head is the snapshot with writes that are made but not yet durable,
	// for an engine that publishes snap only once they are (File); nil
	// when there are none.
	head *snapshot
}

// NewMemory returns a Memory engine whose sessions start with records.
// Keys must be unique.
func NewMemory(records []fixtures.Record, opts Options) *Memory {
	return newMemory(newDataset(records, opts), nil)
}

// newMemory returns a Memory engine of d that calls dropped (may be nil)
// as Memory.dropped says.
func newMemory(d dataset, dropped func(name string)) *Memory {
	m := &Memory{dataset: d, now: time.Now, sessions: map[string]*session{}, dropped: dropped, stop: make(chan struct{})}
	m.session(DefaultSession)
	go every(m.opts.sweepEvery(), m.stop, m.dropIdle)
	return m
}

// session returns the named session, making it on first use from the
// fixtures, and marks it used. Making one past MaxSessions drops the
// least recently used other than the default.
func (m *Memory) session(name string) *session {
	now := m.now()
	m.mu.RLock()
	s := m.sessions[name]
	m.mu.RUnlock()
	if s != nil {
		s.used.Store(now.UnixNano())
		return s
	}
	m.mu.Lock()
	s = m.sessions[name]
	if s == nil {
		if len(m.sessions) > m.opts.MaxSessions {
			m.evictLocked()
		}
		s = &session{name: name, created: now}
		s.snap.Store(m.seed)
		m.sessions[name] = s
	}
	m.mu.Unlock()
	s.used.Store(now.UnixNano())
	return s
}

// evictLocked drops the least recently used session other than the
// default. m.mu must be held.
func (m *Memory) evictLocked() {
	var oldest *session
	for _, s := range m.sessions {
		if s.name != DefaultSession && (oldest == nil || s.used.Load() < oldest.used.Load()) {
			oldest = s
		}
	}
	if oldest != nil {
		m.deleteLocked(oldest.name)
	}
}

// deleteLocked forgets a session other than the default. m.mu must be
// held.
func (m *Memory) deleteLocked(name string) {
	if _, ok := m.sessions[name]; !ok {
		return
	}
	delete(m.sessions, name)
	if m.dropped != nil {
		m.dropped(name)
	}
}

// dropIdle drops the sessions unused for longer than IdleTimeout.
func (m *Memory) dropIdle() {
	cutoff := m.now().Add(-m.opts.IdleTimeout).UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, s := range m.sessions {
		if name != DefaultSession && s.used.Load() < cutoff {
			m.deleteLocked(name)
		}
	}
}

// List returns the session's records.
func (m *Memory) List(_ context.Context, session string) (List, error) {
	return List{m.session(session).snap.Load()}, nil
}

// Get returns the session's record of id.
func (m *Memory) Get(_ context.Context, session string, id int64) (fixtures.Record, error) {
	pos, ok := m.find(id)
	if !ok {
		return fixtures.Record{}, ErrNotFound
	}
	return fixtures.Record{ID: id, JSON: m.session(session).snap.Load().record(pos)}, nil
}

// Update changes the session's record of id under the session's write
// lock, and publishes a new snapshot that shares every chunk but one.
func (m *Memory) Update(_ context.Context, session string, id int64, change func(fixtures.Record) (fixtures.Record, error)) (fixtures.Record, error) {
	pos, ok := m.find(id)
	if !ok {
		return fixtures.Record{}, ErrNotFound
	}
	s := m.session(session)
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snap.Load()
	old := snap.record(pos)
	rec, err := change(fixtures.Record{ID: id, JSON: old})
	if err != nil {
		return fixtures.Record{}, err
	}
	s.writes.Add(1)
	if bytes.Equal(rec.JSON, old) {
		return rec, nil
	}
	s.snap.Store(snap.with(pos, rec.JSON))
	return rec, nil
}

// Reset puts the session back to the fixtures.
func (m *Memory) Reset(_ context.Context, session string) error {
	s := m.session(session)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap.Store(m.seed)
	s.writes.Store(0)
	return nil
}

// Sessions describes every session, the default first, then by name.
func (m *Memory) Sessions(context.Context) ([]SessionInfo, error) {
	m.mu.Lock()
	out := make([]SessionInfo, 0, len(m.sessions))
	for _, s := range m.sessions {
		out = append(out, SessionInfo{Name: s.name, Created: s.created, LastUsed: time.Unix(0, s.used.Load()), Writes: s.writes.Load()})
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b SessionInfo) int { return sessionOrder(a.Name, b.Name) })
	return out, nil
}

// Drop forgets a session; the default one is reset instead.
func (m *Memory) Drop(ctx context.Context, session string) error {
	if session == DefaultSession {
		return m.Reset(ctx, session)
	}
	m.mu.Lock()
	m.deleteLocked(session)
	m.mu.Unlock()
	return nil
}

// Health is always nil: memory is always there.
func (m *Memory) Health(context.Context) error { return nil }

// Close stops the idle sweeper.
func (m *Memory) Close() error {
	m.once.Do(func() { close(m.stop) })
	return nil
}
