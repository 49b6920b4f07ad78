package mockserver

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A fakeClock is a time the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestParseRateLimitFlag(t *testing.T) {
	for _, tt := range []struct {
		in        string
		perSecond float64
		burst     float64
		err       string
	}{
		{in: "10/s", perSecond: 10, burst: 10},
		{in: "600/m", perSecond: 10, burst: 600},
		{in: "0.5/s", perSecond: 0.5, burst: 1},
		{in: "2.5/s", perSecond: 2.5, burst: 3},
		{in: "10/s:1", perSecond: 10, burst: 1},
		{in: " 10/s : 20 ", perSecond: 10, burst: 20},
		{in: "1000000/s", perSecond: 1e6, burst: 1e6},
		{in: "1000001/s", err: "N is from more than 0 to 1000000"},
		{in: "0/s", err: "N is from more than 0"},
		{in: "0.01/m", err: "less than one request an hour"},
		{in: ".000000000000001/s", err: "less than one request an hour"},
		{in: "0.02/m", perSecond: 0.02 / 60, burst: 1},
		{in: "-1/s", err: "N is from more than 0"},
		{in: "10/h", err: "the unit is s or m"},
		{in: "10", err: "want N/s or N/m"},
		{in: "1e3/s", err: "want N/s or N/m"},
		{in: "NaN/s", err: "want N/s or N/m"},
		{in: "Inf/s", err: "want N/s or N/m"},
		{in: "0x10/s", err: "want N/s or N/m"},
		{in: "10/s:0", err: "burst"},
		{in: "10/s:x", err: "burst"},
		{in: "10/s:1000001", err: "burst 1000001: want 1 to 1000000"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			rl, err := ParseRateLimitFlag(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseRateLimitFlag(%q) = %v; want an error with %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			perSecond, burst, _ := rl.parse()
			if perSecond != tt.perSecond || burst != tt.burst {
				t.Errorf("ParseRateLimitFlag(%q): %v per second, burst %v; want %v, %v", tt.in, perSecond, burst, tt.perSecond, tt.burst)
			}
		})
	}
}

// TestTokenBucketEdges walks one bucket through its edges on a clock the
// test moves: each step takes a token after waiting, and must pass or be
// told how long to wait.
func TestTokenBucketEdges(t *testing.T) {
	type step struct {
		after time.Duration // waited before taking
		ok    bool
		wait  time.Duration // when refused
	}
	for _, tt := range []struct {
		name  string
		limit RateLimit
		steps []step
	}{
		{"a full bucket lets the burst through, then one per interval", RateLimit{Rate: "10/s", Burst: 3}, []step{
			{0, true, 0}, {0, true, 0}, {0, true, 0},
			{0, false, 100 * time.Millisecond},
			{99 * time.Millisecond, false, time.Millisecond},
			{time.Millisecond, true, 0},
			{0, false, 100 * time.Millisecond},
		}},
		{"an idle bucket refills to its size, not beyond", RateLimit{Rate: "10/s", Burst: 2}, []step{
			{0, true, 0}, {0, true, 0}, {0, false, 100 * time.Millisecond},
			{time.Hour, true, 0}, {0, true, 0}, {0, false, 100 * time.Millisecond},
		}},
		{"per minute", RateLimit{Rate: "60/m", Burst: 1}, []step{
			{0, true, 0}, {0, false, time.Second}, {500 * time.Millisecond, false, 500 * time.Millisecond}, {500 * time.Millisecond, true, 0},
		}},
		{"less than one a second", RateLimit{Rate: "0.5/s"}, []step{
			{0, true, 0}, {0, false, 2 * time.Second}, {time.Second, false, time.Second}, {time.Second, true, 0},
		}},
		{"a refused request takes nothing", RateLimit{Rate: "1/s"}, []step{
			{0, true, 0}, {0, false, time.Second}, {0, false, time.Second}, {0, false, time.Second}, {time.Second, true, 0},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(1e9, 0)}
			l := newLimiter(10, clock.now)
			if err := l.set("", tt.limit); err != nil {
				t.Fatal(err)
			}
			id := sha256.Sum256([]byte("key"))
			for i, s := range tt.steps {
				clock.add(s.after)
				ok, wait, _ := l.take(id, "")
				if ok != s.ok || (!ok && (wait-s.wait).Abs() > time.Microsecond) {
					t.Errorf("step %d (after %s): take = %v, wait %s; want %v, wait %s", i, s.after, ok, wait, s.ok, s.wait)
				}
			}
		})
	}
}

// TestRateLimitBucketsBounded: many callers never make more buckets than
// the bound; buckets that are full again go first, so a caller in the
// middle of its burst keeps its state.
func TestRateLimitBucketsBounded(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	l := newLimiter(100, clock.now)
	if err := l.set("", RateLimit{Rate: "1/s", Burst: 1}); err != nil {
		t.Fatal(err)
	}
	busy := sha256.Sum256([]byte("busy"))
	if ok, _, _ := l.take(busy, ""); !ok {
		t.Fatal("the first take of a new bucket was refused")
	}
	for i := range 10_000 {
		clock.add(time.Millisecond)
		l.take(sha256.Sum256([]byte(fmt.Sprint("caller-", i))), "")
		if n := l.size(); n > 100 {
			t.Fatalf("%d buckets after %d callers; want at most 100", n, i+1)
		}
	}
	// Every bucket of the last second is empty; the oldest are full again
	// and go first.
	clock.add(100 * time.Millisecond)
	if ok, _, _ := l.take(sha256.Sum256([]byte("caller-9999")), ""); ok {
		t.Error("the last caller's bucket was dropped while it was empty: it got a token back early")
	}
}

// TestRateLimitFloodKeepsExhaustedBuckets: a flood of new sessions (each
// a new bucket) past the bound does not drop the bucket of a caller who
// spent its burst, which would hand it a fresh one.
func TestRateLimitFloodKeepsExhaustedBuckets(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	l := newLimiter(100, clock.now)
	if err := l.set("", RateLimit{Rate: "1/m", Burst: 5}); err != nil {
		t.Fatal(err)
	}
	victim := sha256.Sum256([]byte("victim"))
	for range 5 {
		l.take(victim, "")
	}
	for i := range 10_000 {
		l.take(sha256.Sum256([]byte(fmt.Sprint("flood-", i))), fmt.Sprint("s", i))
		if n := l.size(); n > 100 {
			t.Fatalf("%d buckets after %d new sessions; want at most 100", n, i+1)
		}
	}
	if ok, _, _ := l.take(victim, ""); ok {
		t.Error("after a flood of 10,000 new sessions, a caller that spent its burst was given a token: its bucket was dropped")
	}
}

// TestRateLimitConcurrentKeys: callers on many keys at once, on a clock
// that does not move, each get exactly their burst, and their buckets do
// not take from each other's. Run with -race.
func TestRateLimitConcurrentKeys(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	l := newLimiter(MaxRateBuckets, clock.now)
	const burst, keys, tries = 5, 16, 40
	if err := l.set("", RateLimit{Rate: "1/s", Burst: burst}); err != nil {
		t.Fatal(err)
	}
	var passed [keys]atomic.Int64
	var wg sync.WaitGroup
	for k := range keys {
		for range 4 {
			wg.Go(func() {
				id := sha256.Sum256([]byte(fmt.Sprint("key-", k)))
				for range tries / 4 {
					if ok, _, _ := l.take(id, ""); ok {
						passed[k].Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	for k := range keys {
		if n := passed[k].Load(); n != burst {
			t.Errorf("key %d: %d requests passed; want its burst, %d", k, n, burst)
		}
	}
}

// TestRateLimitHTTP: past its burst, a caller gets 429 with Retry-After in
// whole seconds and the contract's Error; another key, another session and
// a request without a key are not counted against it.
func TestRateLimitHTTP(t *testing.T) {
	s := newServer(t, func(c *Config) { c.RateLimit = RateLimit{Rate: "1/m", Burst: 2} })
	list := req{method: "GET", path: "/v1/inventory"}
	for i := range 2 {
		if r := serve(t, s, list); r.status != 200 {
			t.Fatalf("request %d: status %d; want 200 within the burst", i+1, r.status)
		}
	}
	r := serve(t, s, list)
	if r.status != http.StatusTooManyRequests || r.Code != "too_many_requests" {
		t.Fatalf("past the burst: %d %v; want 429 too_many_requests", r.status, r.Code)
	}
	if got := r.header.Get("Retry-After"); got != "60" {
		t.Errorf("Retry-After = %q; want 60 (whole seconds until a token, at 1/m)", got)
	}
	if m, _ := r.Message.(string); !strings.Contains(m, "1/m per API key and session") {
		t.Errorf("message %q does not say the limit", m)
	}
	if op := operationOf(s.Contract(), "GET", "/v1/inventory"); !op.Documents(http.StatusTooManyRequests) {
		t.Errorf("the contract does not document 429 for %s", op.Name())
	}
	for _, other := range []req{
		{method: "GET", path: "/v1/inventory", auth: "Bearer test-key-2"},
		{method: "GET", path: "/v1/inventory", header: http.Header{SessionHeader: {"team-a"}}},
		{method: "PATCH", path: "/v1/inventory/1", body: `{"quantity":1}`, header: http.Header{SessionHeader: {"team-b"}}},
	} {
		if r := serve(t, s, other); r.status != 200 {
			t.Errorf("%s %s (%v): status %d; want 200 from a bucket of its own", other.method, other.path, other.header, r.status)
		}
	}
	for range 3 {
		if r := serve(t, s, req{method: "GET", path: "/v1/inventory", auth: "-"}); r.status != 401 {
			t.Errorf("without a key: %d; want 401, not a token taken", r.status)
		}
	}
	// The admin API and the health check are not limited.
	if r := serve(t, s, req{method: "GET", path: "/__admin/rate-limit"}); r.status != 200 || !strings.Contains(string(r.body), `"rate":"1/m"`) {
		t.Errorf("GET /__admin/rate-limit: %d %s", r.status, r.body)
	}
}

// TestRateLimitAdmin sets the limit at run time, and refuses what it
// cannot apply, changing nothing.
func TestRateLimitAdmin(t *testing.T) {
	s := newServer(t)
	for _, tt := range []struct {
		method, body string
		status       int
		want         string
	}{
		{"GET", "", 200, `{}`},
		{"PUT", `{"rate":"1/m"}`, 200, `{"rate":"1/m","burst":1}`},
		{"PUT", `{"rate":"0/s"}`, 400, "N is from more than 0"},
		{"PUT", `{"rate":"10/h"}`, 400, "rate"},
		{"PUT", `{"rate":"1e3/s"}`, 400, "rate"},
		{"PUT", `{"burst":5}`, 400, "a burst needs a rate"},
		{"PUT", `{"rate":"1/s","burst":0}`, 400, "burst"},
		{"PUT", `{"rate":"1/s","extra":1}`, 400, "extra"},
		{"PUT", `[]`, 400, ""},
		{"GET", "", 200, `{"rate":"1/m","burst":1}`},
	} {
		r := serve(t, s, req{method: tt.method, path: "/__admin/rate-limit", body: tt.body})
		if r.status != tt.status || !strings.Contains(string(r.body), tt.want) {
			t.Errorf("%s %s: %d %s; want %d with %q", tt.method, tt.body, r.status, r.body, tt.status, tt.want)
		}
	}
	serve(t, s, req{method: "GET", path: "/v1/inventory"})
	if r := serve(t, s, req{method: "GET", path: "/v1/inventory"}); r.status != 429 {
		t.Errorf("second list at 1/m: %d; want 429", r.status)
	}
	if r := serve(t, s, req{method: "DELETE", path: "/__admin/rate-limit"}); r.status != 204 {
		t.Errorf("DELETE: %d; want 204", r.status)
	}
	if r := serve(t, s, req{method: "GET", path: "/v1/inventory"}); r.status != 200 {
		t.Errorf("after DELETE: %d; want 200", r.status)
	}
}

// size returns the number of buckets l keeps.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
