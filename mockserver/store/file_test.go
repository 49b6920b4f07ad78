package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
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
		}, "not a store file, or corrupted"},
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
		{"another format", func(t *testing.T, path string) {
			made(t, path)
			edit(t, path, func(tx *bolt.Tx) error {
				return tx.Bucket(metaBucket).Put(formatKey, []byte("inventory-mock file store, format 0"))
			})
		}, "written by another version"},
		{"a record that is not JSON", func(t *testing.T, path string) {
			made(t, path)
			edit(t, path, func(tx *bolt.Tx) error {
				b, _ := tx.Bucket(sessionsBucket).CreateBucketIfNotExists([]byte("a"))
				r, _ := b.CreateBucketIfNotExists(recordsBucket)
				return r.Put(idKey(1), []byte(`{"petId":1,`))
			})
		}, "corrupted"},
		{"a record of a pet the fixtures do not have", func(t *testing.T, path string) {
			made(t, path)
			edit(t, path, func(tx *bolt.Tx) error {
				b, _ := tx.Bucket(sessionsBucket).CreateBucketIfNotExists([]byte("a"))
				r, _ := b.CreateBucketIfNotExists(recordsBucket)
				return r.Put(idKey(99), []byte(`{"petId":99}`))
			})
		}, "corrupted"},
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
