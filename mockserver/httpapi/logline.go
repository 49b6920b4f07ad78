package httpapi

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// NewLogger returns the logger of the kit's servers: slog's JSON handler (json) or text
// handler writing to w. The access log recognises it and writes its one
// line per request itself, byte for byte as that handler would, without
// slog's generic formatting of each attribute; a line with a value the
// handler would quote or escape goes through the handler itself. Every
// line is written to w at once.
func NewLogger(w io.Writer, json bool) *slog.Logger {
	l, _ := NewBatchingLogger(w, json, 0)
	return l
}

// NewBatchingLogger is NewLogger, except that access lines wait up to
// window and the lines of one window reach w in one Write: under load, a
// write to a file or terminal per request costs the mock more than
// formatting its line. Any other record (a warning, the listening line)
// is written at once, after the access lines held before it, so that the
// order is kept. flush writes what is held and makes every later line go
// out at once; call it before the process exits. A process killed with
// SIGKILL loses the access lines of its last window.
func NewBatchingLogger(w io.Writer, json bool, window time.Duration) (logger *slog.Logger, flush func()) {
	sw := &syncWriter{w: w, window: window}
	var h slog.Handler = slog.NewTextHandler(sw, nil)
	if json {
		h = slog.NewJSONHandler(sw, nil)
	}
	return slog.New(&lineHandler{Handler: h, out: sw, json: json}), sw.close
}

// maxHeld is the most a syncWriter holds before it writes, whatever the
// window.
const maxHeld = 64 << 10

// A syncWriter serialises the writes of the handler and of the access
// log's own lines, so that lines never interleave. With a window, it
// holds access lines for up to that long.
type syncWriter struct {
	mu     sync.Mutex // guards all below
	w      io.Writer
	window time.Duration // 0: access lines are not held
	held   []byte        // access lines not written yet
	timer  *time.Timer   // writes held, once armed
	armed  bool          // the timer will write held
}

// Write writes p at once, after what is held.
func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeHeldLocked()
	return s.w.Write(p)
}

// line writes an access line: held until the window ends, or at once
// without a window.
func (s *syncWriter) line(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.window <= 0 {
		s.w.Write(p)
		return
	}
	s.held = append(s.held, p...)
	switch {
	case len(s.held) >= maxHeld:
		s.writeHeldLocked()
	case !s.armed:
		s.armed = true
		if s.timer == nil {
			s.timer = time.AfterFunc(s.window, s.flush)
		} else {
			s.timer.Reset(s.window)
		}
	}
}

// flush writes what is held; the timer calls it at the end of a window.
func (s *syncWriter) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = false
	s.writeHeldLocked()
}

// close writes what is held and stops holding lines.
func (s *syncWriter) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeHeldLocked()
	s.window = 0
	if s.timer != nil {
		s.timer.Stop()
	}
}

func (s *syncWriter) writeHeldLocked() {
	if len(s.held) == 0 {
		return
	}
	s.w.Write(s.held)
	s.held = s.held[:0]
	if cap(s.held) > 2*maxHeld { // a long line once: do not keep its room
		s.held = nil
	}
}

// A lineHandler is slog's text or JSON handler, with what the access log
// needs to write lines in its format.
type lineHandler struct {
	slog.Handler
	out  *syncWriter
	json bool
}

// An accessLine is what the access log says of one request.
type accessLine struct {
	end                          time.Time
	method, path                 string
	status, bytes                int
	duration                     time.Duration
	code, session, prefer, chaos string // left out where empty
	requestID                    string
	level                        slog.Level // Info, or Debug for a quiet read
}

// attrs returns the line's attributes in order, for slog.
func (l *accessLine) attrs() []slog.Attr {
	a := make([]slog.Attr, 0, 10)
	a = append(a,
		slog.String("method", l.method),
		slog.String("path", l.path),
		slog.Int("status", l.status),
		slog.Int("bytes", l.bytes),
		slog.Duration("duration", l.duration),
	)
	for _, o := range [...]struct{ k, v string }{{"code", l.code}, {"session", l.session}, {"prefer", l.prefer}, {"chaos", l.chaos}} {
		if o.v != "" {
			a = append(a, slog.String(o.k, o.v))
		}
	}
	return append(a, slog.String("request_id", l.requestID))
}

// write logs the line through h: formatted here where h is a lineHandler
// and every value is plain, else by h itself.
func (l *accessLine) write(ctx context.Context, h slog.Handler) {
	if lh, ok := h.(*lineHandler); ok && l.level == slog.LevelInfo {
		buf := lineBuffers.Get().(*[]byte)
		if b, ok := l.append((*buf)[:0], lh.json); ok {
			lh.out.line(b)
			*buf = b
			lineBuffers.Put(buf)
			return
		}
		lineBuffers.Put(buf)
	}
	r := slog.NewRecord(l.end, l.level, "request", 0)
	r.AddAttrs(l.attrs()...)
	h.Handle(ctx, r)
}

var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// append appends the line as slog's JSON (json) or text handler writes
// it, and reports false, having written something not to be used, where
// a string value is not plain: the handler would quote or escape it.
func (l *accessLine) append(b []byte, json bool) ([]byte, bool) {
	key := func(k string) {
		if json {
			b = append(b, ',', '"')
			b = append(b, k...)
			b = append(b, '"', ':')
		} else {
			b = append(b, ' ')
			b = append(b, k...)
			b = append(b, '=')
		}
	}
	plain := true
	str := func(k, v string) {
		if k != "" {
			key(k)
		}
		plain = plain && isPlain(v)
		if json {
			b = append(b, '"')
		}
		b = append(b, v...)
		if json {
			b = append(b, '"')
		}
	}
	t := l.end.Round(0)
	if json {
		b = append(b, `{"time":"`...)
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"INFO","msg":"request"`...)
	} else {
		b = append(b, "time="...)
		b = appendRFC3339Millis(b, t)
		b = append(b, " level=INFO msg=request"...)
	}
	str("method", l.method)
	str("path", l.path)
	key("status")
	b = strconv.AppendInt(b, int64(l.status), 10)
	key("bytes")
	b = strconv.AppendInt(b, int64(l.bytes), 10)
	key("duration")
	if json {
		b = strconv.AppendInt(b, int64(l.duration), 10)
	} else {
		b = append(b, l.duration.String()...)
	}
	for _, o := range [...]struct{ k, v string }{{"code", l.code}, {"session", l.session}, {"prefer", l.prefer}, {"chaos", l.chaos}} {
		if o.v != "" {
			str(o.k, o.v)
		}
	}
	str("request_id", l.requestID)
	if json {
		b = append(b, '}')
	}
	return append(b, '\n'), plain
}

// isPlain reports whether s is written as it is by both of slog's
// handlers: not empty, and only ASCII letters, digits and -._~/:+@,%!*
// (no space, '=', quote, backslash, control or non-ASCII character).
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '/', c == ':', c == '+', c == '@', c == ',', c == '%', c == '!', c == '*':
		default:
			return false
		}
	}
	return s != ""
}

// appendRFC3339Millis is slog's text handler's time format: RFC 3339 with
// exactly three digits of milliseconds.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the 4th digit
}
