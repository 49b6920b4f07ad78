package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// RequestIDHeader carries a request's id: the caller's, if it sent a
// usable one, else one the server makes. The access log line has it too.
const RequestIDHeader = "X-Request-Id"

// maxLoggedPath is the most of a path one log line holds.
const maxLoggedPath = 256

// An Entry is what a server of the kit records of one request while it
// serves it: its Front, the outermost layer, makes it and puts it in the
// request's context, where every layer inside finds it (EntryOf); the
// access log's line and the mock's journal entry are made from it.
type Entry struct {
	Start   time.Time
	ID      string          // the request id
	Session string          // the session the request used, once read; "" for the default
	Forced  string          // the Prefer header's preferences, if any
	Fault   string          // the latency or fault applied on purpose, if any
	Op      *spec.Operation // the contract operation the request addresses, once routed; nil: none
	Code    string          // the Error code, if the answer was an error
	Aborted bool            // the connection was dropped on purpose: no answer
	// What was done on purpose, in words from a small fixed set, for
	// metrics (Forced and Fault above are for people): the answer was
	// forced (a Prefer code or example, or a chaos rule's example), a
	// latency was added, and the fault applied (one of the mock's fault
	// names; "" for none).
	ForcedAnswer bool
	Delayed      bool
	FaultKind    string
	// Observer sees the answer as it is written (the mock's journal); nil:
	// none.
	Observer Observer

	status int // 0 until the answer's header is written
	bytes  int
}

// An Observer sees an answer as it is written.
type Observer interface {
	// BeforeAnswer is called once, before the answer's header is written.
	BeforeAnswer()
	// Wrote is called with each piece of the body written.
	Wrote(p []byte)
}

// Status returns the answer's status; 0 for a connection dropped on
// purpose, 200 for an answer not yet begun.
func (e *Entry) Status() int {
	switch {
	case e.Aborted:
		return 0
	case e.status == 0:
		return http.StatusOK
	}
	return e.status
}

// Bytes returns the body bytes written so far.
func (e *Entry) Bytes() int { return e.bytes }

type entryKey struct{}

// EntryOf returns the Entry of a request served behind a Front. Outside
// it, there is none: it returns a new one, recorded nowhere.
func EntryOf(r *http.Request) *Entry {
	_, e := WithEntry(r)
	return e
}

// WithEntry returns r with its Entry, and that Entry: a new one where r
// has none, such as the request of a caller in the same process that is
// served without a Front (the MCP server's calls of the admin API).
func WithEntry(r *http.Request) (*http.Request, *Entry) {
	if e, ok := r.Context().Value(entryKey{}).(*Entry); ok {
		return r, e
	}
	e := &Entry{Start: time.Now()}
	return r.WithContext(context.WithValue(r.Context(), entryKey{}, e)), e
}

// A served is one request's Entry and the ResponseWriter that records
// into it, pooled between requests: a handler keeps neither once it has
// returned.
type served struct {
	http.ResponseWriter
	entry Entry
}

// An entryContext is the request's context with its Entry. It is made per
// request, not pooled with the Entry: what a handler starts may hold the
// context after the handler has returned (a transport watching for its
// cancellation), and must never see the next request's.
type entryContext struct {
	context.Context
	entry *Entry
}

// Value returns the Entry for entryKey, and asks the request's own
// context for anything else.
func (c *entryContext) Value(key any) any {
	if key == (entryKey{}) {
		return c.entry
	}
	return c.Context.Value(key)
}

var pool = sync.Pool{New: func() any { return new(served) }}

func (s *served) WriteHeader(code int) {
	if s.entry.status == 0 {
		s.entry.status = code
		if s.entry.Observer != nil {
			s.entry.Observer.BeforeAnswer()
		}
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *served) Write(b []byte) (int, error) {
	if s.entry.status == 0 {
		s.WriteHeader(http.StatusOK)
	}
	n, err := s.ResponseWriter.Write(b)
	s.entry.bytes += n
	if s.entry.Observer != nil {
		s.entry.Observer.Wrote(b[:n])
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *served) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// A Front is the outermost layer of a server, the first and last a
// request meets. It makes the request's Entry, then runs Steps in order,
// then the handler. When the answer is done, also for a handler that
// panicked, it tells each of After, then writes the access line. A panic
// is answered 500 with an Error body and logged with its stack (see
// recovered). The access line holds no header and no body, and every key
// Redactor knows is hidden in what it holds (mockserver/README.md lists
// its fields).
type Front struct {
	Logger   *slog.Logger
	Redactor *exchange.Redactor
	Steps    []Step  // before the handler, in order; nil items are skipped
	After    []After // once the answer is done, in order; nil items are skipped
}

// An After sees a request once its answer is done: w is the answer's
// writer (its Header as sent), r the request as it reached the Front.
type After func(w http.ResponseWriter, r *http.Request, e *Entry)

// Serve returns next behind the Front.
func (f Front) Serve(next http.Handler) http.Handler {
	h, rd := f.Logger.Handler(), f.Redactor
	steps := slices.DeleteFunc(slices.Clone(f.Steps), func(s Step) bool { return s == nil })
	after := slices.DeleteFunc(slices.Clone(f.After), func(a After) bool { return a == nil })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := pool.Get().(*served)
		s.ResponseWriter = w
		s.entry = Entry{Start: time.Now(), ID: requestID(r, rd)}
		e := &s.entry
		w.Header()[RequestIDHeader] = []string{e.ID}
		in := r.WithContext(&entryContext{r.Context(), e})
		defer func() {
			abort := f.recovered(s, in, recover())
			for _, a := range after {
				a(w, r, e)
			}
			level := slog.LevelInfo
			if quietRead(r, e.Status()) {
				level = slog.LevelDebug
			}
			if ctx := r.Context(); h.Enabled(ctx, level) {
				end := time.Now()
				line := accessLine{
					end: end, method: loggedMethod(rd, r.Method), path: loggedPath(rd, r.URL.Path),
					status: e.Status(), bytes: e.bytes, duration: end.Sub(e.Start),
					code: e.Code, session: e.Session, requestID: e.ID, level: level,
				}
				if e.Forced != "" || e.Fault != "" {
					line.prefer, line.chaos = rd.String(e.Forced), rd.String(e.Fault)
				}
				line.write(ctx, h)
			}
			*s = served{}
			pool.Put(s)
			if abort {
				panic(http.ErrAbortHandler)
			}
		}()
		for _, step := range steps {
			if in = step(s, in); in == nil {
				return
			}
		}
		next.ServeHTTP(s, in)
	})
}

// recovered answers a panic v (nil: none) with a 500 Error body and a
// log line with the stack, instead of a dropped connection; the line's
// path is the access log's. It reports whether the connection must be
// aborted instead: for http.ErrAbortHandler (a connection dropped on
// purpose), and where the answer had already begun, since a half-sent
// answer must not pass for a whole one.
func (f Front) recovered(s *served, r *http.Request, v any) (abort bool) {
	switch {
	case v == nil:
		return false
	case v == http.ErrAbortHandler:
		return true
	}
	e := &s.entry
	f.Logger.Error("panic", "method", loggedMethod(f.Redactor, r.Method), "path", loggedPath(f.Redactor, r.URL.Path), "panic", v, "stack", string(debug.Stack()), "request_id", e.ID)
	if e.status != 0 { // the answer has begun
		return true
	}
	WriteError(s, r, http.StatusInternalServerError, CodeInternal, "the server failed on this request; see its log")
	return false
}

// quietRead reports whether a request is a read of the admin API that
// succeeded, which the access log writes at debug level, not info: an open
// dashboard polls the journal every second, and its lines would bury the
// API's. A change, and every error, is logged at info.
func quietRead(r *http.Request, status int) bool {
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || status >= 400 {
		return false
	}
	return r.URL.Path != adminBase && Under(r.URL.Path, adminBase)
}

// adminBase is where the admin API is served.
var adminBase = spec.AdminBasePath()

// loggedMethod is a request method as a log line shows it: a key sent as
// the method (curl -X KEY) hidden. The methods of RFC 9110 are no key.
func loggedMethod(rd *exchange.Redactor, m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return rd.String(m)
}

// loggedPath is a request path as a log line shows it: every key hidden,
// and cut to maxLoggedPath bytes, at the start of a character, with its
// whole length said.
func loggedPath(rd *exchange.Redactor, path string) string {
	p := rd.String(path)
	if len(p) <= maxLoggedPath {
		return p
	}
	return cut(p, maxLoggedPath) + "...(" + strconv.Itoa(len(path)) + " bytes)"
}

// cut returns the first n bytes of s, or fewer, to end where a character
// does.
func cut(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// requestID returns the caller's request id if it is a short token of
// visible ASCII that holds no key, else a new one: a random prefix made at
// start-up and a counter, unique within the process and cheap to make.
func requestID(r *http.Request, rd *exchange.Redactor) string {
	if v := r.Header[RequestIDHeader]; len(v) == 1 && len(v[0]) <= 128 && visible(v[0]) && !rd.Contains(v[0]) {
		return v[0]
	}
	b := make([]byte, 0, 24)
	b = append(b, idPrefix...)
	b = append(b, '-')
	b = strconv.AppendUint(b, idCounter.Add(1), 36)
	return string(b)
}

var (
	idPrefix  = newIDPrefix()
	idCounter atomic.Uint64
)

func newIDPrefix() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// visible reports whether s is non-empty and printable ASCII without
// spaces or quotes.
func visible(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return s != ""
}
