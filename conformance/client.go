package conformance

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// A Client sends the suite's requests to the target and records each
// exchange. It sets the key (asking the key command again when a key that
// worked is refused) and the extra headers, caps the response bodies (per
// answer, in flight, per run), pauses every request of the run when one
// is answered 429, counts the answers for coverage and traces each
// exchange (--verbose). Once the run stops (Target.Halt) it sends nothing
// but restores, and those only while the target answers. It is safe for
// concurrent use.
type Client struct {
	cfg      Config
	base     *url.URL
	http     *http.Client
	contract *spec.Contract
	inv      *spec.Inventory
	secrets  *Secrets
	keys     *keySource
	stop     *stopper // the run's: a stopped run sends only restores
	ahead    ahead
	writes   atomic.Uint64 // requests sent that could write, whatever their answer

	read     atomic.Int64  // decompressed response bytes read so far
	inFlight *budget       // bounds the response bytes being read at once
	answers  *spec.Answers // answers by operation and status, for coverage

	waitMu sync.Mutex    // guards spent and pausedTo
	spent  time.Duration // the run's time paused on 429 answers, counted once however many requests waited
	// pausedTo is when requests may go again: a 429 pauses every request
	// of the run, so that concurrent workers back off together.
	pausedTo time.Time

	traceMu sync.Mutex // serialises writes to cfg.Trace
}

func newClient(cfg Config, contract *spec.Contract, inv *spec.Inventory, base *url.URL, stop *stopper) (*Client, error) {
	c := &Client{cfg: cfg, base: base, http: cfg.Client, contract: contract, inv: inv, secrets: cfg.Secrets, stop: stop, answers: spec.NewAnswers(contract), inFlight: newBudget(cfg.MaxResponseBytes)}
	c.keys = &keySource{key: cfg.APIKey, command: cfg.KeyCommand, timeout: max(cfg.Timeout, 30*time.Second), secrets: cfg.Secrets}
	var err error
	if c.http == nil {
		c.http, err = newHTTPClient(cfg)
	}
	return c, err
}

// Key returns the API key in use.
func (c *Client) Key() string { k, _ := c.keys.current(); return k }

// BytesRead returns the decompressed response bytes read so far.
func (c *Client) BytesRead() int64 { return c.read.Load() }

// Send makes the request and records the exchange. It never fails the
// check: transport errors are in the Exchange. A read-only check's
// request sent ahead (Ahead) is answered from there, once.
func (c *Client) Send(ctx context.Context, r Request) *Exchange {
	if x := c.ahead.take(r); x != nil {
		c.trace(x)
		return x
	}
	return c.send(ctx, r)
}

func (c *Client) send(ctx context.Context, r Request) *Exchange {
	x := &Exchange{Exchange: exchange.Exchange{Time: time.Now(), Method: r.Method, URL: c.base.String() + r.Path, Header: http.Header{}, Body: r.Body, BodySize: int64(len(r.Body))}, secrets: c.secrets}
	path, _, _ := strings.Cut(r.Path, "?")
	x.Path = c.contract.BasePath + path
	x.Op, _, _ = c.contract.Match(r.Method, x.Path)
	for name, vs := range c.cfg.Headers {
		x.Header[http.CanonicalHeaderKey(name)] = slices.Clone(vs)
	}
	key, keyGen := c.keys.current()
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
		x.Header.Set("Content-Type", cmp.Or(r.ContentType, "application/json"))
	}
	x.Header.Set("Accept", "application/json")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		c.writes.Add(1) // whatever answer comes, a list read before may be stale now
	}
	if reason, gone := c.stop.reason(); reason != "" && (!r.restore || gone) {
		x.Failure, x.Err = exchange.FailureNoAnswer, "not sent: the run stopped ("+reason+")"
		x.Cause = errStopped
		return x
	}
	if !r.restore {
		// The run's stop (a gone target, --max-run-time, an interrupt)
		// ends a request in flight; a restore is left to finish.
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		stopAfter := context.AfterFunc(c.stop.ctx, func() { cancel(errStopped) })
		defer stopAfter()
		defer cancel(nil)
	}
	limit := c.cfg.MaxResponseBytes
	if r.MaxBytes > 0 {
		limit = min(limit, r.MaxBytes)
	}
	refreshed := false
	for attempt := 1; ; attempt++ {
		if d := time.Until(c.paused()); d > 0 {
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
		c.roundTrip(req, x, limit)
		if x.Failure == exchange.FailureNoAnswer && context.Cause(ctx) == errStopped {
			why, _ := c.stop.reason()
			x.Err = "stopped: the run stopped (" + why + ")"
			x.Cause = errStopped
		}
		c.stop.answered(x, ctx.Err() != nil)
		if r.Auth == "" && x.Status == http.StatusUnauthorized && !refreshed {
			// A key that worked and is refused now may have expired: the
			// key command gives a new one, and the request goes again.
			if k, g, ok := c.keys.refresh(ctx, keyGen); ok {
				refreshed, key, keyGen = true, k, g
				x.Header.Set("Authorization", "Bearer "+key)
				continue
			}
		}
		if r.Auth == "" && x.Status != 0 && x.Status != http.StatusUnauthorized {
			c.keys.worked.Store(true)
		}
		if x.Failure != "" || x.Status != http.StatusTooManyRequests || attempt >= maxAttempts {
			break
		}
		// A rate limit is the target's right, not a contract failure: the
		// run pauses and the request goes again, within the allowance.
		now := time.Now()
		to, ok := c.pause(now, retryAfter(x.RespHeader.Get("Retry-After"), now))
		if !ok {
			break
		}
		if !waitFor(ctx, to.Sub(now)) {
			break
		}
		x.Waited += to.Sub(now)
	}
	if !r.ahead {
		c.trace(x)
	}
	return x
}

func (c *Client) waited() time.Duration {
	c.waitMu.Lock()
	defer c.waitMu.Unlock()
	return c.spent
}

// pause pauses the run's requests for d from now, on a 429, and returns
// when they may go again. Only the time it adds to a pause already under
// way is taken from the allowance (--max-retry-wait), so that requests in
// flight at once share one wait. It returns false once the allowance is
// spent.
func (c *Client) pause(now time.Time, d time.Duration) (time.Time, bool) {
	c.waitMu.Lock()
	defer c.waitMu.Unlock()
	to := now.Add(d)
	from := c.pausedTo
	if from.Before(now) {
		from = now
	}
	if !to.After(from) {
		return c.pausedTo, true // already paused as long
	}
	left := c.cfg.MaxRetryWait - c.spent
	if left <= 0 {
		return now, false
	}
	add := min(to.Sub(from), left)
	c.spent += add
	c.pausedTo = from.Add(add)
	return c.pausedTo, true
}

func (c *Client) paused() time.Time {
	c.waitMu.Lock()
	defer c.waitMu.Unlock()
	return c.pausedTo
}

// roundTrip makes one attempt of req and records it in x, reading at most
// limit bytes of the body. Only the list's 2xx answer may be long: any
// other is read up to ItemMaxBytes.
func (c *Client) roundTrip(req *http.Request, x *Exchange, limit int64) {
	start := time.Now()
	x.Failure, x.Err, x.Cause = "", "", nil
	x.Status, x.RespHeader, x.RespBody, x.RespSize = 0, nil, nil, 0
	resp, err := c.http.Do(req)
	if err != nil {
		x.Elapsed = time.Since(start)
		x.Failure, x.Err, x.Cause = exchange.FailureNoAnswer, err.Error(), err
		return
	}
	defer resp.Body.Close()
	x.Status = resp.StatusCode
	x.RespHeader = resp.Header
	c.answers.Count(x.Op.Name(), x.Status)
	if x.Op != c.inv.List || x.Status/100 != 2 {
		limit = min(limit, ItemMaxBytes)
	}
	c.readBody(req.Context(), resp, limit, x)
	x.Elapsed = time.Since(start)
}

// readBody reads at most limit bytes of the body into x, and no more than
// the run has left, within the run's budget of bytes in flight.
func (c *Client) readBody(ctx context.Context, resp *http.Response, limit int64, x *Exchange) {
	left := c.cfg.MaxRunBytes - c.read.Load()
	if left <= 0 {
		x.Failure, x.Err = exchange.FailureCapped, fmt.Sprintf("response body too large: the run has read %s of responses, its cap (--max-run-bytes)", byteSize(c.cfg.MaxRunBytes))
		return
	}
	n := min(limit, left)
	size := int64(64 << 10) // the first buffer where the length is unknown
	if resp.ContentLength >= 0 && !resp.Uncompressed {
		size = resp.ContentLength + 1 // the transport reads no further
	}
	got, b, err := c.inFlight.read(ctx, resp.Body, n+1, size)
	c.read.Add(got)
	x.RespBody, x.RespSize = b, got
	switch {
	case err != nil:
		x.Failure, x.Err, x.Cause = exchange.FailureCut, err.Error(), err
	case got > n:
		// Only the start is kept, the key hidden before the cut, in a
		// copy of its own: the capped buffer is not kept alive by it.
		x.RespBody = slices.Clone(c.secrets.Redactor().Cut(b[:min(len(b), 64<<10)], 4096))
		x.Failure, x.Err = exchange.FailureCapped, fmt.Sprintf("response body too large: the run has read %s of responses, its cap (--max-run-bytes)", byteSize(c.cfg.MaxRunBytes))
		switch {
		case n == limit && limit == ItemMaxBytes && limit < c.cfg.MaxResponseBytes:
			x.Err = fmt.Sprintf("response body too large: more than %s (the cap on an answer other than the list's: one record or an Error)", byteSize(limit))
		case n == limit:
			x.Err = fmt.Sprintf("response body too large: more than %s (the cap per response, --max-response-bytes)", byteSize(limit))
		}
	}
}

func (c *Client) trace(x *Exchange) {
	if c.cfg.Trace == nil {
		return
	}
	c.traceMu.Lock()
	defer c.traceMu.Unlock()
	fmt.Fprintf(c.cfg.Trace, "→ %s\n← %s\n", x.Curl(), x.Got())
}

// A budget bounds the response bytes all requests in flight read at once
// (decompressed): twice the largest cap, so that eight workers cannot each
// hold a cap at once. A read takes its buffer's size from the budget as
// the buffer grows, and gives it back when the body is read.
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
				b.peak.Store(max(b.peak.Load(), b.held))
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
