package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/spec"
)

// TestFileRefusesBadFiles checks that a file Open cannot trust stops it
// with a message that says why, and that nothing is served from it.
func TestFileRefusesBadFiles(t *testing.T) {
	for _, tt := range []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"not a database", func(t *testing.T, path string) {
			write(t, path, []byte(strings.Repeat("not a bbolt file\n", 1000)))
		}, "not a store file, or corrupted"},
		{"truncated", func(t *testing.T, path string) {
			made(t, path)
			b, _ := os.ReadFile(path)
			write(t, path, b[:100])
		}, "truncated: 100 bytes"},
		{"empty", func(t *testing.T, path string) {
			write(t, path, nil)
		}, "exists but is empty (0 bytes)"},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "a directory, not a file"},
		{"meta pages overwritten", func(t *testing.T, path string) {
			made(t, path)
			b, _ := os.ReadFile(path)
			for i := 16; i < 4096*2 && i < len(b); i += 7 {
				b[i] ^= 0xff
			}
			write(t, path, b)
		}, "not a store file, or corrupted"},
		{"data pages overwritten", func(t *testing.T, path string) {
			made(t, path)
			b, _ := os.ReadFile(path)
			for i := 4096 * 2; i < len(b); i += 4096 {
				copy(b[i:], "garbage garbage garbage")
			}
			write(t, path, b)
		}, "corrupted"},
		{"a bbolt database of something else", func(t *testing.T, path string) {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err })
			db.Close()
		}, "not an inventory-mock store"},
		{"an older format", func(t *testing.T, path string) {
			made(t, path)
			setFormat(t, path, "inventory-mock file store, format 1")
		}, "written by an older version of inventory-mock (file format 1; this one reads format 2 only)"},
		{"a newer format", func(t *testing.T, path string) {
			made(t, path)
			setFormat(t, path, "inventory-mock file store, format 3")
		}, "written by a newer version of inventory-mock (file format 3; this one reads format 2 only)"},
		{"a format no version writes", func(t *testing.T, path string) {
			made(t, path)
			setFormat(t, path, "something else")
		}, `corrupted (its format is "something else"`},
		{"a record that is not JSON", func(t *testing.T, path string) {
			made(t, path)
			putRecord(t, path, "a", 1, `{"petId":1,`)
		}, `corrupted (session "a": the record of key 1 is not a JSON object)`},
		{"a record of a pet the fixtures do not have", func(t *testing.T, path string) {
			made(t, path)
			putRecord(t, path, "a", 99, `{"petId":99}`)
		}, "corrupted"},
		{"a record without its checksum (format 1)", func(t *testing.T, path string) {
			made(t, path)
			edit(t, path, func(tx *bolt.Tx) error {
				return tx.Bucket(sessionsBucket).Bucket([]byte("a")).Bucket(recordsBucket).Put(idKey(2), []byte(`{"petId":2,"quantity":3}`))
			})
		}, `corrupted (session "a": the record of key 2 fails its checksum)`},
		{"a record moved to another session", func(t *testing.T, path string) {
			made(t, path)
			edit(t, path, func(tx *bolt.Tx) error {
				v := tx.Bucket(sessionsBucket).Bucket([]byte("a")).Bucket(recordsBucket).Get(idKey(2))
				b, _ := tx.Bucket(sessionsBucket).CreateBucket([]byte("b"))
				r, _ := b.CreateBucket(recordsBucket)
				return r.Put(idKey(2), bytes.Clone(v))
			})
		}, `corrupted (session "b": the record of key 2 fails its checksum)`},
		{"a count of writes changed", func(t *testing.T, path string) {
			made(t, path)
			edit(t, path, func(tx *bolt.Tx) error {
				b := tx.Bucket(sessionsBucket).Bucket([]byte("a"))
				v := bytes.Clone(b.Get(sessionWrites))
				v[len(v)-1] ^= 1
				return b.Put(sessionWrites, v)
			})
		}, `session "a": its value "w" fails its checksum`},
		// A byte of a record changed on disk, in place, where bbolt has no
		// checksum: the record is still JSON, and still a record.
		{"a digit of a record changed on disk", func(t *testing.T, path string) {
			made(t, path)
			patchFile(t, path, `"quantity":3}`, `"quantity":9}`)
		}, `corrupted (session "a": the record of key 2 fails its checksum)`},
		{"a field name of a record changed on disk", func(t *testing.T, path string) {
			made(t, path)
			patchFile(t, path, `"quantity":3}`, `"quantitx":3}`)
		}, `corrupted (session "a": the record of key 2 fails its checksum)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.db")
			tt.make(t, path)
			f, err := OpenFile(path, pets(10), Options{})
			if err == nil {
				f.Close()
				t.Fatalf("OpenFile = nil error; want one with %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("OpenFile error = %q; want it to name the file and say %q", err, tt.want)
			}
		})
	}
}

// TestFileInUse checks that a second process on one file is refused at
// once, with a message that points to the redis store.
func TestFileInUse(t *testing.T) {
	t.Parallel() // waits a second for the lock
	path := filepath.Join(t.TempDir(), "store.db")
	f, err := OpenFile(path, pets(3), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if g, err := OpenFile(path, pets(3), Options{}); err == nil || !strings.Contains(err.Error(), "in use by another process") {
		if g != nil {
			g.Close()
		}
		t.Errorf("a second OpenFile = %v; want 'in use by another process'", err)
	}
}

// TestFileFailedCommit checks that once a commit fails the store refuses
// writes with ErrUnavailable, says so in Health, and still serves what
// was committed.
func TestFileFailedCommit(t *testing.T) {
	ctx := context.Background()
	f, err := OpenFile(filepath.Join(t.TempDir(), "store.db"), pets(3), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Update(ctx, DefaultSession, 1, setQuantity(7))
	f.db.Close() // every commit fails from now on
	if _, err := f.Update(ctx, DefaultSession, 2, setQuantity(8)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Update after a failed commit: error = %v; want ErrUnavailable", err)
	}
	if _, err := f.Update(ctx, DefaultSession, 1, setQuantity(9)); !errors.Is(err, ErrUnavailable) {
		t.Errorf("the next Update: error = %v; want ErrUnavailable", err)
	}
	if err := f.Health(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Health = %v; want ErrUnavailable", err)
	}
	items := list(t, f, DefaultSession)
	if items[0].Quantity != 7 || items[1].Quantity != 20 {
		t.Errorf("list = %v; want the committed state (pet 1: 7, pet 2: 20)", items)
	}
}

// TestFileChecksRecordsAgainstTheShape opens files whose records have
// valid checksums but are not records of the contract's schema: a file
// written by a bug, or by hand. Open refuses them, naming the problem.
func TestFileChecksRecordsAgainstTheShape(t *testing.T) {
	shape, records := contractRecords(t)
	for _, tt := range []struct {
		name, record string
		id           int64
		want         string
	}{
		{"no quantity", `{"petId":5,"quantitx":31337,"status":"sold"}`, 5, "the record of petId 5 is not a InventoryItem"},
		{"a status outside the enum", `{"petId":5,"quantity":1,"status":"lost"}`, 5, "the record of petId 5 is not a InventoryItem"},
		{"a quantity that is a string", `{"petId":5,"quantity":"1","status":"sold"}`, 5, "the record of petId 5 is not a InventoryItem"},
		{"another pet's record", `{"petId":6,"quantity":1,"status":"sold"}`, 5, "the record kept under petId 5 has petId 6"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.db")
			f, err := OpenFile(path, records, Options{Shape: shape})
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			putRecord(t, path, "a", tt.id, tt.record)
			f, err = OpenFile(path, records, Options{Shape: shape})
			if err == nil {
				f.Close()
				t.Fatalf("OpenFile with %s = nil error; want %q", tt.record, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "nothing is served from it") {
				t.Errorf("OpenFile error = %q; want %q", err, tt.want)
			}
		})
	}
	// The same record, valid, is served.
	path := filepath.Join(t.TempDir(), "store.db")
	f, err := OpenFile(path, records, Options{Shape: shape})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	putRecord(t, path, "a", 5, `{"petId":5,"quantity":31337,"status":"sold"}`)
	f, err = OpenFile(path, records, Options{Shape: shape})
	if err != nil {
		t.Fatalf("a valid record: %v", err)
	}
	defer f.Close()
	if r, _ := f.Get(context.Background(), "a", 5); string(r.JSON) != `{"petId":5,"quantity":31337,"status":"sold"}` {
		t.Errorf("pet 5 of a = %s; want the record written", r.JSON)
	}
}

// contractRecords returns the embedded contract's record shape and
// fixtures.
func contractRecords(t *testing.T) (*fixtures.Shape, []fixtures.Record) {
	t.Helper()
	c, err := spec.Shared()
	if err != nil {
		t.Fatal(err)
	}
	shape, err := fixtures.NewShape(c)
	if err != nil {
		t.Fatal(err)
	}
	records, _, err := fixtures.Default(shape)
	if err != nil {
		t.Fatal(err)
	}
	return shape, records
}

// TestFileTruncated cuts a store file short at every page boundary and
// inside pages: below the last commit's high-water mark Open refuses it
// with a message (bbolt alone crashes the process with SIGBUS, which no
// test could catch: this test binary would die), at or above it the file
// is whole and its state is served.
func TestFileTruncated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "store.db")
	bigFile(t, path)
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := liveMeta(t, whole)
	need := int(m.pgid) * int(m.pageSize)
	if need < 8*int(m.pageSize) {
		t.Fatalf("the file has %d pages; want a file of many pages", m.pgid)
	}
	// bbolt grows a file ahead of its pages: past the high-water mark it
	// holds free pages only.
	var sizes []int
	for n := 0; n <= need+2*int(m.pageSize); n += int(m.pageSize) {
		sizes = append(sizes, n, n+1, n+int(m.pageSize)/2)
	}
	sizes = append(sizes, 16, 80, 100, 1023, need-1, need, len(whole)-1, len(whole))
	for _, n := range sizes {
		if n > len(whole) {
			continue
		}
		cut := filepath.Join(dir, fmt.Sprintf("cut-%d.db", n))
		write(t, cut, whole[:n])
		f, err := OpenFile(cut, pets(200), Options{})
		switch {
		case n == 0:
			if err == nil || !strings.Contains(err.Error(), "empty (0 bytes)") {
				t.Errorf("cut to 0 bytes: OpenFile error = %v; want 'empty (0 bytes)'", err)
			}
		case n < need:
			if err == nil {
				f.Close()
				t.Errorf("cut to %d bytes (the last commit needs %d): OpenFile = nil error; want a refusal", n, need)
			} else if !strings.Contains(err.Error(), "truncated") && !strings.Contains(err.Error(), "not a store file, or corrupted") {
				t.Errorf("cut to %d bytes: OpenFile error = %q; want 'truncated' or 'not a store file, or corrupted'", n, err)
			}
		default: // the pages past the high-water mark are free: nothing is lost
			if err != nil {
				t.Errorf("cut to %d bytes (the last commit needs %d): %v; want the file served", n, need, err)
				continue
			}
			if r, err := f.Get(context.Background(), "s7", 42); err != nil || quantity(t, r) != 7042 {
				t.Errorf("cut to %d bytes: pet 42 of s7 = %s, %v; want quantity 7042", n, r.JSON, err)
			}
			f.Close()
		}
	}
}

// TestFilePointerPastTheEnd points a bucket of a file cut to its
// high-water mark at the page after it: a page inside bbolt's memory map
// but past the end of the file, which bbolt's own check reads in a
// goroutine of its own (a SIGBUS that kills the process). Open refuses
// the file with a message.
func TestFilePointerPastTheEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	bigFile(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := liveMeta(t, b)
	// bbolt maps a power of two of bytes: the page past the end is in the
	// map only if the high-water mark is not one.
	for extra := 0; m.pgid&(m.pgid-1) == 0; extra++ {
		f, err := OpenFile(path, pets(200), Options{})
		if err != nil {
			t.Fatal(err)
		}
		f.Update(context.Background(), fmt.Sprintf("extra%d", extra), 1, setQuantity(1))
		f.Close()
		if b, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		m = liveMeta(t, b)
	}
	b = b[:int(m.pgid)*int(m.pageSize)]
	// The root page is a leaf of the top-level buckets: point "sessions"
	// past the end.
	root := b[int(m.root)*int(m.pageSize):]
	le := binary.NativeEndian
	found := false
	for i := range int(le.Uint16(root[10:])) {
		e := root[pageHeaderSize+16*i:]
		pos, ksize := int(le.Uint32(e[4:])), int(le.Uint32(e[8:]))
		if string(e[pos:pos+ksize]) == "sessions" {
			le.PutUint64(e[pos+ksize:], m.pgid)
			found = true
		}
	}
	if !found {
		t.Fatal("no sessions bucket on the root page")
	}
	write(t, path, b)
	f, err := OpenFile(path, pets(200), Options{})
	if err == nil {
		f.Close()
		t.Fatal("OpenFile = nil error; want the file refused")
	}
	if !strings.Contains(err.Error(), "corrupted") || !strings.Contains(err.Error(), path) {
		t.Errorf("OpenFile error = %q; want it to name the file and say 'corrupted'", err)
	}
}

// bigFile makes a store file of many pages: 200 pets, 12 sessions that
// each wrote every pet (pet i of session sN holds N*1000+i).
func bigFile(t *testing.T, path string) {
	t.Helper()
	f, err := OpenFile(path, pets(200), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for s := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := int64(1); id <= 200; id++ {
				if _, err := f.Update(ctx, fmt.Sprintf("s%d", s), id, setQuantity(int64(s)*1000+id)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// liveMeta returns the meta bbolt uses in a whole file.
func liveMeta(t *testing.T, b []byte) boltMeta {
	t.Helper()
	m0, err0 := parseMeta(b)
	if err0 != nil {
		t.Fatal(err0)
	}
	m1, err1 := parseMeta(b[m0.pageSize:])
	if err1 == nil && m1.txid > m0.txid {
		return m1
	}
	return m0
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// made makes a store file of 10 pets with one write.
func made(t *testing.T, path string) {
	t.Helper()
	f, err := OpenFile(path, pets(10), Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Update(context.Background(), "a", 2, setQuantity(3))
	f.Close()
}

// setFormat writes the format a store file says it has.
func setFormat(t *testing.T, path, format string) {
	t.Helper()
	edit(t, path, func(tx *bolt.Tx) error { return tx.Bucket(metaBucket).Put(formatKey, []byte(format)) })
}

// putRecord writes a record in a session of a store file, sealed as the
// store seals it.
func putRecord(t *testing.T, path, session string, id int64, record string) {
	t.Helper()
	edit(t, path, func(tx *bolt.Tx) error {
		b, err := tx.Bucket(sessionsBucket).CreateBucketIfNotExists([]byte(session))
		if err != nil {
			return err
		}
		r, err := b.CreateBucketIfNotExists(recordsBucket)
		if err != nil {
			return err
		}
		return r.Put(idKey(id), seal(session, idKey(id), []byte(record)))
	})
}

// patchFile replaces the one occurrence of old in a file by new, of the
// same length, in place.
func patchFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte(old)); n != 1 {
		t.Fatalf("%s holds %q %d times; want once", path, old, n)
	}
	write(t, path, bytes.Replace(b, []byte(old), []byte(new), 1))
}

// edit changes a store file behind the store's back.
func edit(t *testing.T, path string, change func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(change); err != nil {
		t.Fatal(err)
	}
}
