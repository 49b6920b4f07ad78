package store

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/petstore/inventory-kit/fixtures"
)

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC() // the second collection frees what the first one's finalizers let go
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestCopyOnWriteMemory checks what store/README.md says of sessions: 1,000
// sessions over 10,000 pets do not copy 10 million records. A session that
// only reads shares the fixtures' snapshot; one that writes a record
// copies that record's chunk and the list of chunks, not the records.
// The bounds are far from both what is measured (see the log) and what a
// whole copy costs (the data set, about 460 KiB, per session), so the
// test does not depend on the collector's timing.
func TestCopyOnWriteMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap: not with -short")
	}
	const pets, sessions = 10_000, 1_000
	base := heapInUse()
	records := make([]fixtures.Record, pets)
	for i := range records {
		id := int64(i + 1)
		records[i] = fixtures.Record{ID: id, JSON: []byte(fmt.Sprintf(`{"petId":%d,"quantity":%d,"status":"available"}`, id, id%97))}
	}
	ctx := context.Background()
	m := NewMemory(records, Options{MaxSessions: sessions})
	defer m.Close()
	records = nil
	l, _ := m.List(ctx, DefaultSession)
	data := l.Size()
	withData := heapInUse()

	names := make([]string, sessions)
	for i := range names {
		names[i] = fmt.Sprintf("session-%04d", i)
	}
	read := heapInUse()
	for _, name := range names {
		l, err := m.List(ctx, name)
		if err != nil || l.Len() != pets {
			t.Fatalf("%s: list of %d, %v", name, l.Len(), err)
		}
		if _, err := m.Get(ctx, name, pets/2); err != nil {
			t.Fatal(err)
		}
	}
	afterReads := heapInUse()

	for i, name := range names {
		id := int64(1 + i*pets/sessions) // a different chunk from one session to the next
		if _, err := m.Update(ctx, name, id, func(r fixtures.Record) (fixtures.Record, error) {
			return fixtures.Record{ID: id, JSON: []byte(fmt.Sprintf(`{"petId":%d,"quantity":%d,"status":"sold"}`, id, 1000+i))}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	afterWrites := heapInUse()

	// Every session still sees its own write and the fixtures elsewhere.
	for i, name := range names[:10] {
		id := int64(1 + i*pets/sessions)
		if r, _ := m.Get(ctx, name, id); string(r.JSON) != fmt.Sprintf(`{"petId":%d,"quantity":%d,"status":"sold"}`, id, 1000+i) {
			t.Errorf("%s: pet %d = %s", name, id, r.JSON)
		}
		if r, _ := m.Get(ctx, name, id+1); string(r.JSON) != fmt.Sprintf(`{"petId":%d,"quantity":%d,"status":"available"}`, id+1, (id+1)%97) {
			t.Errorf("%s: pet %d = %s", name, id+1, r.JSON)
		}
	}
	if infos, _ := m.Sessions(ctx); len(infos) != sessions+1 {
		t.Fatalf("%d sessions kept; want %d and the default", len(infos), sessions)
	}
	runtime.KeepAlive(m)

	perRead := (int64(afterReads) - int64(read)) / sessions
	perWrite := (int64(afterWrites) - int64(afterReads)) / sessions
	t.Logf("%d pets: %d bytes of JSON, %d KiB of heap; per session: %d B after reads, %d B more after one write (a whole copy: %d KiB)",
		pets, data, (int64(withData)-int64(base))>>10, perRead, perWrite, data>>10)
	if perRead > 1<<10 {
		t.Errorf("a session that only reads costs %d B; want under 1 KiB: it should share the fixtures' snapshot", perRead)
	}
	if perWrite > 40<<10 {
		t.Errorf("a session with one write costs %d B more; want under 40 KiB (one chunk and the list of chunks), far from the %d KiB of a whole copy", perWrite, data>>10)
	}
}
