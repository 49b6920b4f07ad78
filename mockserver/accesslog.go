package mockserver

import (
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// accessLog writes one line per request: method, path, status, bytes and
// duration. It logs the path without the query string and no headers, so an
// API key sent in either never reaches the log.
//
// It hands the record straight to the logger's handler: Logger.LogAttrs
// would also look up the caller on every request, which costs as much as
// formatting the line, for a source position no handler here reports.
func accessLog(logger *slog.Logger, next http.Handler) http.Handler {
	h := logger.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := recorders.Get().(*statusRecorder)
		*rec = statusRecorder{ResponseWriter: w}
		defer func() {
			*rec = statusRecorder{}
			recorders.Put(rec)
		}()
		next.ServeHTTP(rec, r)
		ctx := r.Context()
		if !h.Enabled(ctx, slog.LevelInfo) {
			return
		}
		end := time.Now()
		line := slog.NewRecord(end, slog.LevelInfo, "request", 0)
		line.AddAttrs(
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.status()),
			slog.Int("bytes", rec.bytes),
			slog.Duration("duration", end.Sub(start)),
		)
		h.Handle(ctx, line)
	})
}

// recorders holds statusRecorders between requests; a handler does not keep
// its ResponseWriter once it has returned.
var recorders = sync.Pool{New: func() any { return new(statusRecorder) }}

// A statusRecorder remembers the status and size of a response.
type statusRecorder struct {
	http.ResponseWriter
	code  int
	bytes int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (r *statusRecorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
