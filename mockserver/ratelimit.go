package mockserver

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/spec"
)

// RateLimit is the rate the mock lets each caller have, as a real service
// would: a token bucket per API key and session (X-Mock-Session), so that
// teams sharing one mock, or the sessions of one test run, do not take
// each other's share. Past it, a request is answered 429 with a
// Retry-After header and the contract's Error body, which the contract
// documents by its default response. Set by --rate-limit at start-up and
// by PUT /__admin/rate-limit at run time.
type RateLimit struct {
	// Rate is N/s or N/m, such as 10/s or 600/m: the tokens a bucket gets
	// back per second or per minute. "": no limit.
	Rate string `json:"rate,omitempty"`
	// Burst is the most tokens a bucket holds, the requests a caller may
	// send at once after being idle; 0: the N of Rate, rounded up (10/s
	// lets 10 requests through at once, then one every 100 ms).
	Burst int `json:"burst,omitempty"`
}

// Bounds of a rate limit.
const (
	// MaxRateBuckets is the most buckets the mock keeps: one per API key
	// and session that sent a request. Past it, the buckets that have
	// filled up again (which hold nothing a new bucket would not) are
	// dropped; if that is not enough, arbitrary ones, which then start
	// full again. About 100 bytes each: 1 MiB at most.
	MaxRateBuckets = 10_000
	maxRate        = 1_000_000 // the largest N of N/s
	maxBurst       = 1_000_000
)

// ParseRateLimitFlag reads --rate-limit N/s[:BURST], such as 10/s or
// 600/m:50.
func ParseRateLimitFlag(v string) (RateLimit, error) {
	rate, burst, hasBurst := strings.Cut(strings.TrimSpace(v), ":")
	rl := RateLimit{Rate: strings.TrimSpace(rate)}
	if hasBurst {
		n, err := strconv.Atoi(strings.TrimSpace(burst))
		if err != nil || n < 1 {
			return rl, fmt.Errorf("--rate-limit %q: burst %q: want a whole number of at least 1, as in 10/s:20", v, burst)
		}
		rl.Burst = n
	}
	if _, _, err := rl.parse(); err != nil {
		return rl, fmt.Errorf("--rate-limit %q: %v", v, err)
	}
	return rl, nil
}

// parse returns the tokens per second and the burst of rl; 0, 0 for none.
func (rl RateLimit) parse() (perSecond, burst float64, err error) {
	if rl.Rate == "" {
		if rl.Burst != 0 {
			return 0, 0, errors.New("a burst needs a rate, such as 10/s")
		}
		return 0, 0, nil
	}
	n, unit, ok := strings.Cut(rl.Rate, "/")
	count, perr := strconv.ParseFloat(n, 64)
	if !ok || perr != nil || strings.ContainsAny(n, "eEnNxX_+") {
		return 0, 0, fmt.Errorf("rate %q: want N/s or N/m, such as 10/s or 600/m", rl.Rate)
	}
	var per time.Duration
	switch unit {
	case "s":
		per = time.Second
	case "m":
		per = time.Minute
	default:
		return 0, 0, fmt.Errorf("rate %q: the unit is s or m, as in 10/s or 600/m", rl.Rate)
	}
	if !(count > 0) || count > maxRate {
		return 0, 0, fmt.Errorf("rate %q: N is from more than 0 to %d", rl.Rate, maxRate)
	}
	if count/per.Hours() < 1 {
		return 0, 0, fmt.Errorf("rate %q: less than one request an hour; give at least 1/m", rl.Rate)
	}
	burst = math.Max(1, math.Ceil(count))
	if rl.Burst != 0 {
		if rl.Burst < 1 || rl.Burst > maxBurst {
			return 0, 0, fmt.Errorf("burst %d: want 1 to %d", rl.Burst, maxBurst)
		}
		burst = float64(rl.Burst)
	}
	return count / per.Seconds(), burst, nil
}

// String renders the limit for logs and the dashboard.
func (rl RateLimit) String() string {
	if rl.Rate == "" {
		return "none"
	}
	_, burst, _ := rl.parse()
	return fmt.Sprintf("%s per API key and session, burst %d", rl.Rate, int(burst))
}

// A limiter holds the buckets of the rate limit in force.
type limiter struct {
	on  atomic.Bool // a limit is in force: the fast path skips the lock
	max int         // buckets kept at most
	now func() time.Time

	mu        sync.Mutex // guards cfg, perSecond, burst and buckets
	cfg       RateLimit
	perSecond float64
	burst     float64
	// buckets are keyed by the SHA-256 of the key and the session: no key
	// is kept in clear.
	buckets map[[sha256.Size]byte]*bucket
}

// A bucket is one caller's tokens, as of last.
type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(max int, now func() time.Time) *limiter {
	return &limiter{max: max, now: now, buckets: map[[sha256.Size]byte]*bucket{}}
}

// set checks rl and puts it in force, with every bucket full; on error
// nothing changes.
func (l *limiter) set(rl RateLimit) error {
	perSecond, burst, err := rl.parse()
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cfg, l.perSecond, l.burst = rl, perSecond, burst
	clear(l.buckets)
	l.on.Store(rl.Rate != "")
	return nil
}

// get returns the limit in force.
func (l *limiter) get() RateLimit {
	l.mu.Lock()
	defer l.mu.Unlock()
	rl := l.cfg
	if rl.Rate != "" && rl.Burst == 0 {
		rl.Burst = int(l.burst)
	}
	return rl
}

// take takes a token from the bucket of id. If there is none, it reports
// false and how long until there is one.
func (l *limiter) take(id [sha256.Size]byte) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perSecond == 0 {
		return true, 0
	}
	b := l.buckets[id]
	if b == nil {
		if len(l.buckets) >= l.max {
			l.evict(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[id] = b
	} else if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = math.Min(l.burst, b.tokens+elapsed.Seconds()*l.perSecond)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.perSecond * float64(time.Second))
}

// evict makes room for new buckets: it drops those that are full again by
// now, then, while more than three quarters of the bound remain,
// arbitrary ones.
func (l *limiter) evict(now time.Time) {
	for id, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.perSecond >= l.burst {
			delete(l.buckets, id)
		}
	}
	for id := range l.buckets {
		if len(l.buckets) <= l.max*3/4 {
			break
		}
		delete(l.buckets, id)
	}
}

// size returns the number of buckets kept.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// limited answers 429 to a request past the rate limit of its key and
// session. It comes after the key check, so the key is a valid one; a
// request without a key is answered 401 before it takes a token.
func (l *limiter) limited(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !l.on.Load() {
			next.ServeHTTP(w, r)
			return
		}
		ok, wait := l.take(callerID(r))
		if ok {
			next.ServeHTTP(w, r)
			return
		}
		// Whole seconds (RFC 9110, section 10.2.3), rounded up: a client
		// that waits as told finds a token.
		secs := max(1, int64(math.Ceil(wait.Seconds())))
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		httpapi.WriteError(w, r, http.StatusTooManyRequests, httpapi.CodeTooManyRequests,
			fmt.Sprintf("rate limit: %s per API key and session; retry after %d s", l.rate(), secs))
	})
}

// rate is the rate in force, for messages.
func (l *limiter) rate() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg.Rate
}

// callerID identifies the caller a bucket belongs to: the SHA-256 of the
// bearer token, as the key check read it, and the session header.
func callerID(r *http.Request) [sha256.Size]byte {
	token := ""
	if v := r.Header["Authorization"]; len(v) == 1 {
		_, t, _ := strings.Cut(strings.TrimSpace(v[0]), " ")
		token = strings.TrimSpace(t)
	}
	session := strings.Join(r.Header[SessionHeader], ",")
	b := make([]byte, 0, len(token)+1+len(session))
	b = append(append(append(b, token...), 0), session...)
	return sha256.Sum256(b)
}

// rateLimitWarnings says which operations document neither 429 nor a
// default response, where a 429 is not an answer of their contract.
func rateLimitWarnings(c *spec.Contract) []string {
	var out []string
	for _, op := range c.Operations {
		if !op.Documents(http.StatusTooManyRequests) {
			out = append(out, fmt.Sprintf("%s %s: the rate limit answers 429, which the contract does NOT document for it (no 429 and no default response)", op.Method, op.Path))
		}
	}
	return out
}

// getRateLimit answers the rate limit in force.
func (s *Server) getRateLimit(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
	httpapi.WriteValue(w, r, http.StatusOK, s.limiter.get())
}

// setRateLimit replaces the rate limit; every bucket starts full. One the
// mock cannot apply is a 400 and changes nothing.
func (s *Server) setRateLimit(w http.ResponseWriter, r *http.Request, in *httpapi.Request) {
	var rl RateLimit
	if err := json.Unmarshal(spec.AppendJSON(nil, wholeNumbers(in.Body)), &rl); err != nil {
		httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidBody, "body: "+s.rd.String(err.Error()))
		return
	}
	if err := s.limiter.set(rl); err != nil {
		httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidBody, s.rd.String(err.Error()))
		return
	}
	httpapi.WriteValue(w, r, http.StatusOK, s.limiter.get())
}

// clearRateLimit lifts the rate limit.
func (s *Server) clearRateLimit(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
	s.limiter.set(RateLimit{})
	w.WriteHeader(http.StatusNoContent)
}
