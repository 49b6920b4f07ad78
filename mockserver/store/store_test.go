package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/store/redistest"
)

// An engine is one engine under the tests every engine must pass.
type engine struct {
	name string
	// place makes a new place to keep state (nothing, a file, a Redis
	// database) and returns a function that opens a store on it. Every
	// store opened is closed when the test ends. Engines that need a
	// server skip the test where it is missing.
	place func(t testing.TB) opener
	// keeps: a store opened on a place after another was closed serves the
	// other's state.
	keeps bool
	// shares: two stores open on one place at once are one store.
	shares bool
}

// An opener opens a store on one place.
type opener func(records []fixtures.Record, opts Options) (Store, error)

// engines lists the engines under test.
var engines = []engine{
	{name: "memory", place: func(t testing.TB) opener {
		return func(records []fixtures.Record, opts Options) (Store, error) {
			m := NewMemory(records, opts)
			t.Cleanup(func() { m.Close() })
			return m, nil
		}
	}},
	{name: "file", keeps: true, place: func(t testing.TB) opener {
		path := filepath.Join(t.TempDir(), "store.db")
		return func(records []fixtures.Record, opts Options) (Store, error) {
			f, err := OpenFile(path, records, opts)
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { f.Close() })
			return f, nil
		}
	}},
	{name: "redis", keeps: true, shares: true, place: func(t testing.TB) opener {
		// Long timeouts: on a loaded machine under the race detector a slow
		// answer is not what these tests are about.
		url := redistest.Start(t).URL(0) + "?read_timeout=10s&write_timeout=10s&pool_timeout=10s"
		return func(records []fixtures.Record, opts Options) (Store, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r, err := OpenRedis(ctx, url, records, opts)
			if err != nil {
				return nil, err
			}
			r.touchEvery = 0 // every read marks the session used: the LRU tests see it at once
			t.Cleanup(func() { r.Close() })
			return r, nil
		}
	}},
}

// open opens a store of engine e on a new place.
func (e engine) open(t *testing.T, records []fixtures.Record, opts Options) Store {
	t.Helper()
	s, err := e.place(t)(records, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// must returns a function that returns s, failing the test on err.
func must(t *testing.T) func(s Store, err error) Store {
	return func(s Store, err error) Store {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// pets makes n records {"petId":i,"quantity":10*i}, keys given in
// descending order to check that the store sorts them.
func pets(n int) []fixtures.Record {
	var out []fixtures.Record
	for i := n; i >= 1; i-- {
		out = append(out, pet(int64(i), int64(10*i)))
	}
	return out
}

func pet(id, q int64) fixtures.Record {
	return fixtures.Record{ID: id, JSON: []byte(fmt.Sprintf(`{"petId":%d,"quantity":%d}`, id, q))}
}

type item struct {
	PetID    int64 `json:"petId"`
	Quantity int64 `json:"quantity"`
}

func quantity(t testing.TB, r fixtures.Record) int64 {
	t.Helper()
	var it item
	if err := json.Unmarshal(r.JSON, &it); err != nil {
		t.Fatalf("record %s: %v", r.JSON, err)
	}
	return it.Quantity
}

// setQuantity is a change that sets the quantity.
func setQuantity(q int64) func(fixtures.Record) (fixtures.Record, error) {
	return func(r fixtures.Record) (fixtures.Record, error) { return pet(r.ID, q), nil }
}

// list decodes a session's list, checking that it is a JSON array in
// ascending key order whose size is what Size says.
func list(t testing.TB, s Store, session string) []item {
	t.Helper()
	l, err := s.List(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	b := l.Bytes()
	if len(b) != l.Size() {
		t.Errorf("Size() = %d; the list has %d bytes", l.Size(), len(b))
	}
	var items []item
	if err := json.Unmarshal(b, &items); err != nil {
		t.Fatalf("list is not a JSON array: %v\n%s", err, b)
	}
	if len(items) != l.Len() {
		t.Errorf("Len() = %d; the list has %d records", l.Len(), len(items))
	}
	for i := 1; i < len(items); i++ {
		if items[i-1].PetID >= items[i].PetID {
			t.Fatalf("list not in ascending key order at %d: %v", i, items[i-1:i+1])
		}
	}
	return items
}

func TestEngines(t *testing.T) {
	ctx := context.Background()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			t.Run("list and get", func(t *testing.T) {
				s := e.open(t, pets(maxChunkSize*2+3), Options{})
				items := list(t, s, DefaultSession)
				if len(items) != maxChunkSize*2+3 || items[0].PetID != 1 || items[len(items)-1].Quantity != 10*int64(len(items)) {
					t.Fatalf("list = %d items, first %v, last %v", len(items), items[0], items[len(items)-1])
				}
				r, err := s.Get(ctx, DefaultSession, 7)
				if err != nil || r.ID != 7 || quantity(t, r) != 70 {
					t.Errorf("Get(7) = %s, %v", r.JSON, err)
				}
				if _, err := s.Get(ctx, DefaultSession, 99999); !errors.Is(err, ErrNotFound) {
					t.Errorf("Get(unknown) error = %v; want ErrNotFound", err)
				}
			})
			t.Run("empty", func(t *testing.T) {
				s := e.open(t, nil, Options{})
				if items := list(t, s, DefaultSession); len(items) != 0 {
					t.Errorf("list = %v; want []", items)
				}
			})
			t.Run("update", func(t *testing.T) {
				s := e.open(t, pets(maxChunkSize+10), Options{})
				got, err := s.Update(ctx, DefaultSession, maxChunkSize+1, setQuantity(123456789))
				if err != nil || quantity(t, got) != 123456789 {
					t.Fatalf("Update = %s, %v", got.JSON, err)
				}
				items := list(t, s, DefaultSession)
				for _, it := range items {
					want := 10 * it.PetID
					if it.PetID == maxChunkSize+1 {
						want = 123456789
					}
					if it.Quantity != want {
						t.Errorf("after the update, pet %d has %d; want %d", it.PetID, it.Quantity, want)
					}
				}
				if _, err := s.Update(ctx, DefaultSession, 424242, setQuantity(1)); !errors.Is(err, ErrNotFound) {
					t.Errorf("Update(unknown) error = %v; want ErrNotFound", err)
				}
				refuse := errors.New("refused")
				if _, err := s.Update(ctx, DefaultSession, 2, func(fixtures.Record) (fixtures.Record, error) { return fixtures.Record{}, refuse }); err != refuse {
					t.Errorf("a refused change: error = %v; want it passed through", err)
				}
				if r, _ := s.Get(ctx, DefaultSession, 2); quantity(t, r) != 20 {
					t.Errorf("a refused change wrote %s", r.JSON)
				}
			})
			t.Run("sessions are isolated", func(t *testing.T) {
				s := e.open(t, pets(20), Options{})
				s.Update(ctx, "a", 3, setQuantity(1))
				s.Update(ctx, "b", 3, setQuantity(2))
				for session, want := range map[string]int64{"a": 1, "b": 2, DefaultSession: 30, "fresh": 30} {
					if r, _ := s.Get(ctx, session, 3); quantity(t, r) != want {
						t.Errorf("session %s: pet 3 = %s; want quantity %d", session, r.JSON, want)
					}
				}
				if err := s.Reset(ctx, "a"); err != nil {
					t.Fatal(err)
				}
				if r, _ := s.Get(ctx, "a", 3); quantity(t, r) != 30 {
					t.Errorf("after reset of a: %s", r.JSON)
				}
				if r, _ := s.Get(ctx, "b", 3); quantity(t, r) != 2 {
					t.Errorf("the reset of a changed b: %s", r.JSON)
				}
				infos, err := s.Sessions(ctx)
				if err != nil || len(infos) < 3 || infos[0].Name != DefaultSession {
					t.Fatalf("Sessions() = %+v, %v; want the default first", infos, err)
				}
				if err := s.Drop(ctx, "b"); err != nil {
					t.Fatal(err)
				}
				if r, _ := s.Get(ctx, "b", 3); quantity(t, r) != 30 {
					t.Errorf("a dropped session kept its write: %s", r.JSON)
				}
			})
			t.Run("gzip", func(t *testing.T) {
				for _, n := range []int{0, 1, maxChunkSize*3 + 7} {
					s := e.open(t, pets(n), Options{})
					checkGzip(t, s, DefaultSession)
					if n > 0 {
						s.Update(ctx, DefaultSession, int64(n), setQuantity(77))
						checkGzip(t, s, DefaultSession)
					}
				}
			})
			t.Run("concurrent sessions lose nothing", func(t *testing.T) {
				testConcurrentSessions(t, e.open(t, pets(64), Options{}))
			})
			t.Run("reset of the default session", func(t *testing.T) {
				s := e.open(t, pets(5), Options{})
				if infos, _ := s.Sessions(ctx); len(infos) != 1 || infos[0].Name != DefaultSession || infos[0].Created.IsZero() {
					t.Errorf("a new store: Sessions() = %+v; want the default session, created", infos)
				}
				s.Update(ctx, DefaultSession, 4, setQuantity(1))
				if err := s.Reset(ctx, DefaultSession); err != nil {
					t.Fatal(err)
				}
				if err := s.Drop(ctx, DefaultSession); err != nil {
					t.Fatal(err)
				}
				if items := list(t, s, DefaultSession); items[3].Quantity != 40 {
					t.Errorf("after reset: pet 4 = %v; want the fixture's 40", items[3])
				}
				if infos, _ := s.Sessions(ctx); len(infos) == 0 || infos[0].Name != DefaultSession || infos[0].Writes != 0 || infos[0].Created.IsZero() {
					t.Errorf("Sessions() = %+v; want the default first, created, with 0 writes", infos)
				}
			})
			t.Run("session limits", func(t *testing.T) { testSessionLimits(t, e) })
			if e.keeps {
				t.Run("state survives a restart", func(t *testing.T) { testRestart(t, e) })
				t.Run("state of other fixtures is refused", func(t *testing.T) { testOtherFixtures(t, e) })
			}
			if e.shares {
				t.Run("two stores on one place are one", func(t *testing.T) { testShared(t, e) })
			}
		})
	}
}

// testSessionLimits checks that past MaxSessions the least recently used
// session goes, and that an idle session goes after IdleTimeout.
func testSessionLimits(t *testing.T, e engine) {
	ctx := context.Background()
	s := e.open(t, pets(3), Options{MaxSessions: 2, IdleTimeout: 500 * time.Millisecond})
	step := func() { time.Sleep(5 * time.Millisecond) } // last use is kept in ms by some engines
	s.Update(ctx, "a", 1, setQuantity(5))
	step()
	s.Update(ctx, "b", 1, setQuantity(5))
	step()
	s.Get(ctx, "a", 1) // a is now used more recently than b
	step()
	s.Update(ctx, "c", 1, setQuantity(6)) // past the cap: b goes
	if names := sessionNames(t, s); fmt.Sprint(names) != "[default a c]" {
		t.Errorf("sessions = %v; want [default a c] (b least recently used)", names)
	}
	if r, _ := s.Get(ctx, "b", 1); quantity(t, r) != 10 {
		t.Errorf("the evicted session b kept its write: %s", r.JSON)
	}
	deadline := time.Now().Add(3 * time.Second)
	for fmt.Sprint(sessionNames(t, s)) != "[default]" {
		if time.Now().After(deadline) {
			t.Fatalf("sessions = %v 3s after their last use; want [default] (idle after 500ms)", sessionNames(t, s))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r, _ := s.Get(ctx, "c", 1); quantity(t, r) != 10 {
		t.Errorf("the idle session c kept its write: %s", r.JSON)
	}
}

// testRestart checks that a store opened again serves what the closed one
// wrote, resets included.
func testRestart(t *testing.T, e engine) {
	ctx := context.Background()
	open := e.place(t)
	s := must(t)(open(pets(10), Options{}))
	s.Update(ctx, DefaultSession, 2, setQuantity(222))
	s.Update(ctx, "a", 3, setQuantity(333))
	s.Update(ctx, "gone", 3, setQuantity(1))
	s.Update(ctx, "reset", 3, setQuantity(1))
	s.Drop(ctx, "gone")
	s.Reset(ctx, "reset")
	s.Close()

	s = must(t)(open(pets(10), Options{}))
	for _, tt := range []struct {
		session string
		id, q   int64
	}{
		{DefaultSession, 2, 222}, {DefaultSession, 3, 30}, {"a", 3, 333}, {"a", 2, 20}, {"gone", 3, 30}, {"reset", 3, 30},
	} {
		if r, err := s.Get(ctx, tt.session, tt.id); err != nil || quantity(t, r) != tt.q {
			t.Errorf("after a restart, session %s pet %d = %s, %v; want quantity %d", tt.session, tt.id, r.JSON, err, tt.q)
		}
	}
	infos, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]int64{}
	for _, in := range infos {
		writes[in.Name] = in.Writes
	}
	if writes[DefaultSession] != 1 || writes["a"] != 1 {
		t.Errorf("after a restart, Sessions() = %+v; want 1 write in default and in a", infos)
	}
	s.Reset(ctx, "a")
	s.Close()
	s = must(t)(open(pets(10), Options{}))
	if r, _ := s.Get(ctx, "a", 3); quantity(t, r) != 30 {
		t.Errorf("a reset before a restart was lost: %s", r.JSON)
	}
}

// testOtherFixtures checks that state made from other records or another
// origin is refused, with a message that says so.
func testOtherFixtures(t *testing.T, e engine) {
	open := e.place(t)
	s := must(t)(open(pets(10), Options{Origin: "contract A"}))
	s.Update(context.Background(), DefaultSession, 1, setQuantity(5))
	s.Close()
	for _, tt := range []struct {
		name    string
		records []fixtures.Record
		origin  string
	}{
		{"other records", pets(11), "contract A"},
		{"another origin", pets(10), "contract B"},
	} {
		if _, err := open(tt.records, Options{Origin: tt.origin}); err == nil || !strings.Contains(err.Error(), "other fixtures or another contract") {
			t.Errorf("%s: open = %v; want an error about other fixtures", tt.name, err)
		}
	}
	if _, err := open(pets(10), Options{Origin: "contract A"}); err != nil {
		t.Errorf("the same fixtures again: %v", err)
	}
}

// testShared checks that two stores open on one place at once see each
// other's writes at once, and lose none of them when they write the same
// record together.
func testShared(t *testing.T, e engine) {
	ctx := context.Background()
	open := e.place(t)
	a := must(t)(open(pets(10), Options{}))
	b := must(t)(open(pets(10), Options{}))
	list(t, b, DefaultSession) // b has the list cached
	a.Update(ctx, DefaultSession, 5, setQuantity(555))
	if items := list(t, b, DefaultSession); items[4].Quantity != 555 {
		t.Errorf("a write on a: b lists pet 5 as %v; want 555", items[4])
	}
	const workers, increments = 4, 25
	var wg sync.WaitGroup
	for _, s := range []Store{a, b} {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range increments {
					if _, err := s.Update(ctx, "x", 1, increment); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	for name, s := range map[string]Store{"a": a, "b": b} {
		if r, _ := s.Get(ctx, "x", 1); quantity(t, r) != 10+2*workers*increments {
			t.Errorf("%s: pet 1 = %s after %d increments from two stores; want %d", name, r.JSON, 2*workers*increments, 10+2*workers*increments)
		}
	}
	b.Reset(ctx, "x")
	if r, _ := a.Get(ctx, "x", 1); quantity(t, r) != 10 {
		t.Errorf("a reset on b: a reads %s", r.JSON)
	}
}

// increment adds one to the quantity.
func increment(r fixtures.Record) (fixtures.Record, error) {
	var it item
	if err := json.Unmarshal(r.JSON, &it); err != nil {
		return fixtures.Record{}, err
	}
	return pet(r.ID, it.Quantity+1), nil
}

// testConcurrentSessions has 50 sessions increment the same pets at once,
// each from several goroutines, and checks that within every session no
// increment is lost and no session sees another's.
func testConcurrentSessions(t *testing.T, s Store) {
	const sessions, workers, increments = 50, 4, 20
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range sessions {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := "ci-job-" + strconv.Itoa(i)
				for n := range increments {
					id := int64(1 + n%3)
					_, err := s.Update(ctx, name, id, func(r fixtures.Record) (fixtures.Record, error) {
						var it item
						if err := json.Unmarshal(r.JSON, &it); err != nil {
							return fixtures.Record{}, err
						}
						return pet(r.ID, it.Quantity+int64(i)+1), nil
					})
					if err != nil {
						t.Error(err)
						return
					}
					s.List(ctx, name)
				}
			}()
		}
	}
	wg.Wait()
	for i := range sessions {
		items := list(t, s, "ci-job-"+strconv.Itoa(i))
		var total int64
		for _, it := range items[:3] {
			total += it.Quantity - 10*it.PetID
		}
		if want := int64(workers * increments * (i + 1)); total != want {
			t.Errorf("session %d: increments add up to %d; want %d (lost or crossed updates)", i, total, want)
		}
	}
	if items := list(t, s, DefaultSession); items[0].Quantity != 10 {
		t.Errorf("the default session changed: %v", items[0])
	}
}

// checkGzip checks that a session's list, gzip-compressed, is a gzip
// stream of exactly its JSON, of the size GzipSize says.
func checkGzip(t *testing.T, s Store, session string) {
	t.Helper()
	l, err := s.List(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := l.WriteGzipTo(&buf); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != l.GzipSize() {
		t.Errorf("GzipSize() = %d; WriteGzipTo wrote %d bytes", l.GzipSize(), buf.Len())
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("the gzip stream does not read back: %v", err)
	}
	if want := l.Bytes(); !bytes.Equal(got, want) {
		t.Errorf("gzip of %d records decompresses to %d bytes, not the list's %d", l.Len(), len(got), len(want))
	}
}

func TestMemorySessionLimits(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(pets(3), Options{MaxSessions: 2, IdleTimeout: time.Hour})
	defer m.Close()
	now := m.now()
	m.now = func() time.Time { return now }
	for _, name := range []string{"a", "b"} {
		now = now.Add(1)
		m.Update(ctx, name, 1, setQuantity(5))
	}
	now = now.Add(1)
	m.Get(ctx, "a", 1) // a is now used more recently than b
	now = now.Add(1)
	m.Update(ctx, "c", 1, setQuantity(6)) // past the cap: b goes
	names := sessionNames(t, m)
	if fmt.Sprint(names) != "[default a c]" {
		t.Errorf("sessions = %v; want [default a c] (b least recently used)", names)
	}
	now = now.Add(2 * time.Hour)
	m.Get(ctx, "c", 1)
	m.dropIdle()
	if names := sessionNames(t, m); fmt.Sprint(names) != "[default c]" {
		t.Errorf("after the idle time: sessions = %v; want [default c]", names)
	}
}

func sessionNames(t *testing.T, s Store) []string {
	infos, err := s.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range infos {
		names = append(names, in.Name)
	}
	return names
}
