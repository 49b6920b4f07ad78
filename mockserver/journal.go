package mockserver

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
)

// A journal keeps the last requests of each session, for GET
// /__admin/requests and the dashboard: what was sent and what came back,
// bodies cut to a limit, and what the mock did on purpose. It never keeps
// the Authorization header; configured keys that appear elsewhere are
// replaced when the journal is read. Its memory is bounded by the number of
// sessions, the entries per session and the body limit.
type journal struct {
	perSession  int // entries kept per session; 0: the journal is off
	bodyLimit   int // bytes kept of each body
	maxSessions int // sessions kept; past it, the least recently used goes

	mu       sync.Mutex // guards sessions and seq
	sessions map[string]*ring
	seq      uint64 // the seq of the last entry added
}

// Defaults of the journal's bounds.
const (
	DefaultJournalSize      = 100
	DefaultJournalBodyLimit = 4 << 10
)

func newJournal(perSession, bodyLimit, maxSessions int) *journal {
	return &journal{perSession: perSession, bodyLimit: bodyLimit, maxSessions: maxSessions, sessions: map[string]*ring{}}
}

// A ring is one session's last entries, oldest overwritten first.
type ring struct {
	entries []*entry
	next    int
	used    time.Time
}

// An entry is one journaled request.
type entry struct {
	seq                uint64 // the order in which entries were added
	id                 string
	time               time.Time
	session            string
	method, host, path string // path with its query string
	tls                bool
	status             int
	aborted            bool
	code               string
	duration           time.Duration
	forced, fault      string
	reqHeader          http.Header
	reqBody            []byte
	reqBytes           int
	respHeader         http.Header
	respBody           []byte
	respBytes          int
}

// A capture is what the journal collects of one request while it is
// served: the statusRecorder holds it.
type capture struct {
	limit     int
	reqBody   []byte
	reqBytes  int
	respBody  []byte
	respBytes int
}

// request keeps the first limit bytes of the request body.
func (c *capture) request(body []byte) {
	c.reqBytes = len(body)
	c.reqBody = append([]byte(nil), body[:min(len(body), c.limit)]...)
}

// response keeps the first limit bytes of the response body.
func (c *capture) response(p []byte) {
	c.respBytes += len(p)
	if room := c.limit - len(c.respBody); room > 0 {
		c.respBody = append(c.respBody, p[:min(len(p), room)]...)
	}
}

// journaled records every request that reaches next in the journal of
// its session.
func (j *journal) journaled(next http.Handler) http.Handler {
	if j.perSession <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := recorderOf(w)
		if rec == nil {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec.capture = &capture{limit: j.bodyLimit}
		// In a defer, so that a request whose answer was dropped on purpose
		// (a panic with http.ErrAbortHandler) is journaled too.
		defer j.record(w, r, rec, start)
		next.ServeHTTP(w, r)
	})
}

// record adds the request rec has followed to the journal.
func (j *journal) record(w http.ResponseWriter, r *http.Request, rec *statusRecorder, start time.Time) {
	session := rec.session
	if session == "" {
		session = store.DefaultSession
		if v := r.Header.Values(SessionHeader); len(v) == 1 && sessionName.MatchString(v[0]) {
			session = v[0]
		}
	}
	e := &entry{
		id: w.Header().Get(RequestIDHeader), time: start, session: session,
		method: r.Method, host: r.Host, path: r.URL.RequestURI(), tls: r.TLS != nil,
		status: rec.status(), aborted: rec.aborted, code: rec.code, duration: time.Since(start),
		forced: rec.forced, fault: rec.fault,
		reqHeader: journalHeader(r.Header), reqBody: rec.capture.reqBody, reqBytes: rec.capture.reqBytes,
		// The answer's headers are kept, not copied: they are the answer's
		// own, and nothing writes to them once it has been sent.
		respHeader: w.Header(), respBody: rec.capture.respBody, respBytes: rec.capture.respBytes,
	}
	j.add(e)
}

// journalHeader copies a request's headers without its credentials. The
// values are shared, not copied: nothing writes to a request's headers
// once it has been served.
func journalHeader(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		switch k {
		case "Authorization", "Cookie", "Proxy-Authorization":
			continue
		}
		out[k] = v
	}
	return out
}

// add appends e to its session's ring.
func (j *journal) add(e *entry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	e.seq = j.seq
	r := j.sessions[e.session]
	if r == nil {
		if len(j.sessions) > j.maxSessions {
			j.evictLocked()
		}
		r = &ring{entries: make([]*entry, 0, min(j.perSession, 16))}
		j.sessions[e.session] = r
	}
	r.used = e.time
	if len(r.entries) < j.perSession {
		r.entries = append(r.entries, e)
		return
	}
	r.entries[r.next] = e
	r.next = (r.next + 1) % j.perSession
}

// evictLocked drops the least recently used session's journal. j.mu must
// be held.
func (j *journal) evictLocked() {
	var oldest string
	for name, r := range j.sessions {
		if oldest == "" || r.used.Before(j.sessions[oldest].used) {
			oldest = name
		}
	}
	delete(j.sessions, oldest)
}

// A journalFilter selects entries.
type journalFilter struct {
	session, operation string
	status             int
	since              time.Time
	sinceID            string
	limit              int
}

// list returns the entries that pass f, newest first. opOf names an
// entry's operation.
func (j *journal) list(f journalFilter, opOf func(*entry) *spec.Operation) []*entry {
	j.mu.Lock()
	var all []*entry
	for name, r := range j.sessions {
		if f.session == "" || f.session == name {
			all = append(all, r.entries...)
		}
	}
	j.mu.Unlock()
	sort.SliceStable(all, func(a, b int) bool { return all[a].time.After(all[b].time) })
	// After an id: the entries added after it, which is not the same as
	// newer: an entry is added when its answer is done, so a slow request
	// comes after a quicker one that started later.
	var after uint64
	for _, e := range all {
		if f.sinceID != "" && e.id == f.sinceID {
			after = max(after, e.seq)
		}
	}
	out := all[:0]
	for _, e := range all {
		switch {
		case e.seq <= after,
			f.status != 0 && e.status != f.status,
			!f.since.IsZero() && !e.time.After(f.since),
			f.operation != "" && opOf(e).Name() != f.operation:
			continue
		}
		out = append(out, e)
		if len(out) == f.limit {
			break
		}
	}
	return out
}

// clear empties the journal of one session, or of all.
func (j *journal) clear(session string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if session == "" {
		clear(j.sessions)
		return
	}
	delete(j.sessions, session)
}

// A redactor replaces configured keys wherever they appear.
type redactor []string

// Redacted stands for a key in what the mock shows.
const Redacted = "[REDACTED]"

func (rd redactor) apply(s string) string {
	for _, k := range rd {
		if k != "" && strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, Redacted)
		}
	}
	return s
}

// curl renders an entry as a curl command, the key left out: the command
// reads it from $INVENTORY_API_KEY.
func (e *entry) curl(rd redactor) string {
	scheme := "http"
	if e.tls {
		scheme = "https"
	}
	args := []string{"curl", "-sS", "-i"}
	if e.method != http.MethodGet {
		args = append(args, "-X", e.method)
	}
	args = append(args, shellQuote(rd.apply(scheme+"://"+e.host+e.path)), "-H", `"Authorization: Bearer $INVENTORY_API_KEY"`)
	for _, name := range []string{"Content-Type", "Prefer", SessionHeader} {
		for _, v := range e.reqHeader.Values(name) {
			args = append(args, "-H", shellQuote(name+": "+rd.apply(v)))
		}
	}
	switch {
	case e.reqBytes > len(e.reqBody):
		args = append(args, "--data-binary", "@body.json", "# the body ("+strconv.Itoa(e.reqBytes)+" bytes) is longer than the journal keeps")
	case e.reqBytes > 0:
		args = append(args, "--data-binary", shellQuote(rd.apply(string(e.reqBody))))
	}
	return strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
