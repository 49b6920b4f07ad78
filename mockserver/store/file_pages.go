package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
)

// A boltMeta is what a bbolt meta page says of the database: its page
// size and the high-water mark of its last commit. bbolt maps the file
// into memory and reads any page its meta names without looking at the
// file's size: in a file cut short, that read is past the end of the file,
// a SIGBUS no recover catches. checkPages reads the meta pages itself, with
// plain reads, and refuses such a file before bbolt opens it.
type boltMeta struct {
	pageSize uint32
	root     uint64 // the root bucket's page
	freelist uint64 // the freelist's page; noFreelist: none
	pgid     uint64 // the high-water mark: pages 0 to pgid-1 are in use
	txid     uint64
}

// The bbolt file format (go.etcd.io/bbolt/internal/common): a page starts
// with a 16-byte header (id, flags, count, overflow); a meta page's body is
// magic, version, page size, flags, the root bucket (page, sequence),
// freelist, pgid, txid and an FNV-64a checksum of the fields before it, in
// the machine's byte order.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16
	metaSize         = 64
	freelistPageFlag = 0x10
	noFreelist       = ^uint64(0)
)

// parseMeta reads the meta page at the start of b, or says why it is not
// a valid one.
func parseMeta(b []byte) (boltMeta, error) {
	if len(b) < pageHeaderSize+metaSize {
		return boltMeta{}, errors.New("cut short")
	}
	m := b[pageHeaderSize : pageHeaderSize+metaSize]
	le := binary.NativeEndian
	switch {
	case le.Uint32(m[0:]) != boltMagic:
		return boltMeta{}, errors.New("no bbolt magic number")
	case le.Uint32(m[4:]) != boltVersion:
		return boltMeta{}, fmt.Errorf("bbolt format version %d, not %d", le.Uint32(m[4:]), boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:56])
	if h.Sum64() != le.Uint64(m[56:]) {
		return boltMeta{}, errors.New("checksum mismatch")
	}
	return boltMeta{pageSize: le.Uint32(m[8:]), root: le.Uint64(m[16:]), freelist: le.Uint64(m[32:]), pgid: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}, nil
}

// checkPages checks, with plain reads, that the file at path is a bbolt
// database whose last commit lies wholly inside the file: its meta pages
// are valid, and the file holds every page up to the high-water mark of
// the meta bbolt would use, with the root and the freelist below it. It
// refuses a file cut short on any boundary.
func checkPages(path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("file store %s: %w", path, err)
	}
	defer f.Close()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("file store %s: not a store file, or corrupted (%s); nothing is served from it: move it away to start from the fixtures", path, fmt.Sprintf(format, args...))
	}
	read := func(off int64, n int) []byte {
		b := make([]byte, n)
		k, _ := f.ReadAt(b, off)
		return b[:k]
	}
	// The first meta page gives the page size; failing that, the second,
	// looked for where bbolt looks for it.
	m0, err0 := parseMeta(read(0, pageHeaderSize+metaSize))
	pageSize := int64(m0.pageSize)
	if err0 != nil {
		for i := range 15 {
			off := int64(1024) << i
			if off >= size {
				break
			}
			if m, err := parseMeta(read(off, pageHeaderSize+metaSize)); err == nil && int64(m.pageSize) == off {
				pageSize = off
				break
			}
		}
	}
	if pageSize < 1024 || pageSize&(pageSize-1) != 0 {
		if size < 2*4096 {
			return bad("%d bytes, and no valid meta page: %v; truncated?", size, err0)
		}
		return bad("no valid meta page: %v", err0)
	}
	m1, err1 := parseMeta(read(pageSize, pageHeaderSize+metaSize))
	if err1 == nil && int64(m1.pageSize) != pageSize {
		err1 = fmt.Errorf("page size %d, not %d", m1.pageSize, pageSize)
	}
	if err0 == nil && int64(m0.pageSize) != pageSize {
		err0 = fmt.Errorf("page size %d, not %d", m0.pageSize, pageSize)
	}
	var m boltMeta
	switch {
	case err0 != nil && err1 != nil:
		return bad("neither meta page is valid: %v; %v", err0, err1)
	case err1 != nil || (err0 == nil && m0.txid >= m1.txid):
		m = m0
	default:
		m = m1
	}
	need := int64(m.pgid) * pageSize
	switch {
	case m.pgid < 2 || need/pageSize != int64(m.pgid):
		return bad("its meta page gives %d pages", m.pgid)
	case size < need:
		return fmt.Errorf("file store %s: truncated: %d bytes, but its last commit (transaction %d) needs %d (%d pages of %d bytes); nothing is served from it: restore the whole file, or move it away to start from the fixtures",
			path, size, m.txid, need, m.pgid, pageSize)
	case m.root < 2 || m.root >= m.pgid:
		return bad("its root page %d is outside pages 2 to %d", m.root, m.pgid-1)
	case m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.pgid):
		return bad("its freelist page %d is outside pages 2 to %d", m.freelist, m.pgid-1)
	}
	if m.freelist != noFreelist {
		h := read(int64(m.freelist)*pageSize, pageHeaderSize)
		if len(h) < pageHeaderSize {
			return bad("its freelist page %d cannot be read", m.freelist)
		}
		le := binary.NativeEndian
		id, flags, overflow := le.Uint64(h[0:]), le.Uint16(h[8:]), uint64(le.Uint32(h[12:]))
		if id != m.freelist || flags&freelistPageFlag == 0 || m.freelist+overflow >= m.pgid {
			return bad("its freelist page %d is not a freelist page inside the file", m.freelist)
		}
	}
	return nil
}
