package store

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
)

// A List is the records of a session at one moment, encoded as a JSON
// array. It is never modified.
type List struct{ *snapshot }

// A snapshot is what a List shows: chunks of encoded records, so that a
// write copies one chunk, not the list. It is never modified.
type snapshot struct {
	chunks table
	size   int // bytes of the whole array
	n      int // records
	// flat is the array in one piece, made the first time a list past
	// writeBufferSize and at most maxFlat is written; a list past maxFlat
	// is never joined.
	flat flat
}

// record returns the record at position pos; the caller must not modify
// it.
func (s *snapshot) record(pos int) []byte {
	per := chunkSize(s.n)
	return s.chunks.at(pos / per).record(pos % per)
}

// with returns a snapshot that shares every chunk but pos's, whose record
// pos is r.
func (s *snapshot) with(pos int, r []byte) *snapshot {
	per := chunkSize(s.n)
	c, i := pos/per, pos%per
	old := s.chunks.at(c)
	return &snapshot{chunks: s.chunks.with(c, old.with(i, r)), size: s.size + len(r) - len(old.record(i)), n: s.n}
}

// withAll returns a snapshot with the records of changes, by position, in
// place of theirs, rebuilding each chunk with a change once.
func (s *snapshot) withAll(changes map[int][]byte) *snapshot {
	if len(changes) == 0 {
		return s
	}
	per := chunkSize(s.n)
	byChunk := map[int][][]byte{} // the records of each chunk with a change
	for pos, r := range changes {
		c := pos / per
		if byChunk[c] == nil {
			old := s.chunks.at(c)
			for i := range old.len() {
				byChunk[c] = append(byChunk[c], old.record(i))
			}
		}
		byChunk[c][pos%per] = r
	}
	t := s.chunks.withAll(byChunk)
	return &snapshot{chunks: t, size: listSize(t), n: s.n}
}

// A flat is a list's JSON array in one piece: written in one Write, the
// kernel takes it in one system call, where pieces of writeBufferSize
// cost a call each (a list of 10,000 pets, 430 KB, went out at 0.57 of a
// bare handler's rate in pieces of 64 KiB, and at 0.78 through a 1 MiB
// buffer, the rest being the copy into it).
type flat struct {
	once sync.Once
	b    []byte
}

// maxFlat is the largest list kept in one piece beside its chunks: about
// 190,000 pets. Past it, the copy would be as large as the store's.
const maxFlat = 8 << 20

// Len returns the number of records.
func (l List) Len() int { return l.n }

// Size returns the length in bytes of the JSON array WriteTo writes.
func (l List) Size() int { return l.size }

// WriteTo writes the list as a JSON array followed by a newline, in
// writes of writeBufferSize bytes gathered in a pooled buffer (a chunk
// larger than that in one): one write for a small list, whatever its
// chunks.
func (l List) WriteTo(w io.Writer) (int64, error) {
	if l.size > writeBufferSize && l.size <= maxFlat {
		n, err := w.Write(l.flatBytes())
		return int64(n), err
	}
	return l.writeBuffered(w)
}

// writeBuffered writes the list through a pooled writeBufferSize buffer.
func (l List) writeBuffered(w io.Writer) (int64, error) {
	bw := writeBuffers.Get().(*bufio.Writer)
	bw.Reset(w)
	sep := bracket
	for c := range l.chunks.all() {
		if len(c.data) > 0 {
			bw.Write(sep)
			bw.Write(c.data)
			sep = comma
		}
	}
	if l.chunks.len() == 0 || l.n == 0 {
		bw.Write(sep)
	}
	bw.Write(closing)
	err := bw.Flush() // the first error of any write; what failed stays buffered
	n := int64(l.size - bw.Buffered())
	bw.Reset(nil)
	writeBuffers.Put(bw)
	return n, err
}

// writeBufferSize is the bytes of a list WriteTo gathers for one write.
const writeBufferSize = 64 << 10

var writeBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, writeBufferSize) }}

var (
	comma   = []byte{','}
	closing = []byte("]\n")
)

// Bytes returns the list as one JSON array, for callers that need it
// whole; serving uses WriteTo. The caller must not modify it: it may be
// the piece WriteTo serves.
func (l List) Bytes() []byte {
	if l.size <= maxFlat {
		return l.flatBytes()
	}
	return l.join()
}

// flatBytes returns the list in one piece, joined the first time any List
// of its snapshot asks.
func (l List) flatBytes() []byte {
	l.flat.once.Do(func() { l.flat.b = l.join() })
	return l.flat.b
}

// join returns the list's array in a new buffer.
func (l List) join() []byte {
	b := bytes.NewBuffer(make([]byte, 0, l.size))
	l.writeBuffered(b)
	return b.Bytes()
}

// All yields the encoded records in order.
func (l List) All() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for c := range l.chunks.all() {
			for i := range c.len() {
				if !yield(c.record(i)) {
					return
				}
			}
		}
	}
}

// NewList makes a List of encoded records, given in ascending key order,
// in chunks of chunkSize(len(records)).
func NewList(records [][]byte) List {
	per := chunkSize(len(records))
	cs := make([]*chunk, 0, (len(records)+per-1)/per)
	for c := range slices.Chunk(records, per) {
		cs = append(cs, newChunk(c))
	}
	t := newTable(cs)
	return List{&snapshot{chunks: t, size: listSize(t), n: len(records)}}
}

// maxChunkSize is the most records in one chunk of a List: a write to one
// record of a million copies one chunk (about 6 KB), one page of the
// table and its index (about 1.5 KB), never the whole list.
const maxChunkSize = 128

// chunkSize is the number of records in each chunk of a list of n: about
// the square root of n, from 16 to maxChunkSize, so that a write copies
// few records whatever the data set: 16 of 64 pets, 128 of 10,000 or
// more (a million pets are 7,813 chunks).
func chunkSize(n int) int {
	per := 16
	for per < maxChunkSize && per*per < n {
		per *= 2
	}
	return per
}

// A table is the chunks of a list in order, held in pages of pageSize
// chunks, so that replacing one chunk copies one page and the index of
// pages, not a pointer per chunk. A table is never modified: with makes a
// new one that shares what did not change.
type table struct{ pages [][]*chunk }

// pageSize is the number of chunks in a page of a table.
const pageSize = 128

func newTable(cs []*chunk) table {
	return table{slices.Collect(slices.Chunk(cs, pageSize))}
}

func (t table) len() int {
	if len(t.pages) == 0 {
		return 0
	}
	return (len(t.pages)-1)*pageSize + len(t.pages[len(t.pages)-1])
}

func (t table) at(i int) *chunk { return t.pages[i/pageSize][i%pageSize] }

func (t table) all() iter.Seq[*chunk] {
	return func(yield func(*chunk) bool) {
		for _, p := range t.pages {
			for _, c := range p {
				if !yield(c) {
					return
				}
			}
		}
	}
}

// with returns a table with chunk i replaced by c.
func (t table) with(i int, c *chunk) table {
	next := table{slices.Clone(t.pages)}
	p := i / pageSize
	next.pages[p] = slices.Clone(next.pages[p])
	next.pages[p][i%pageSize] = c
	return next
}

// withAll returns a table with a chunk of each index's records in changes
// in place of the one at that index, copying each page with a change once.
func (t table) withAll(changes map[int][][]byte) table {
	next := table{slices.Clone(t.pages)}
	copied := map[int]bool{}
	for i, records := range changes {
		p := i / pageSize
		if !copied[p] {
			next.pages[p] = slices.Clone(next.pages[p])
			copied[p] = true
		}
		next.pages[p][i%pageSize] = newChunk(records)
	}
	return next
}

// A chunk is up to maxChunkSize encoded records, separated by commas.
type chunk struct {
	data []byte  // record 0, ",", record 1, ...
	offs []int32 // offs[i]: where record i starts; offs[len]: len(data)+1
	gz   atomic.Pointer[deflated]
}

// deflated is a chunk compressed as one part of a gzip stream.
type deflated struct {
	first bool   // compressed with the array's "[" before it, else ","
	part  []byte // raw deflate, ending in a sync flush: parts join into one stream
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
func listSize(chunks table) int {
	size, nonEmpty := 0, 0
	for c := range chunks.all() {
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

// GzipSize returns the length of what WriteGzipTo writes, compressing the
// chunks not compressed yet. A chunk is compressed once and kept with it,
// so a write costs the compression of one chunk, not of the list.
func (l List) GzipSize() int {
	n, first := len(gzipHeader)+len(gzipTail)+8, true
	for c := range l.chunks.all() {
		if len(c.data) > 0 {
			n += len(c.deflate(first))
			first = false
		}
	}
	if first { // no record: the whole "[]\n" is one part
		return len(gzipHeader) + len(emptyList) + 8
	}
	return n
}

// WriteGzipTo writes the list gzip-compressed, as a client that sends
// Accept-Encoding: gzip reads it: one gzip member whose deflate stream is
// the chunks' kept parts one after the other, then the closing bracket.
func (l List) WriteGzipTo(w io.Writer) (int64, error) {
	var total int64
	write := func(b []byte) error {
		n, err := w.Write(b)
		total += int64(n)
		return err
	}
	if err := write(gzipHeader); err != nil {
		return total, err
	}
	crc := crc32.NewIEEE()
	sep := bracket
	for c := range l.chunks.all() {
		if len(c.data) == 0 {
			continue
		}
		crc.Write(sep)
		crc.Write(c.data)
		if err := write(c.deflate(sep[0] == '[')); err != nil {
			return total, err
		}
		sep = comma
	}
	tail, end := gzipTail, closing
	if sep[0] == '[' { // no record: the whole "[]\n" is one part
		tail, end = emptyList, emptyArray
	}
	crc.Write(end)
	if err := write(tail); err != nil {
		return total, err
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], crc.Sum32())
	binary.LittleEndian.PutUint32(trailer[4:], uint32(l.size))
	err := write(trailer[:])
	return total, err
}

// gzipHeader starts a gzip member: deflate, no name, no time, unknown OS.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

var (
	bracket    = []byte{'['}
	emptyArray = []byte("[]\n")
	gzipTail   = finalPart(closing)
	emptyList  = finalPart(emptyArray)
)

// deflaters holds flate writers between compressions: a writer's state is
// large to make.
var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

// deflate returns the chunk compressed with its separator before it.
func (c *chunk) deflate(first bool) []byte {
	if d := c.gz.Load(); d != nil && d.first == first {
		return d.part
	}
	var buf bytes.Buffer
	buf.Grow(len(c.data) / 4)
	w := deflaters.Get().(*flate.Writer)
	w.Reset(&buf)
	if first {
		w.Write(bracket)
	} else {
		w.Write(comma)
	}
	w.Write(c.data)
	w.Flush() // a sync flush: the part ends on a byte boundary, not final
	deflaters.Put(w)
	c.gz.Store(&deflated{first: first, part: buf.Bytes()})
	return buf.Bytes()
}

// finalPart compresses the last bytes of a stream, its final block.
func finalPart(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}
