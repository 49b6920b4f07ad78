package mockserver

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"unicode/utf8"
)

// recoverPanics is recoverer with no keys to hide.
func recoverPanics(logger *slog.Logger, next http.Handler) http.Handler {
	return recoverer(logger, nil, next)
}

// recoverer turns a panic in a handler into a 500 Error body and a log
// line with the stack, instead of a dropped connection. The line's path is
// the access log's: keys replaced, cut to maxLoggedPath. If the answer had
// already begun, the connection is aborted: a half-sent answer must not
// pass for a whole one.
func recoverer(logger *slog.Logger, rd redactor, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			rec := recorderOf(w)
			attrs := []any{"method", r.Method, "path", loggedPath(rd, r.URL.Path), "panic", v, "stack", string(debug.Stack())}
			if rec != nil && rec.requestID != "" {
				attrs = append(attrs, "request_id", rec.requestID)
			}
			logger.Error("panic", attrs...)
			if rec != nil && rec.statusCode != 0 {
				panic(http.ErrAbortHandler)
			}
			writeError(w, http.StatusInternalServerError, CodeInternal, "the mock failed on this request; see its log")
		}()
		next.ServeHTTP(w, r)
	})
}

// loggedPath is a request path as a log line shows it: every key replaced,
// and cut to maxLoggedPath bytes, at the start of a character, with its
// whole length said.
func loggedPath(rd redactor, path string) string {
	p := rd.apply(path)
	if len(p) <= maxLoggedPath {
		return p
	}
	cut := maxLoggedPath
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + "...(" + strconv.Itoa(len(path)) + " bytes)"
}
