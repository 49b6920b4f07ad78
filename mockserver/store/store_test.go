package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/fixtures"
)

// An engine makes a fresh Store holding records, for the tests every
// engine must pass.
type engine struct {
	name string
	open func(t *testing.T, records []fixtures.Record, opts Options) Store
}

// engines lists the engines under test. Engines that need a server skip
// themselves where it is missing.
var engines = []engine{
	{"memory", func(t *testing.T, records []fixtures.Record, opts Options) Store {
		m := NewMemory(records, opts)
		t.Cleanup(func() { m.Close() })
		return m
	}},
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
			t.Run("list and get", func(t *testing.T) {
				s := e.open(t, pets(ChunkSize*2+3), Options{})
				items := list(t, s, DefaultSession)
				if len(items) != ChunkSize*2+3 || items[0].PetID != 1 || items[len(items)-1].Quantity != 10*int64(len(items)) {
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
				s := e.open(t, pets(ChunkSize+10), Options{})
				got, err := s.Update(ctx, DefaultSession, ChunkSize+1, setQuantity(123456789))
				if err != nil || quantity(t, got) != 123456789 {
					t.Fatalf("Update = %s, %v", got.JSON, err)
				}
				items := list(t, s, DefaultSession)
				for _, it := range items {
					want := 10 * it.PetID
					if it.PetID == ChunkSize+1 {
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
				for _, n := range []int{0, 1, ChunkSize*3 + 7} {
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
		})
	}
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
