package proxy

import (
	"io"
	"net/http"
	"sync"
)

// A capture passes a body through while it keeps its first limit bytes
// for the checks, counts the whole, and notes how it ended.
type capture struct {
	body  io.ReadCloser
	limit int
	keep  bool   // append what passes to buf
	buf   []byte // the first limit bytes
	n     int64  // bytes read so far
	eof   bool   // the body ended normally
	err   error  // the body ended with this error
}

func (c *capture) Read(p []byte) (int, error) {
	n, err := c.body.Read(p)
	if n > 0 {
		c.n += int64(n)
		if room := c.limit - len(c.buf); c.keep && room > 0 {
			c.buf = append(c.buf, p[:min(n, room)]...)
		}
	}
	switch {
	case err == io.EOF:
		c.eof = true
	case err != nil && c.err == nil:
		c.err = err
	}
	return n, err
}

func (c *capture) Close() error { return c.body.Close() }

// readUpTo reads r until EOF or until it has more than limit bytes, with
// a first buffer of size bytes. It returns what it read: limit+1 bytes at
// most.
func readUpTo(r io.Reader, limit int, size int64) ([]byte, error) {
	b := make([]byte, 0, min(max(size, 0), int64(limit))+1)
	for len(b) <= limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(cap(b), limit+1)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// A streamBody is a request body read in part for the checks, the rest
// still to come from the client.
type streamBody struct {
	io.Reader
	io.Closer
}

// bufferPool lends the ReverseProxy its copy buffers, instead of a new
// 32 KiB buffer per request.
type bufferPool struct{ pool sync.Pool }

func newBufferPool() *bufferPool {
	return &bufferPool{pool: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}
}

func (p *bufferPool) Get() []byte  { return *p.pool.Get().(*[]byte) }
func (p *bufferPool) Put(b []byte) { p.pool.Put(&b) }

// noBody reports whether a request has no body to read.
func noBody(r *http.Request) bool {
	return r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0
}
