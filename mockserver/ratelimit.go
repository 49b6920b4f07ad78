package mockserver

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/store"
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
	// dropped; if that is not enough, the fullest, which then start full
	// again. About 100 bytes each: 1 MiB at most.
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

// A limiter holds the rate limits in force, the global one and those of
// sessions that have their own, and the buckets of their callers: a
// golang.org/x/time/rate Limiter per API key and session. It is the admin
// API's control of RateLimit: get, set, clear and withSessions are
// control's (admin.go).
type limiter struct {
	on          atomic.Bool // a limit is in force, global or a session's: the fast path skips the lock
	max         int         // buckets kept at most
	maxSessions int         // sessions with a limit of their own kept at most
	now         func() time.Time

	mu       sync.Mutex // guards global, sessions and buckets
	global   limit
	sessions map[string]*limit // a session's own limit, by session name
	// buckets are keyed by the SHA-256 of the key and the session: no key
	// is kept in clear.
	buckets map[[sha256.Size]byte]*bucket
	made    uint64 // buckets made so far
}

// A limit is a RateLimit checked and ready to make buckets from.
type limit struct {
	cfg   RateLimit
	every rate.Limit // tokens per second; 0: no limit
	burst int
	used  time.Time // a session's: when last set or used; past maxSessions, the least recently used goes
}

// A bucket is one caller's tokens, under the limit of its session.
type bucket struct {
	tokens  *rate.Limiter
	session string
	seq     uint64 // the order buckets were made in
}

func newLimiter(max int, now func() time.Time) *limiter {
	return &limiter{max: max, maxSessions: store.DefaultMaxSessions, now: now,
		sessions: map[string]*limit{}, buckets: map[[sha256.Size]byte]*bucket{}}
}

// set starts the buckets the limit it puts in force governs full.
func (l *limiter) set(session string, rl RateLimit) error {
	perSecond, burst, err := rl.parse()
	if err != nil {
		return err
	}
	lim := limit{cfg: rl, every: rate.Limit(perSecond), burst: int(burst)}
	l.mu.Lock()
	defer l.mu.Unlock()
	if session == "" {
		l.global = lim
	} else {
		if l.sessions[session] == nil && len(l.sessions) >= l.maxSessions {
			oldest := leastUsed(l.sessions, "", func(s *limit) time.Time { return s.used })
			delete(l.sessions, oldest)
			l.dropBucketsLocked(oldest)
		}
		lim.used = l.now()
		l.sessions[session] = &lim
	}
	l.dropBucketsLocked(session)
	l.on.Store(l.global.every != 0 || len(l.sessions) > 0)
	return nil
}

func (l *limiter) clear(session string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.sessions[session]; ok {
		delete(l.sessions, session)
		l.dropBucketsLocked(session)
	}
	l.on.Store(l.global.every != 0 || len(l.sessions) > 0)
}

// dropBucketsLocked drops the buckets session's limit governs ("": those
// of the global limit, which are all but the ones of sessions with a
// limit of their own). l.mu must be held.
func (l *limiter) dropBucketsLocked(session string) {
	if session == "" && len(l.sessions) == 0 {
		clear(l.buckets)
		return
	}
	for id, b := range l.buckets {
		if b.session == session || session == "" && l.sessions[b.session] == nil {
			delete(l.buckets, id)
		}
	}
}

func (l *limiter) get(session string) (RateLimit, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, own := l.global, false
	if s := l.sessions[session]; session != "" && s != nil {
		lim, own = *s, true
	}
	rl := lim.cfg
	if rl.Rate != "" && rl.Burst == 0 {
		rl.Burst = lim.burst
	}
	return rl, own
}

func (l *limiter) withSessions() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(maps.Keys(l.sessions))
}

// take takes a token from the bucket of id, a caller of session. If there
// is none, it reports false, how long until there is one, and the rate
// that refused it.
func (l *limiter) take(id [sha256.Size]byte, session string) (bool, time.Duration, string) {
	now := l.now()
	l.mu.Lock()
	lim := l.global
	if s := l.sessions[session]; s != nil {
		s.used = now
		lim = *s
	}
	if lim.every == 0 {
		l.mu.Unlock()
		return true, 0, ""
	}
	b := l.buckets[id]
	if b == nil {
		if len(l.buckets) >= l.max {
			l.evictLocked(now)
		}
		l.made++
		b = &bucket{tokens: rate.NewLimiter(lim.every, lim.burst), session: session, seq: l.made}
		l.buckets[id] = b
	}
	l.mu.Unlock()
	if b.tokens.AllowN(now, 1) {
		return true, 0, ""
	}
	// A refused request takes nothing: wait for the token that is missing.
	missing := 1 - b.tokens.TokensAt(now)
	return false, time.Duration(missing / float64(lim.every) * float64(time.Second)), lim.cfg.Rate
}

// evictLocked makes room for new buckets: it drops those that are full
// again by now, then, while more than three quarters of the bound remain,
// the fullest (the share of their burst left), the newest first among
// equals. A dropped bucket starts full again, so what goes is what gives
// its caller least: a flood of new callers cannot empty the map of the
// exhausted buckets of others and so hand them a fresh burst. l.mu must
// be held.
func (l *limiter) evictLocked(now time.Time) {
	type held struct {
		id   [sha256.Size]byte
		full float64 // share of the burst left
		seq  uint64
	}
	kept := make([]held, 0, len(l.buckets))
	for id, b := range l.buckets {
		full := b.tokens.TokensAt(now) / float64(b.tokens.Burst())
		if full >= 1 {
			delete(l.buckets, id)
			continue
		}
		kept = append(kept, held{id, full, b.seq})
	}
	excess := len(l.buckets) - l.max*3/4
	if excess <= 0 {
		return
	}
	slices.SortFunc(kept, func(a, b held) int { return cmp.Or(cmp.Compare(b.full, a.full), cmp.Compare(b.seq, a.seq)) })
	for _, h := range kept[:excess] {
		delete(l.buckets, h.id)
	}
}

// limited answers 429 to a request past the rate limit of its key and
// session. It comes after the key check, so the key is a valid one; a
// request without a key is answered 401 before it takes a token. The
// session is the one the sessions step read.
func (l *limiter) limited(w http.ResponseWriter, r *http.Request) *http.Request {
	if !l.on.Load() {
		return r
	}
	session := cmp.Or(httpapi.EntryOf(r).Session, store.DefaultSession)
	ok, wait, rate := l.take(callerID(r, session), session)
	if ok {
		return r
	}
	// Whole seconds (RFC 9110, section 10.2.3), rounded up: a client
	// that waits as told finds a token.
	secs := max(1, int64(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	httpapi.WriteError(w, r, http.StatusTooManyRequests, httpapi.CodeTooManyRequests,
		fmt.Sprintf("rate limit: %s per API key and session; retry after %d s", rate, secs))
	return nil
}

// callerID identifies the caller a bucket belongs to: the SHA-256 of the
// bearer token the key check accepted, and the session.
func callerID(r *http.Request, session string) [sha256.Size]byte {
	token, _ := httpapi.BearerToken(r)
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
