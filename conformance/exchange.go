package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// A Request is what a check sends, relative to the target's base URL.
type Request struct {
	Method string
	Path   string // such as "/inventory/3" or "/inventory?api_key=..."; appended to the base URL
	// Auth is the Authorization header. Empty means "Bearer <key>"; use
	// NoAuth to send none and emptyAuth for an empty one.
	Auth        string
	ContentType string // empty: application/json when there is a body
	Body        []byte // nil: no body
	// MaxBytes caps the response body below Config.MaxResponseBytes, for
	// answers that are one record; 0: the configured cap.
	MaxBytes int64

	restore bool // a restore: sent even after the run stopped, unless the target is gone
	ahead   bool // sent ahead of its check (Ahead): traced when the check takes it
}

// Values of Request.Auth that send no credential.
const (
	NoAuth    = "\x00none"  // no Authorization header
	emptyAuth = "\x00empty" // an Authorization header with an empty value
)

// An Exchange is one request the suite sent and what came back, kept so a
// failure can show both: the recorded exchange, the operation it
// addresses, and how long the suite waited on 429 answers before it.
type Exchange struct {
	exchange.Exchange
	Op     *spec.Operation // the operation the path and method address; nil if none
	Waited time.Duration   // waited on 429 answers before this one
	// Cause is the transport's error where the answer failed (Failure is
	// set): why a first call found no target, for a person to act on.
	Cause error

	secrets *Secrets // hide every secret wherever the exchange is shown
}

func waitFor(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// errStopped is the cause of a request the run's stop ended.
var errStopped = errors.New("the run stopped")

func first(s string, _ bool) string { return s }

// maxAttempts bounds the tries of a request answered 429.
const maxAttempts = 4

// maxOneWait bounds one wait on a 429.
const maxOneWait = 5 * time.Second

// retryAfter reads a Retry-After header (seconds or an HTTP date, RFC 9110
// section 10.2.3) as a wait between 100ms and maxOneWait; 500ms when it is
// absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	d := 500 * time.Millisecond
	v = strings.TrimSpace(v)
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		d = time.Duration(min(max(s, 0), int64(maxOneWait/time.Second)+1)) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = at.Sub(now)
	}
	return min(max(d, 100*time.Millisecond), maxOneWait)
}

// A budget bounds the response bytes all requests in flight read at once
// (decompressed): twice the largest cap, so that eight workers cannot each
// hold a cap at once. A read takes its buffer's size from the budget as
// the buffer grows, and gives it back when the body is read; the exchange
// then holds the body (a capped one only its first 4 KiB).
//
// Reads grow freely in the budget's first half. One read at a time, the
// one holding big, may grow into the second half: the others wait for big
// while they hold what they have, and the holder of big always finds room
// (the others hold at most the first half, it needs at most one cap), so
// no read waits forever.
type budget struct {
	mu   sync.Mutex // guards held
	held int64      // bytes taken now
	cap  int64      // one read's most (the largest cap, plus one byte)
	big  chan struct{}
	peak atomic.Int64 // the most held at once, for tests
}

func newBudget(maxRead int64) *budget {
	return &budget{cap: maxRead + 1, big: make(chan struct{}, 1)}
}

// size is the budget's bytes in all.
func (b *budget) size() int64 { return 2 * b.cap }

// read reads r until EOF or limit bytes, taking its buffer from the
// budget: first size bytes (or limit), then twice as much each time it is
// full, never past limit. A read that finds no room waits for it until
// ctx ends.
func (b *budget) read(ctx context.Context, r io.Reader, limit, size int64) (int64, []byte, error) {
	var held int64
	hasBig := false
	defer func() {
		b.mu.Lock()
		b.held -= held
		b.mu.Unlock()
		if hasBig {
			<-b.big
		}
	}()
	take := func(n int64) error {
		for {
			b.mu.Lock()
			room := b.cap // the first half
			if hasBig {
				room = 2 * b.cap
			}
			if b.held+n <= room {
				b.held += n
				held += n
				if b.held > b.peak.Load() {
					b.peak.Store(b.held)
				}
				b.mu.Unlock()
				return nil
			}
			b.mu.Unlock()
			if hasBig { // cannot be: the holder of big has room
				return errors.New("the run's budget of bytes in flight is spent")
			}
			select {
			case b.big <- struct{}{}:
				hasBig = true
			case <-ctx.Done():
				return fmt.Errorf("waiting for room to read the body: %w", context.Cause(ctx))
			}
		}
	}
	first := min(limit, size, b.cap)
	if err := take(first); err != nil {
		return 0, nil, err
	}
	buf := make([]byte, 0, first)
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			n := min(limit, int64(2*cap(buf)), b.cap)
			if err := take(n - int64(cap(buf))); err != nil {
				return int64(len(buf)), buf, err
			}
			nb := make([]byte, len(buf), n)
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return int64(len(buf)), buf, nil
		}
		if err != nil {
			return int64(len(buf)), buf, err
		}
	}
	return int64(len(buf)), buf, nil
}

// byteSize renders n bytes as MiB or KiB where exact.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Curl renders the request as a curl command line, the key as
// $INVENTORY_API_KEY and each extra header's value as its variable.
func (x *Exchange) Curl() string { return exchange.Curl(&x.Exchange, x.secrets.Redactor()) }

// Got describes the response, every secret hidden.
func (x *Exchange) Got() string { return x.Exchange.Got(x.secrets.Redactor()) }

// Want renders a failure message: what the contract wanted, the request as
// curl and what came back.
func (x *Exchange) Want(format string, args ...any) string {
	return fmt.Sprintf("contract: %s\nrequest:  %s\ngot:      %s\n", fmt.Sprintf(format, args...), x.Curl(), x.Got())
}
