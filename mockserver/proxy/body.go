package proxy

import (
	"io"
	"sync"
	"sync/atomic"
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
	// ex takes buf's bytes from the proxy's budget; over says the budget
	// was spent when buf had to grow: buf is dropped and the body passes
	// unchecked.
	ex   *pending
	over bool
}

func (c *capture) Read(p []byte) (int, error) {
	n, err := c.body.Read(p)
	if n > 0 {
		c.n += int64(n)
		if room := c.limit - len(c.buf); c.keep && room > 0 {
			m := min(n, room)
			if len(c.buf)+m > cap(c.buf) {
				size := min(max(len(c.buf)+m, 2*cap(c.buf), 4<<10), c.limit)
				if !c.ex.take(int64(size - cap(c.buf))) {
					c.keep, c.over, c.buf = false, true, nil
					return n, err
				}
				buf := make([]byte, len(c.buf), size)
				copy(buf, c.buf)
				c.buf = buf
			}
			c.buf = append(c.buf, p[:m]...)
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

// A budget bounds the bytes every exchange holds for the checks at once:
// the bodies of requests and answers as captured, and the answers'
// decoded text. Taking from
// it never waits, so it never holds an exchange up: an exchange that
// finds it spent passes its body unchecked, with a warning.
type budget struct {
	size    int64
	held    atomic.Int64
	peak    atomic.Int64 // the most held at once, for tests
	refused atomic.Int64 // takes refused, for tests
}

// take takes n bytes, if they are left.
func (b *budget) take(n int64) bool {
	for {
		h := b.held.Load()
		if h+n > b.size {
			b.refused.Add(1)
			return false
		}
		if b.held.CompareAndSwap(h, h+n) {
			for p := b.peak.Load(); h+n > p && !b.peak.CompareAndSwap(p, h+n); p = b.peak.Load() {
			}
			return true
		}
	}
}

// take takes n bytes of the proxy's budget for the exchange, which gives
// them back when it is recorded.
func (ex *pending) take(n int64) bool {
	if ex.budget == nil || n <= 0 {
		return true
	}
	if !ex.budget.take(n) {
		return false
	}
	ex.held += n
	return true
}

// release gives back what the exchange took.
func (ex *pending) release() {
	if ex.budget != nil {
		ex.budget.held.Add(-ex.held)
		ex.held = 0
	}
}
