package mockserver

import (
	"io"
	"net/http"
	"net/url"
	"slices"
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
// bodies cut to a limit, and what the mock did on purpose. It never shows
// a credential: the Authorization, Cookie and Proxy-Authorization headers
// are left out and configured keys replaced when the journal is read. Its
// memory is bounded by the number of sessions, the entries per session,
// the body limit (a list answer is kept whole up to listKept times it) and
// maxJournalHeaders.
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

// An entry is one journaled request. It holds what the request and the
// answer were made of, not copies, where those are never modified once
// served (the request's URL and headers, a list's snapshot); what the
// admin API shows is rendered from it when asked.
type entry struct {
	seq        uint64 // the order in which entries were added
	id         string
	time       time.Time
	session    string
	op         *spec.Operation // the contract operation the request addressed; nil: none
	method     string
	host       string
	url        *url.URL
	tls        bool
	status     int
	aborted    bool
	code       string
	duration   time.Duration
	forced     string
	fault      string
	reqHeader  http.Header // may hold credentials: shown only through journalHeader
	reqBody    []byte
	reqBytes   int
	respHeader http.Header
	respBody   []byte
	respList   store.List // the answer, where it was a list kept whole (hasList)
	hasList    bool
	respBytes  int

	judged  sync.Once
	verdict *verdict // the contract's judgement of the answer, made once, when first shown
}

// A capture is what the journal collects of one request while it is
// served: the statusRecorder holds it.
type capture struct {
	on        bool
	limit     int
	reqBody   []byte // the first limit bytes of the request body read
	reqBytes  int    // bytes of the request body read
	reqDone   bool   // the request body was read to its end
	respBody  []byte
	respBytes int
	// list is the answer where it is a list small enough to keep whole:
	// a snapshot, never modified, kept by reference instead of copied.
	list    store.List
	hasList bool
	// body is the request body, where an answer given before it was read
	// should read its start for the journal; nil: not to be read.
	body io.Reader
}

// listKept is how many times the body limit a list may be, at most, to be
// kept whole by reference: its verdict is then made on all of it.
const listKept = 4

// keepList makes the journal keep the answer, the list l, by reference,
// where it is at most listKept times the body limit: no copy is made.
// An answer a fault damages (cut short, or sent slowly) is kept as the
// bytes sent, which may not be all of l.
func keepList(w http.ResponseWriter, l store.List) {
	if _, damaged := w.(*bufferedWriter); damaged {
		return
	}
	if rec := recorderOf(w); rec != nil && rec.capture.on && l.Size() <= listKept*rec.capture.limit {
		rec.capture.list, rec.capture.hasList = l, true
	}
}

// requestRead keeps what the journal keeps of request body bytes just
// read.
func (c *capture) requestRead(p []byte) {
	c.reqBytes += len(p)
	if room := c.limit - len(c.reqBody); room > 0 && len(p) > 0 {
		c.reqBody = append(c.reqBody, p[:min(len(p), room)]...)
	}
}

// response keeps the first limit bytes of the response body, unless the
// answer is a list kept whole.
func (c *capture) response(p []byte) {
	c.respBytes += len(p)
	if c.hasList {
		return
	}
	if room := c.limit - len(c.respBody); room > 0 {
		c.respBody = append(c.respBody, p[:min(len(p), room)]...)
	}
}

// A teeBody is a request body that hands what is read of it to the
// journal's capture.
type teeBody struct {
	io.ReadCloser
	c *capture
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.c.requestRead(p[:n])
	if err == io.EOF {
		t.c.reqDone = true
	}
	return n, err
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
		rec.capture = capture{on: true, limit: j.bodyLimit}
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			tee := &teeBody{ReadCloser: r.Body, c: &rec.capture}
			r.Body = tee
			if !strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
				rec.capture.body = tee
			}
		}
		// In a defer, so that a request whose answer was dropped on purpose
		// (a panic with http.ErrAbortHandler) is journaled too.
		defer j.record(w, r, rec)
		next.ServeHTTP(w, r)
	})
}

// beforeAnswer reads, for the journal, the start of a request body that
// is answered before it was read (a 401, a fault, a forced answer): net/http
// would read and discard it at this point anyway, before it sends the
// answer's header. A client that waits for 100 Continue is not asked for
// its body.
func (c *capture) beforeAnswer() {
	if c.on && c.body != nil && !c.reqDone && len(c.reqBody) < c.limit {
		io.CopyN(io.Discard, c.body, int64(c.limit-len(c.reqBody)))
	}
}

// record adds the request rec has followed to the journal.
func (j *journal) record(w http.ResponseWriter, r *http.Request, rec *statusRecorder) {
	// A request that never reached an operation (no key, no such path) is
	// kept in the default session whatever session it names: only a key
	// holder makes sessions, so nobody without one can fill the journal
	// with sessions or push a team's out.
	session := rec.session
	if session == "" {
		session = store.DefaultSession
	}
	c := &rec.capture
	reqBytes := c.reqBytes
	if !c.reqDone && r.ContentLength > int64(reqBytes) {
		reqBytes = int(r.ContentLength)
	}
	e := &entry{
		id: rec.requestID, time: rec.start, session: session, op: rec.op,
		method: r.Method, host: r.Host, url: r.URL, tls: r.TLS != nil,
		status: rec.status(), aborted: rec.aborted, code: rec.code, duration: time.Since(rec.start),
		forced: rec.forced, fault: rec.fault,
		// The request's and the answer's headers are kept, not copied:
		// nothing writes to them once the answer has been sent.
		reqHeader: r.Header, reqBody: c.reqBody, reqBytes: reqBytes,
		respHeader: w.Header(), respBody: c.respBody, respBytes: c.respBytes,
		respList: c.list, hasList: c.hasList,
	}
	if headerSize(r.Header) > maxJournalHeaders {
		e.reqHeader = cutHeader(r.Header)
	}
	j.add(e)
}

// maxJournalHeaders is the most bytes of request headers an entry keeps
// (a request may send 64 KiB of them): past it, the entry keeps a copy of
// as many as fit, and the credentials.
const maxJournalHeaders = 4 << 10

// headerSize is the bytes of a header's names and values.
func headerSize(h http.Header) int {
	n := 0
	for k, v := range h {
		n += len(k)
		for _, s := range v {
			n += len(s)
		}
	}
	return n
}

// credentials are the request headers the journal never shows.
var credentials = []string{"Authorization", "Cookie", "Proxy-Authorization"}

// cutHeader copies as many of h's headers as fit in maxJournalHeaders
// bytes, credentials aside, and the credentials, which journalHeader
// leaves out but the curl line renders.
func cutHeader(h http.Header) http.Header {
	out := make(http.Header)
	size := 0
	for k, v := range h {
		if slices.Contains(credentials, k) {
			out[k] = v
			continue
		}
		n := len(k)
		for _, s := range v {
			n += len(s)
		}
		if size+n > maxJournalHeaders {
			continue
		}
		size += n
		out[k] = v
	}
	out[headersCut] = []string{"true"}
	return out
}

// headersCut marks a header that cutHeader made: some were left out.
const headersCut = "X-Journal-Headers-Cut"

// journalHeader returns an entry's request headers as the journal shows
// them: without credentials, and whether some were left out for size.
func journalHeader(h http.Header) (http.Header, bool) {
	out := make(http.Header, len(h))
	for k, v := range h {
		if !slices.Contains(credentials, k) && k != headersCut {
			out[k] = v
		}
	}
	return out, h[headersCut] != nil
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

// list returns the entries that pass f, newest first.
func (j *journal) list(f journalFilter) []*entry {
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
			f.operation != "" && e.op.Name() != f.operation:
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

// curl renders an entry as a curl command that sends the same request,
// keys left out: the command reads a configured key from
// $INVENTORY_API_KEY (or $INVENTORY_ADMIN_KEY), and any other credential
// is replaced by [REDACTED], which no server accepts either.
func (e *entry) curl(rd redactor, envOf func(token string) string) string {
	scheme := "http"
	if e.tls {
		scheme = "https"
	}
	args := []string{"curl", "-sS", "-i"}
	switch e.method {
	case http.MethodGet:
	case http.MethodHead:
		args = append(args, "-I") // -X HEAD would wait for a body that never comes
	default:
		args = append(args, "-X", e.method)
	}
	args = append(args, shellQuote(rd.apply(scheme+"://"+e.host+e.url.RequestURI())))
	for _, v := range e.reqHeader["Authorization"] {
		args = append(args, "-H", authorizationArg(v, rd, envOf))
	}
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

// authorizationArg renders one Authorization header as sent, for curl:
// a configured key as the variable envOf names, any other credential as
// [REDACTED], a header with no credential as it was. An empty header is
// "Authorization;", which curl sends as a header with no value.
func authorizationArg(v string, rd redactor, envOf func(string) string) string {
	if strings.TrimSpace(v) == "" {
		return shellQuote("Authorization;")
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(v), " ")
	token = strings.TrimSpace(token)
	switch {
	case token == "":
		return shellQuote("Authorization: " + rd.apply(scheme))
	case envOf(token) != "":
		return `"Authorization: ` + rd.apply(scheme) + ` $` + envOf(token) + `"`
	}
	return shellQuote("Authorization: " + rd.apply(scheme) + " " + Redacted)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
