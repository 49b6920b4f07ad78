package mockserver

import (
	"log/slog"
	"net/http"
	"runtime/debug"
)

// recoverPanics turns a panic in a handler into a 500 Error body and a log
// line with the stack, instead of a dropped connection. If the answer had
// already begun, the connection is aborted: a half-sent answer must not
// pass for a whole one.
func recoverPanics(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			logger.Error("panic", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			if rec := recorderOf(w); rec != nil && rec.statusCode != 0 {
				panic(http.ErrAbortHandler)
			}
			writeError(w, http.StatusInternalServerError, CodeInternal, "the mock failed on this request; see its log")
		}()
		next.ServeHTTP(w, r)
	})
}
