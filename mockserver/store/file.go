package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/petstore/inventory-kit/fixtures"
)

// File keeps records in a bbolt database file: the state survives a
// restart, SIGTERM and SIGKILL. Only one process may have the file open.
// Its Memory holds the state and serves List, Get and Sessions, what is
// committed; the file is read only at start. A write is applied to the
// session's head, queued, and acknowledged once a commit of the queue is
// synced. The layout and the files OpenFile refuses: README.md ("file").
//
// After a commit fails (a full disk, an I/O error), which leaves the file
// as it was, every write is refused with ErrUnavailable until the file is
// opened again: the memory no longer holds what the file does.
type File struct {
	*Memory
	db     *bolt.DB
	path   string
	ops    *queue[fileOp]        // the changes of the next commit; closed by Close
	failed atomic.Pointer[error] // the error of the commit that failed; nil while none did

	stopped chan struct{} // closed by the committer when it stops
	once    sync.Once
}

// fileFormat names the layout of the file; another value stops Open.
// Format 1 had no checksums.
const (
	fileFormatName    = "inventory-mock file store, format "
	fileFormatVersion = 2
	fileFormat        = fileFormatName + "2"
)

// maxBatch is the most operations committed in one transaction.
const maxBatch = 1024

// Bucket and key names of the file.
var (
	metaBucket     = []byte("meta")
	sessionsBucket = []byte("sessions")
	recordsBucket  = []byte("r")
	formatKey      = []byte("format")
	fingerprintKey = []byte("fingerprint")
	createdKey     = []byte("created")
	sessionCreated = []byte("c")
	sessionWrites  = []byte("w")
)

// A fileOp is one change of the file, written by the next commit.
type fileOp struct {
	apply   func(tx *bolt.Tx) error // writes the change; nil: a barrier
	publish func()                  // makes it visible, once committed; may be nil
	done    chan error              // receives the commit's outcome; capacity 1
}

// OpenFile opens the store file at path, making it from records if it does
// not exist. An existing file must have been made from the same records
// and Options.Origin; its state is served, not the fixtures.
func OpenFile(path string, records []fixtures.Record, opts Options) (*File, error) {
	opts = opts.withDefaults()
	if err := precheck(path); err != nil {
		return nil, err
	}
	db, err := openBolt(path, &bolt.Options{Timeout: time.Second, FreelistType: bolt.FreelistMapType, NoFreelistSync: true})
	if err != nil {
		return nil, err
	}
	f := &File{db: db, path: path, ops: newQueue[fileOp](), stopped: make(chan struct{})}
	f.Memory = newMemory(newDataset(records, opts), f.dropLater)
	st, err := f.load(f.fingerprint())
	if err != nil {
		f.Memory.Close()
		db.Close()
		return nil, err
	}
	go f.commit()
	if st.created.IsZero() {
		opts.Logger.Info("file store: a new file, starting from the fixtures", "file", path, "records", len(f.ids))
	} else {
		opts.Logger.Info("file store: serving the state kept in the file, not the fixtures",
			"file", path, "made", st.created.Format(time.RFC3339), "sessions", st.sessions, "writes", st.writes, "records", len(f.ids))
	}
	return f, nil
}

// precheck checks an existing file before it is opened for writing: an
// empty file or a directory is refused, the meta pages are read with
// plain reads and a file cut short is refused (checkPages), then the file
// is opened read-only, every page of every bucket is read, and bbolt's
// consistency check runs. bbolt panics on some corrupted pages, and reads
// pages through a memory map, where a page past the end of the file is a
// SIGBUS: both become errors here, before a goroutine of bbolt's own could
// meet them.
func precheck(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // a new file
	case err != nil:
		return fmt.Errorf("file store %s: %w", path, err)
	case fi.IsDir():
		return fmt.Errorf("file store %s: a directory, not a file; give the path of the store file, such as file:%s (it is made if missing)", path, filepath.Join(path, "state.db"))
	case !fi.Mode().IsRegular():
		return fmt.Errorf("file store %s: not a regular file (%s); give the path of the store file (it is made if missing)", path, fi.Mode().Type())
	case fi.Size() == 0:
		return fmt.Errorf("file store %s: the file exists but is empty (0 bytes), so it holds no state (a failed copy or restore leaves such a file); nothing is served from it: restore the right file, or delete this one to start from the fixtures", path)
	}
	if err := checkPages(path, fi.Size()); err != nil {
		return err
	}
	db, err := openBolt(path, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	return readAll(path, db)
}

// readAll reads every key and value of every bucket of db, then runs
// bbolt's consistency check, which reads the pages again in a goroutine of
// its own: a page the walk could read, the check can too.
func readAll(path string, db *bolt.DB) error {
	return guarded(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			var crc uint32
			var walk func(b *bolt.Bucket)
			walk = func(b *bolt.Bucket) {
				b.ForEach(func(k, v []byte) error {
					crc = crc32.Update(crc32.Update(crc, crcTable, k), crcTable, v)
					if v == nil {
						if c := b.Bucket(k); c != nil {
							walk(c)
						}
					}
					return nil
				})
			}
			tx.ForEach(func(_ []byte, b *bolt.Bucket) error { walk(b); return nil })
			for err := range tx.Check() {
				return corrupted(path, err)
			}
			return nil
		})
	})
}

// guarded runs fn, turning a panic or a memory fault (bbolt's, on some
// corrupted pages) into the error of a corrupted file.
func guarded(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			err = corrupted(path, v)
		}
	}()
	return fn()
}

func corrupted(path string, why any) error {
	return fmt.Errorf("file store %s: corrupted (%v); nothing is served from it: move it away to start from the fixtures", path, why)
}

// openBolt opens the file with bbolt, explaining why it cannot.
func openBolt(path string, o *bolt.Options) (*bolt.DB, error) {
	var db *bolt.DB
	err := guarded(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, o)
		switch {
		case errors.Is(err, bolterrors.ErrTimeout):
			return fmt.Errorf("file store %s: in use by another process (another inventory-mock?); a file serves one process, use the redis store to share state", path)
		case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrChecksum), errors.Is(err, bolterrors.ErrVersionMismatch):
			return fmt.Errorf("file store %s: not a store file, or corrupted (%v); nothing is served from it: move it away to start from the fixtures", path, err)
		case err != nil:
			return fmt.Errorf("file store %s: %w", path, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return db, nil
}

// loaded is what load found in the file.
type loaded struct {
	created  time.Time // zero: the file was new
	sessions int
	writes   int64
}

// load checks the file and reads its sessions into memory, or makes a new
// file's buckets. Nothing is kept from a file that fails a check.
func (f *File) load(fp string) (st loaded, err error) {
	err = guarded(f.path, func() error {
		return f.db.Update(func(tx *bolt.Tx) error {
			meta := tx.Bucket(metaBucket)
			if meta == nil {
				return f.initialise(tx, fp)
			}
			if err := f.check(tx, meta, fp); err != nil {
				return err
			}
			st.created, _ = time.Parse(time.RFC3339Nano, string(meta.Get(createdKey)))
			return tx.Bucket(sessionsBucket).ForEachBucket(func(name []byte) error {
				w, err := f.loadSession(string(name), tx.Bucket(sessionsBucket).Bucket(name))
				st.sessions++
				st.writes += w
				return err
			})
		})
	})
	return st, err
}

// initialise makes the buckets of a new file, which must be empty.
func (f *File) initialise(tx *bolt.Tx, fp string) error {
	if err := tx.ForEach(func([]byte, *bolt.Bucket) error { return errNotStore }); err != nil {
		return fmt.Errorf("file store %s: a bbolt database, but not an inventory-mock store (it has no meta bucket); nothing is served from it", f.path)
	}
	meta, err := tx.CreateBucket(metaBucket)
	if err != nil {
		return err
	}
	for k, v := range map[string]string{string(formatKey): fileFormat, string(fingerprintKey): fp, string(createdKey): time.Now().UTC().Format(time.RFC3339Nano)} {
		if err := meta.Put([]byte(k), []byte(v)); err != nil {
			return err
		}
	}
	_, err = tx.CreateBucket(sessionsBucket)
	return err
}

var errNotStore = errors.New("not a store")

// check refuses a file of another format or of other fixtures. precheck
// has run bbolt's consistency check.
func (f *File) check(tx *bolt.Tx, meta *bolt.Bucket, fp string) error {
	if got := string(meta.Get(formatKey)); got != fileFormat {
		return f.otherFormat(got)
	}
	if got := string(meta.Get(fingerprintKey)); got != fp {
		return fmt.Errorf("file store %s: made from other fixtures or another contract (fingerprint %.12s, these are %.12s); start with the --spec, --fixtures or --generate it was made with, or move it away to start from these fixtures", f.path, got, fp)
	}
	if tx.Bucket(sessionsBucket) == nil {
		return f.corrupted(errors.New("no sessions bucket"))
	}
	return nil
}

// otherFormat explains a file whose format is not fileFormat.
func (f *File) otherFormat(got string) error {
	v, err := strconv.Atoi(strings.TrimPrefix(got, fileFormatName))
	switch {
	case !strings.HasPrefix(got, fileFormatName) || err != nil:
		return f.corrupted(fmt.Errorf("its format is %q, which no inventory-mock writes", got))
	case v < fileFormatVersion:
		return fmt.Errorf("file store %s: written by an older version of inventory-mock (file format %d; this one reads format %d only); nothing is served from it: serve it with the version that wrote it, or move it away to start from the fixtures", f.path, v, fileFormatVersion)
	}
	return fmt.Errorf("file store %s: written by a newer version of inventory-mock (file format %d; this one reads format %d only); nothing is served from it: serve it with the version that wrote it, or move it away to start from the fixtures", f.path, v, fileFormatVersion)
}

func (f *File) corrupted(err error) error { return corrupted(f.path, err) }

// loadSession makes the named session in memory from its bucket, and
// returns its writes.
func (f *File) loadSession(name string, b *bolt.Bucket) (int64, error) {
	if b == nil {
		return 0, f.corrupted(fmt.Errorf("session %q is not a bucket", name))
	}
	changes := map[int64][]byte{}
	if r := b.Bucket(recordsBucket); r != nil {
		err := r.ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return f.corrupted(fmt.Errorf("session %q: a record key of %d bytes", name, len(k)))
			}
			rec, ok := unseal(name, k, v)
			if !ok {
				return f.corrupted(fmt.Errorf("session %q: the record of key %d fails its checksum", name, keyID(k)))
			}
			changes[keyID(k)] = bytes.Clone(rec) // bbolt's bytes live as long as the transaction
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	snap, err := f.restore(name, changes, nil)
	if err != nil {
		return 0, f.corrupted(err)
	}
	s := f.session(name)
	s.snap.Store(snap)
	c, err1 := sealedInt(name, b, sessionCreated)
	w, err2 := sealedInt(name, b, sessionWrites)
	if err := cmp.Or(err1, err2); err != nil {
		return 0, f.corrupted(err)
	}
	if c != 0 {
		s.created = time.Unix(0, c)
	}
	s.writes.Store(w)
	return w, nil
}

// crcTable is CRC-32C (Castagnoli), which CPUs compute in hardware.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// seal returns value after a CRC-32C of the session's name, the key and
// the value: a value read back changed, or under another key or session,
// fails unseal.
func seal(session string, key, value []byte) []byte {
	out := make([]byte, 4, 4+len(value))
	binary.BigEndian.PutUint32(out, sealSum(session, key, value))
	return append(out, value...)
}

// unseal returns the value of a sealed one, and whether its checksum
// holds.
func unseal(session string, key, sealed []byte) ([]byte, bool) {
	if len(sealed) < 4 {
		return nil, false
	}
	v := sealed[4:]
	return v, binary.BigEndian.Uint32(sealed) == sealSum(session, key, v)
}

func sealSum(session string, key, value []byte) uint32 {
	var n [8]byte
	binary.BigEndian.PutUint32(n[:4], uint32(len(session)))
	binary.BigEndian.PutUint32(n[4:], uint32(len(key)))
	c := crc32.Update(0, crcTable, n[:])
	c = crc32.Update(c, crcTable, []byte(session))
	c = crc32.Update(c, crcTable, key)
	return crc32.Update(c, crcTable, value)
}

// sealedInt reads a sealed 8-byte integer of the session's bucket; 0 if
// there is none.
func sealedInt(session string, b *bolt.Bucket, key []byte) (int64, error) {
	v := b.Get(key)
	if v == nil {
		return 0, nil
	}
	n, ok := unseal(session, key, v)
	if !ok || len(n) != 8 {
		return 0, fmt.Errorf("session %q: its value %q fails its checksum", session, key)
	}
	return int64(binary.BigEndian.Uint64(n)), nil
}

// putSealedInt writes a sealed 8-byte integer in the session's bucket.
func putSealedInt(session string, b *bolt.Bucket, key []byte, n int64) error {
	return b.Put(key, seal(session, key, binary.BigEndian.AppendUint64(nil, uint64(n))))
}

// idKey is the key of record id in a bucket: big-endian, with the sign bit
// flipped so that the keys sort as the ids do.
func idKey(id int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(id)^(1<<63))
}

func keyID(k []byte) int64 { return int64(binary.BigEndian.Uint64(k) ^ (1 << 63)) }

// Update applies change to the session's latest record of id, under the
// session's write lock, queues the result and returns once it is in the
// file.
func (f *File) Update(_ context.Context, session string, id int64, change func(fixtures.Record) (fixtures.Record, error)) (fixtures.Record, error) {
	pos, ok := f.find(id)
	if !ok {
		return fixtures.Record{}, ErrNotFound
	}
	if err := f.err(); err != nil {
		return fixtures.Record{}, err
	}
	s := f.session(session)
	s.mu.Lock()
	head := cmp.Or(s.head, s.snap.Load()) // the latest state, durable or not
	old := head.record(pos)
	rec, err := change(fixtures.Record{ID: id, JSON: old})
	if err != nil {
		s.mu.Unlock()
		return fixtures.Record{}, err
	}
	next := head
	if !bytes.Equal(rec.JSON, old) {
		next = head.with(pos, rec.JSON)
	}
	s.head = next
	created := s.created
	done := f.enqueue(fileOp{
		apply: func(tx *bolt.Tx) error {
			r, err := recordsOf(tx, session, created)
			if err != nil {
				return err
			}
			k := idKey(id)
			return r.Put(k, seal(session, k, rec.JSON))
		},
		publish: func() { publish(s, next, 1) },
	})
	s.mu.Unlock()
	if err := <-done; err != nil {
		return fixtures.Record{}, err
	}
	return rec, nil
}

// publish makes a committed snapshot the session's, and lets go of its
// head if nothing newer is queued. writes < 0 resets the count.
func publish(s *session, snap *snapshot, writes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.head == snap {
		s.head = nil
	}
	s.snap.Store(snap)
	if writes < 0 {
		s.writes.Store(0)
	} else {
		s.writes.Add(writes)
	}
}

// recordsOf counts a write of the session and returns the bucket of its
// records, making the session's bucket, with when it was created, if it
// is new. The count was checked at start, and only this store has written
// it since.
func recordsOf(tx *bolt.Tx, session string, created time.Time) (*bolt.Bucket, error) {
	all := tx.Bucket(sessionsBucket)
	b := all.Bucket([]byte(session))
	if b == nil {
		var err error
		if b, err = all.CreateBucket([]byte(session)); err != nil {
			return nil, err
		}
		if err := putSealedInt(session, b, sessionCreated, created.UnixNano()); err != nil {
			return nil, err
		}
	}
	n, _ := sealedInt(session, b, sessionWrites)
	if err := putSealedInt(session, b, sessionWrites, n+1); err != nil {
		return nil, err
	}
	return b.CreateBucketIfNotExists(recordsBucket)
}

// Reset puts the session back to the fixtures, in the file and then in
// memory.
func (f *File) Reset(_ context.Context, session string) error {
	if err := f.err(); err != nil {
		return err
	}
	s := f.session(session)
	s.mu.Lock()
	s.head = f.seed
	seed := f.seed
	done := f.enqueue(fileOp{
		apply: func(tx *bolt.Tx) error {
			b := tx.Bucket(sessionsBucket).Bucket([]byte(session))
			if b == nil {
				return nil
			}
			if err := b.DeleteBucket(recordsBucket); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
				return err
			}
			return b.Delete(sessionWrites)
		},
		publish: func() { publish(s, seed, -1) },
	})
	s.mu.Unlock()
	return <-done
}

// Drop forgets a session, in memory and then in the file; the default one
// is reset instead.
func (f *File) Drop(ctx context.Context, session string) error {
	if session == DefaultSession {
		return f.Reset(ctx, session)
	}
	if err := f.err(); err != nil {
		return err
	}
	f.Memory.Drop(ctx, session) // calls dropLater
	return <-f.enqueue(fileOp{})
}

// dropLater queues the removal of a session Memory has dropped: evicted,
// idle, or by Drop. It is called with f.Memory.mu held, and does not block.
func (f *File) dropLater(name string) {
	f.enqueue(fileOp{apply: func(tx *bolt.Tx) error {
		err := tx.Bucket(sessionsBucket).DeleteBucket([]byte(name))
		if errors.Is(err, bolterrors.ErrBucketNotFound) {
			return nil
		}
		return err
	}})
}

// Health reports a commit that failed.
func (f *File) Health(context.Context) error { return f.err() }

// err returns the error of the commit that failed, if one did.
func (f *File) err() error {
	if err := f.failed.Load(); err != nil {
		return *err
	}
	return nil
}

// enqueue adds op to the next commit, and returns the channel that
// receives its outcome. It never blocks. After Close, op fails at once.
func (f *File) enqueue(op fileOp) <-chan error {
	op.done = make(chan error, 1)
	if !f.ops.push(op) {
		op.done <- fmt.Errorf("%w: file store %s: closed", ErrUnavailable, f.path)
	}
	return op.done
}

// commit writes the queue to the file, one transaction per batch of at
// most maxBatch, until Close and the queue is empty.
func (f *File) commit() {
	defer close(f.stopped)
	for range f.ops.wake {
		for batch := f.ops.take(maxBatch); len(batch) > 0; batch = f.ops.take(maxBatch) {
			start := time.Now()
			f.write(batch)
			f.gather(len(batch), time.Since(start))
		}
	}
}

// slowCommit is the commit time past which the committer gathers writes
// before the next commit: a sync that slow is worth sharing.
const slowCommit = 300 * time.Microsecond

// gather waits, after a slow commit of last operations, until the queue
// holds as many as were queued during it plus the writers it has just
// answered (who come back with their next writes), or half the commit's
// time has passed. With 32 writers and a slow disk, commits then carry
// all 32 writes instead of alternating between two halves; a lone writer
// never waits, since the queue holds it as soon as it is back.
func (f *File) gather(last int, took time.Duration) {
	if took < slowCommit {
		return
	}
	target := f.ops.len() + last
	timer := time.NewTimer(took / 2)
	defer timer.Stop()
	for f.ops.len() < target {
		select {
		case _, open := <-f.ops.wake:
			if !open { // closed: commit what is left at once
				return
			}
		case <-timer.C:
			return
		}
	}
}

// write commits one batch, then publishes it and tells its waiters.
func (f *File) write(batch []fileOp) {
	err := f.err()
	if err == nil {
		err = f.db.Update(func(tx *bolt.Tx) error {
			for _, op := range batch {
				if op.apply == nil {
					continue
				}
				if err := op.apply(tx); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			err = fmt.Errorf("%w: file store %s: a write failed (%v); writes are refused until the mock restarts", ErrUnavailable, f.path, err)
			f.failed.Store(&err)
			f.opts.Logger.Error("file store: a commit failed; refusing writes until restarted", "file", f.path, "error", err)
		}
	}
	for _, op := range batch {
		if err == nil && op.publish != nil {
			op.publish()
		}
		op.done <- err
	}
}

// Close commits what is queued and closes the file.
func (f *File) Close() error {
	var err error
	f.once.Do(func() {
		f.ops.close()
		<-f.stopped
		f.Memory.Close()
		err = f.db.Close()
	})
	return err
}
