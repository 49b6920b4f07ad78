package httpapi

import (
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// Recover turns a panic in a handler into a 500 Error body and a log line
// with the stack, instead of a dropped connection. The line's path is the
// access log's: keys hidden, cut to 256 bytes. If the answer had already
// begun, the connection is aborted: a half-sent answer must not pass for
// a whole one.
func Recover(logger *slog.Logger, rd *exchange.Redactor) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if v == http.ErrAbortHandler {
					panic(v)
				}
				e := EntryOf(r)
				logger.Error("panic", "method", loggedMethod(rd, r.Method), "path", loggedPath(rd, r.URL.Path), "panic", v, "stack", string(debug.Stack()), "request_id", e.ID)
				if e.Began() {
					panic(http.ErrAbortHandler)
				}
				WriteError(w, r, http.StatusInternalServerError, CodeInternal, "the server failed on this request; see its log")
			}()
			next.ServeHTTP(w, r)
		})
	}
}
