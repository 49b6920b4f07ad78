package mockserver

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// A journal keeps the last requests of each session, for GET
// /__admin/requests and the dashboard: what was sent and what came back,
// bodies cut to a limit, and what the mock did on purpose. It never shows
// a credential. Its memory bounds are in README.md ("The journal").
type journal struct {
	perSession  int // entries kept per session; 0: the journal is off
	bodyLimit   int // bytes kept of each body
	maxSessions int // sessions kept; past it, the least recently used goes
	maxBytes    int // bytes kept in all (entrySize), MaxJournalBytes

	mu       sync.Mutex // guards sessions, seq and bytes
	sessions map[string]*ring
	seq      uint64 // the seq of the last entry added
	bytes    int    // the entrySize of every entry kept
}

// MaxJournalBytes bounds the journal's memory in all sessions together,
// as entrySize counts it: 64 MiB, a hundred full entries (4 KiB bodies,
// 4 KiB of headers) of about 200 sessions. One client with a key cannot
// make the mock hold more by opening sessions.
const MaxJournalBytes = 64 << 20

// entryOverhead is what entrySize counts for an entry besides its bodies
// and headers: its fields, URL and verdict.
const entryOverhead = 512

// entrySize is the memory an entry holds, as the journal's bound counts
// it: bodies, headers, a list kept whole, and entryOverhead.
func entrySize(e *entry) int {
	n := entryOverhead + len(e.x.Body) + len(e.x.RespBody) + headerSize(e.x.Header) + headerSize(e.x.RespHeader)
	if e.hasList {
		n += e.list.Size()
	}
	return n
}

// Defaults of the journal's bounds.
const (
	DefaultJournalSize      = 100
	DefaultJournalBodyLimit = 4 << 10
)

func newJournal(perSession, bodyLimit, maxSessions int) *journal {
	return &journal{perSession: perSession, bodyLimit: bodyLimit, maxSessions: maxSessions, maxBytes: MaxJournalBytes, sessions: map[string]*ring{}}
}

// A ring is one session's last entries, oldest overwritten first.
type ring struct {
	entries []*entry
	next    int
	used    time.Time
	bytes   int // the entrySize of its entries
}

// An entry is one journaled request: its httpapi.Entry, as the access log
// wrote it, and the exchange the Judge judges and the curl line renders,
// bodies cut to the limit; what the admin API shows is rendered from it
// when asked. It holds the request's headers and a list's snapshot, not
// copies: nothing modifies them once served. While the request is served
// it is the Entry's Observer, collecting the bodies and their sizes;
// record completes it once the request is answered.
type entry struct {
	httpapi.Entry
	x exchange.Exchange
	// The request's address, kept as served, not rendered: x.URL is made
	// from it when the entry is shown, off the request's path.
	url     *url.URL
	host    string
	tls     bool
	seq     uint64     // the order in which entries were added
	list    store.List // the answer, where it was a list kept whole (hasList)
	hasList bool

	judged  sync.Once
	verdict *verdict // the contract's judgement of the answer, made once, when first shown

	limit   int  // bytes kept of each body
	reqDone bool // the request body was read to its end
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
func keepList(w http.ResponseWriter, r *http.Request, l store.List) {
	if _, damaged := w.(*bufferedWriter); damaged {
		return
	}
	if e, ok := httpapi.EntryOf(r).Observer.(*entry); ok && l.Size() <= listKept*e.limit {
		e.list, e.hasList = l, true
	}
}

// keep appends to body what fits of p within limit bytes.
func keep(body, p []byte, limit int) []byte {
	return append(body, p[:min(len(p), max(limit-len(body), 0))]...)
}

// Wrote keeps the first limit bytes of the response body, unless the
// answer is a list kept whole.
func (e *entry) Wrote(p []byte) {
	e.x.RespSize += int64(len(p))
	if !e.hasList {
		e.x.RespBody = keep(e.x.RespBody, p, e.limit)
	}
}

// A teeBody is a request body that hands what is read of it to the
// journal's entry.
type teeBody struct {
	io.ReadCloser
	e *entry
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.e.x.BodySize += int64(n)
	t.e.x.Body = keep(t.e.x.Body, p[:n], t.e.limit)
	if err == io.EOF {
		t.e.reqDone = true
	}
	return n, err
}

// collect is the step that has the journal collect what it keeps of a
// request (record adds it, once answered, to its session's journal); nil
// where the journal is off.
func (j *journal) collect() httpapi.Step {
	if j.perSession <= 0 {
		return nil
	}
	return func(w http.ResponseWriter, r *http.Request) *http.Request {
		e := &entry{limit: j.bodyLimit}
		httpapi.EntryOf(r).Observer = e
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			tee := &teeBody{ReadCloser: r.Body, e: e}
			r.Body = tee
			if !strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
				e.body = tee
			}
		}
		return r
	}
}

// BeforeAnswer reads, for the journal, the start of a request body that
// is answered before it was read (a 401, a fault, a forced answer): net/http
// would read and discard it at this point anyway, before it sends the
// answer's header. A client that waits for 100 Continue is not asked for
// its body.
func (e *entry) BeforeAnswer() {
	if e.body != nil && !e.reqDone && len(e.x.Body) < e.limit {
		io.CopyN(io.Discard, e.body, int64(e.limit-len(e.x.Body)))
	}
}

// record adds a request the collect step saw to the journal, once it is
// answered: an httpapi.After, so that a request whose answer was dropped
// on purpose (a panic with http.ErrAbortHandler) is journaled too.
func (j *journal) record(w http.ResponseWriter, r *http.Request, e *httpapi.Entry) {
	en, ok := e.Observer.(*entry)
	if !ok {
		return
	}
	// A request that never reached an operation (no key, no such path) is
	// kept in the default session whatever session it names: only a key
	// holder makes sessions, so nobody without one can fill the journal
	// with sessions or push a team's out.
	en.Entry, en.url, en.host, en.tls, en.body = *e, r.URL, r.Host, r.TLS != nil, nil
	en.Observer = nil
	en.Session = cmp.Or(en.Session, store.DefaultSession)
	if !en.reqDone && r.ContentLength > en.x.BodySize {
		en.x.BodySize = r.ContentLength
	}
	// The request's and the answer's headers are kept, not copied: nothing
	// writes to them once the answer has been sent.
	en.x.Time, en.x.Method, en.x.Path, en.x.Header = e.Start, r.Method, r.URL.Path, r.Header
	en.x.Status, en.x.RespHeader, en.x.Elapsed = e.Status(), w.Header(), time.Since(e.Start)
	if e.Aborted {
		en.x.Failure, en.x.Err = exchange.FailureNoAnswer, "the connection was dropped on purpose ("+e.Fault+")"
	}
	if headerSize(r.Header) > maxJournalHeaders {
		en.x.Header = cutHeader(r.Header)
	}
	j.add(en)
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
	r := j.sessions[e.Session]
	if r == nil {
		r = &ring{entries: make([]*entry, 0, min(j.perSession, 16))}
		j.sessions[e.Session] = r
	}
	r.used = e.Start
	size := entrySize(e)
	if len(r.entries) < j.perSession {
		r.entries = append(r.entries, e)
	} else {
		size -= entrySize(r.entries[r.next])
		r.entries[r.next], r.next = e, (r.next+1)%j.perSession
	}
	r.bytes += size
	j.bytes += size
	// Past a bound (maxBytes, or maxSessions sessions besides e's), the
	// least recently used sessions' journals go, never e's.
	for len(j.sessions) > 1 && (j.bytes > j.maxBytes || len(j.sessions) > j.maxSessions+1) {
		j.dropLocked(leastUsed(j.sessions, e.Session, func(r *ring) time.Time { return r.used }))
	}
}

// dropLocked drops a session's journal. j.mu must be held.
func (j *journal) dropLocked(session string) {
	if r := j.sessions[session]; r != nil {
		j.bytes -= r.bytes
		delete(j.sessions, session)
	}
}

// A journalFilter selects entries.
type journalFilter struct {
	session, operation string
	status             int
	since              time.Time
	sinceID            string
	limit              int
}

// list returns the entries that pass f, newest first by start. Past
// f.limit, the newest are kept, except after since (an id or a time),
// where the first in the journal's order are: a poller that asks for a
// few at a time after the last it saw sees every entry, once.
func (j *journal) list(f journalFilter) []*entry {
	j.mu.Lock()
	var all []*entry
	for name, r := range j.sessions {
		if f.session == "" || f.session == name {
			all = append(all, r.entries...)
		}
	}
	j.mu.Unlock()
	slices.SortStableFunc(all, newestFirst)
	// After an id: the entries added after it, which is not the same as
	// newer: an entry is added when its answer is done, so a slow request
	// comes after a quicker one that started later.
	var after uint64
	for _, e := range all {
		if f.sinceID != "" && e.ID == f.sinceID {
			after = max(after, e.seq)
		}
	}
	out := slices.DeleteFunc(all, func(e *entry) bool {
		return e.seq <= after || f.status != 0 && e.x.Status != f.status ||
			!f.since.IsZero() && !e.Start.After(f.since) || f.operation != "" && e.Op.Name() != f.operation
	})
	if f.limit <= 0 || len(out) <= f.limit {
		return out
	}
	if f.sinceID == "" && f.since.IsZero() {
		return out[:f.limit]
	}
	// The first f.limit after since: by seq after an id, by start after a
	// time; then newest first again.
	if f.sinceID != "" {
		slices.SortFunc(out, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
	} else {
		slices.SortStableFunc(out, func(a, b *entry) int { return a.Start.Compare(b.Start) })
	}
	out = out[:f.limit]
	slices.SortStableFunc(out, newestFirst)
	return out
}

func newestFirst(a, b *entry) int { return b.Start.Compare(a.Start) }

// clear empties the journal of one session, or of all.
func (j *journal) clear(session string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if session == "" {
		clear(j.sessions)
		j.bytes = 0
		return
	}
	j.dropLocked(session)
}

// A journalEntry is an entry as GET /__admin/requests shows it.
type journalEntry struct {
	ID         string   `json:"id"`
	Seq        uint64   `json:"seq"`
	Time       string   `json:"time"`
	Session    string   `json:"session"`
	Operation  string   `json:"operation,omitempty"`
	Method     string   `json:"method"`
	Path       string   `json:"path"`
	Status     int      `json:"status"`
	Code       string   `json:"code,omitempty"`
	DurationMs float64  `json:"durationMs"`
	Forced     string   `json:"forced,omitempty"`
	Fault      string   `json:"fault,omitempty"`
	Verdict    *verdict `json:"verdict,omitempty"`
	Request    message  `json:"request"`
	Response   message  `json:"response"`
	Curl       string   `json:"curl"`
}

// A verdict is the contract's judgement of an answer.
type verdict struct {
	Valid    bool     `json:"valid"`
	Problems []string `json:"problems,omitempty"`
	Note     string   `json:"note,omitempty"`
}

// A message is one side of an exchange.
type message struct {
	Headers   http.Header `json:"headers"`
	Body      string      `json:"body"`
	Bytes     int         `json:"bytes"`
	Truncated bool        `json:"truncated,omitempty"`
	// HeadersCut: headers past the journal's limit were left out.
	HeadersCut bool `json:"headersCut,omitempty"`
}

// render shows an entry with every configured key hidden, its curl line,
// and the contract's verdict on its answer: on the whole list where the
// journal kept it whole, else on the body kept.
func (s *Server) render(e *entry) journalEntry {
	rd := s.rd
	x := e.x
	scheme, uri := "http://", e.url.RequestURI()
	if e.tls {
		scheme = "https://"
	}
	x.URL = scheme + e.host + uri
	if e.hasList {
		x.RespBody = e.list.Bytes()
		x.RespSize = int64(len(x.RespBody))
	}
	reqHeader, headersCut := journalHeader(x.Header)
	limit := s.journal.bodyLimit
	out := journalEntry{
		ID: rd.String(e.ID), Seq: e.seq, Time: e.Start.UTC().Format(time.RFC3339Nano), Session: rd.String(e.Session),
		Method: rd.String(x.Method), Path: rd.String(uri), Status: x.Status, Code: e.Code,
		DurationMs: float64(x.Elapsed.Microseconds()) / 1000, Forced: rd.String(e.Forced), Fault: rd.String(e.Fault),
		Request: message{Headers: rd.Header(reqHeader), HeadersCut: headersCut,
			Body: string(rd.Cut(x.Body, len(x.Body))), Bytes: int(e.x.BodySize), Truncated: x.ReqCut()},
		Response: message{Headers: rd.Header(x.RespHeader),
			Body: string(rd.Cut(x.RespBody, limit)), Bytes: int(e.x.RespSize), Truncated: x.RespCut() || len(x.RespBody) > limit},
		Curl: exchange.Curl(&x, rd),
	}
	if enc := x.RespHeader.Get("Content-Encoding"); enc != "" && !e.hasList {
		out.Response.Body = fmt.Sprintf("(%s-compressed, %d bytes; the journal shows uncompressed bodies only)", enc, e.x.RespSize)
		out.Response.Truncated = true
	}
	if e.Op == nil {
		return out
	}
	out.Operation = e.Op.Name()
	e.judged.Do(func() { e.verdict = s.verdict(e, &x, out.Response.Truncated && !e.hasList) })
	out.Verdict = e.verdict
	return out
}

// verdict is the Judge's verdict on an entry's answer, where the journal
// kept all of it.
func (s *Server) verdict(e *entry, x *exchange.Exchange, cut bool) *verdict {
	v := &verdict{Valid: true}
	switch {
	case e.Aborted:
		v.Note = "no answer: the connection was dropped on purpose (" + e.Fault + ")"
	case cut:
		v.Note = fmt.Sprintf("not checked: the body (%d bytes) is longer than the journal keeps", e.x.RespSize)
	case x.Method == http.MethodHead:
		v.Note = "not checked: a HEAD answer has no body"
	default:
		for _, vi := range s.judge.Answer(x, e.Op, e.Op.Name()) {
			v.Valid = false
			v.Problems = append(v.Problems, s.rd.String(vi.Rule+": "+problemText(vi)))
		}
	}
	return v
}

// problemText says what a violation found, with the field it is about.
func problemText(vi spec.Violation) string {
	field := strings.TrimPrefix(strings.TrimPrefix(vi.Path, "$."), "$")
	if field == "" || vi.Path == "status" || strings.HasPrefix(vi.Path, "header.") {
		return vi.Message
	}
	return field + ": " + vi.Message
}
