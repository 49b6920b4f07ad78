package mockserver

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
)

// RequestIDHeader carries a request's id: the caller's, if it sent a
// usable one, else one the mock makes. The access log line has it too.
const RequestIDHeader = "X-Request-Id"

// maxLoggedPath is the most of a path one log line holds.
const maxLoggedPath = 256

// accessLog writes one line per request, also for a request whose handler
// panicked (the line is written in a defer, and the recoverer is inside
// this): method, path (no query string, cut to maxLoggedPath), status,
// bytes, duration, the Error code of an error, and the request id. No
// header and no body reaches the log, so neither does an API key.
//
// It hands the line straight to the logger's handler (Logger.LogAttrs
// would also look up the caller on every request, for a source position no
// handler here reports), or, for the handler of NewLogger, formats it
// itself (logline.go).
func accessLog(logger *slog.Logger, rd redactor, next http.Handler) http.Handler {
	h := logger.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := recorders.Get().(*statusRecorder)
		id := requestID(r, rd)
		*rec = statusRecorder{ResponseWriter: w, start: start, requestID: id}
		w.Header()[RequestIDHeader] = []string{id}
		defer func() {
			if ctx := r.Context(); h.Enabled(ctx, slog.LevelInfo) {
				end := time.Now()
				p := rd.apply(r.URL.Path)
				if len(p) > maxLoggedPath {
					p = p[:maxLoggedPath] + "...(" + strconv.Itoa(len(r.URL.Path)) + " bytes)"
				}
				line := accessLine{
					end: end, method: r.Method, path: p,
					status: rec.status(), bytes: rec.bytes, duration: end.Sub(start),
					code: rec.code, requestID: id,
				}
				if rec.forced != "" || rec.fault != "" {
					line.prefer, line.chaos = rd.apply(rec.forced), rd.apply(rec.fault)
				}
				if rec.session != store.DefaultSession {
					line.session = rec.session
				}
				line.write(ctx, h)
			}
			*rec = statusRecorder{}
			recorders.Put(rec)
		}()
		next.ServeHTTP(rec, r)
	})
}

// requestID returns the caller's request id if it is a short token of
// visible ASCII that holds no key, else a new one: a random prefix made at
// start-up and a counter, unique within the process and cheap to make.
func requestID(r *http.Request, rd redactor) string {
	if v := r.Header[RequestIDHeader]; len(v) == 1 && len(v[0]) <= 128 && visible(v[0]) && !rd.holds(v[0]) {
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

// recorders holds statusRecorders between requests; a handler does not keep
// its ResponseWriter once it has returned.
var recorders = sync.Pool{New: func() any { return new(statusRecorder) }}

// A statusRecorder remembers what the access log and the journal say of a
// request: the status, size and Error code of its answer, and what the mock
// did on purpose.
type statusRecorder struct {
	http.ResponseWriter
	statusCode int
	bytes      int
	code       string          // the Error code, if the answer was an error
	aborted    bool            // the connection was dropped on purpose: no answer
	session    string          // the session, once the operation has read it
	forced     string          // the Prefer header's preferences, if any
	fault      string          // the chaos applied, if any
	op         *spec.Operation // the contract operation the request addresses, once routed; nil: none
	start      time.Time       // when the request reached the mock
	requestID  string
	capture    capture // what the journal keeps of the bodies; off: no journal
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.statusCode == 0 {
		r.statusCode = code
		r.capture.beforeAnswer()
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.statusCode == 0 {
		r.statusCode = http.StatusOK
		r.capture.beforeAnswer()
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	if r.capture.on {
		r.capture.response(b[:n])
	}
	return n, err
}

// status returns the answer's status; 0 for a connection dropped on
// purpose.
func (r *statusRecorder) status() int {
	switch {
	case r.aborted:
		return 0
	case r.statusCode == 0:
		return http.StatusOK
	}
	return r.statusCode
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// recorderOf finds the statusRecorder beneath w, or nil.
func recorderOf(w http.ResponseWriter) *statusRecorder {
	for {
		switch v := w.(type) {
		case *statusRecorder:
			return v
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return nil
		}
	}
}

// noteErrorCode records an Error code for the access log.
func noteErrorCode(w http.ResponseWriter, code string) {
	if rec := recorderOf(w); rec != nil {
		rec.code = code
	}
}
