package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
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

// Send makes the request and records the exchange. It never fails the
// check: transport errors are in the Exchange. A read-only check's
// request sent ahead (Ahead) is answered from there, once.
func (t *Target) Send(ctx context.Context, r Request) *Exchange {
	if x := t.ahead.take(r); x != nil {
		t.trace(x)
		return x
	}
	return t.send(ctx, r)
}

// send makes the request; see Send.
func (t *Target) send(ctx context.Context, r Request) *Exchange {
	x := &Exchange{Exchange: exchange.Exchange{Time: time.Now(), Method: r.Method, URL: t.base.String() + r.Path, Header: http.Header{}, Body: r.Body, BodySize: int64(len(r.Body))}, secrets: t.secrets}
	x.Op = t.operation(r.Method, r.Path)
	x.Path = t.contract.BasePath + strings.SplitN(r.Path, "?", 2)[0]
	for name, vs := range t.cfg.Headers {
		x.Header[http.CanonicalHeaderKey(name)] = slices.Clone(vs)
	}
	key, keyGen := t.keys.current()
	switch r.Auth {
	case "":
		x.Header.Set("Authorization", "Bearer "+key)
	case NoAuth:
		x.Header.Del("Authorization")
	case emptyAuth:
		x.Header["Authorization"] = []string{""}
	default:
		x.Header.Set("Authorization", r.Auth)
	}
	if r.Body != nil {
		ct := r.ContentType
		if ct == "" {
			ct = "application/json"
		}
		x.Header.Set("Content-Type", ct)
	}
	x.Header.Set("Accept", "application/json")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		t.lists.wrote() // whatever answer comes, a list read before may be stale now
	}
	if reason, gone := t.stop.reason(); reason != "" && (!r.restore || gone) {
		x.Failure, x.Err = exchange.FailureNoAnswer, "not sent: the run stopped ("+reason+")"
		x.Cause = errStopped
		return x
	}
	if !r.restore {
		// The run's stop (a gone target, --max-run-time, an interrupt)
		// ends a request in flight; a restore is left to finish.
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		stopAfter := context.AfterFunc(t.stop.ctx, func() { cancel(errStopped) })
		defer stopAfter()
		defer cancel(nil)
	}
	limit := t.cfg.MaxResponseBytes
	if r.MaxBytes > 0 {
		limit = min(limit, r.MaxBytes)
	}
	refreshed := false
	for attempt := 1; ; attempt++ {
		if d := time.Until(t.paused()); d > 0 {
			// Another request was answered 429: this one waits too.
			if !waitFor(ctx, d) {
				x.Failure, x.Err, x.Cause = exchange.FailureNoAnswer, "not sent: "+context.Cause(ctx).Error(), context.Cause(ctx)
				return x
			}
			x.Waited += d
		}
		var body io.Reader
		if r.Body != nil {
			body = bytes.NewReader(r.Body)
		}
		req, err := http.NewRequestWithContext(ctx, r.Method, x.URL, body)
		if err != nil {
			x.Failure, x.Err, x.Cause = exchange.FailureNoAnswer, err.Error(), err
			return x
		}
		req.Header = x.Header.Clone()
		t.roundTrip(req, x, limit)
		if x.Failure == exchange.FailureNoAnswer && context.Cause(ctx) == errStopped {
			x.Err = "stopped: the run stopped (" + first(t.stop.reason()) + ")"
			x.Cause = errStopped
		}
		t.stop.answered(x, ctx.Err() != nil)
		if r.Auth == "" && x.Status == http.StatusUnauthorized && !refreshed {
			// A key that worked and is refused now may have expired: the
			// key command gives a new one, and the request goes again.
			if k, g, ok := t.keys.refresh(ctx, keyGen); ok {
				refreshed, key, keyGen = true, k, g
				x.Header.Set("Authorization", "Bearer "+key)
				continue
			}
		}
		if r.Auth == "" && x.Status != 0 && x.Status != http.StatusUnauthorized {
			t.keys.worked.Store(true)
		}
		if x.Failure != "" || x.Status != http.StatusTooManyRequests || attempt >= maxAttempts {
			break
		}
		// A rate limit is the target's right, not a contract failure: the
		// run pauses and the request goes again, within the allowance.
		now := time.Now()
		to, ok := t.pause(now, retryAfter(x.RespHeader.Get("Retry-After"), now))
		if !ok {
			break
		}
		if !waitFor(ctx, to.Sub(now)) {
			break
		}
		x.Waited += to.Sub(now)
	}
	if !r.ahead {
		t.trace(x)
	}
	return x
}

// waitFor waits d, or until ctx ends; it reports whether d passed.
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

// Waited returns how long the run has waited on 429 answers.
func (t *Target) Waited() time.Duration {
	t.waitMu.Lock()
	defer t.waitMu.Unlock()
	return t.waited
}

// pause pauses the run's requests for d from now, on a 429, and returns
// when they may go again. Only the time it adds to a pause already under
// way is taken from the allowance (--max-retry-wait), so that requests in
// flight at once share one wait. It returns false once the allowance is
// spent.
func (t *Target) pause(now time.Time, d time.Duration) (time.Time, bool) {
	t.waitMu.Lock()
	defer t.waitMu.Unlock()
	to := now.Add(d)
	from := t.pausedTo
	if from.Before(now) {
		from = now
	}
	if !to.After(from) {
		return t.pausedTo, true // already paused as long
	}
	left := t.cfg.MaxRetryWait - t.waited
	if left <= 0 {
		return now, false
	}
	add := min(to.Sub(from), left)
	t.waited += add
	t.pausedTo = from.Add(add)
	return t.pausedTo, true
}

// paused returns when the run's requests may go again after a 429.
func (t *Target) paused() time.Time {
	t.waitMu.Lock()
	defer t.waitMu.Unlock()
	return t.pausedTo
}

// roundTrip makes one attempt of req and records it in x, reading at most
// limit bytes of the body and counting them against the run's cap. Only
// the list's 2xx answer may be long: any other answer (an Error, one
// record) is read up to ItemMaxBytes, whatever limit says, since its
// status is known before its body is read.
func (t *Target) roundTrip(req *http.Request, x *Exchange, limit int64) {
	start := time.Now()
	x.Failure, x.Err, x.Cause = "", "", nil
	x.Status, x.RespHeader, x.RespBody, x.RespSize = 0, nil, nil, 0
	resp, err := t.client.Do(req)
	if err != nil {
		x.Elapsed = time.Since(start)
		x.Failure, x.Err, x.Cause = exchange.FailureNoAnswer, err.Error(), err
		return
	}
	defer resp.Body.Close()
	x.Status = resp.StatusCode
	x.RespHeader = resp.Header
	t.answers.Count(x.Op.Name(), x.Status)
	if x.Op != t.inv.List || x.Status/100 != 2 {
		limit = min(limit, ItemMaxBytes)
	}
	t.readBody(req.Context(), resp, limit, x)
	x.Elapsed = time.Since(start)
}

// readBody reads at most limit bytes of the body into x, and no more than
// the run has left, within the run's budget of bytes in flight. A body
// that ends early is a cut answer; one that is longer is cut at the cap
// and marked capped.
func (t *Target) readBody(ctx context.Context, resp *http.Response, limit int64, x *Exchange) {
	left := t.cfg.MaxRunBytes - t.read.Load()
	if left <= 0 {
		x.Failure, x.Err = exchange.FailureCapped, fmt.Sprintf("response body too large: the run has read %s of responses, its cap (--max-run-bytes)", byteSize(t.cfg.MaxRunBytes))
		return
	}
	n := min(limit, left)
	size := int64(64 << 10) // the first buffer where the length is unknown
	if resp.ContentLength >= 0 && !resp.Uncompressed {
		size = resp.ContentLength + 1 // the transport reads no further
	}
	got, b, err := t.inFlight.read(ctx, resp.Body, n+1, size)
	t.read.Add(got)
	x.RespBody, x.RespSize = b, got
	switch {
	case err != nil:
		x.Failure, x.Err, x.Cause = exchange.FailureCut, err.Error(), err
	case got > n:
		// Only the start is kept, the key hidden before the cut, in a
		// copy of its own: the capped buffer is not kept alive by it.
		x.RespBody = slices.Clone(t.Redactor().Cut(b[:min(len(b), 64<<10)], 4096))
		x.Failure, x.Err = exchange.FailureCapped, fmt.Sprintf("response body too large: the run has read %s of responses, its cap (--max-run-bytes)", byteSize(t.cfg.MaxRunBytes))
		switch {
		case n == limit && limit == ItemMaxBytes && limit < t.cfg.MaxResponseBytes:
			x.Err = fmt.Sprintf("response body too large: more than %s (the cap on an answer other than the list's: one record or an Error)", byteSize(limit))
		case n == limit:
			x.Err = fmt.Sprintf("response body too large: more than %s (the cap per response, --max-response-bytes)", byteSize(limit))
		}
	}
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

// trace writes the exchange to the verbose trace, if there is one.
func (t *Target) trace(x *Exchange) {
	if t.cfg.Trace == nil {
		return
	}
	t.traceMu.Lock()
	defer t.traceMu.Unlock()
	fmt.Fprintf(t.cfg.Trace, "→ %s\n← %s\n", x.Curl(), x.Got())
}

// operation returns the contract operation method and path address, or nil.
func (t *Target) operation(method, path string) *spec.Operation {
	path, _, _ = strings.Cut(path, "?")
	op, _, _ := t.contract.Match(method, t.contract.BasePath+path)
	return op
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
