// Package exchange holds what every part of the kit records of an HTTP
// exchange and how it is shown safely: the Exchange, the one Redactor that
// hides keys, the one curl renderer, and HAR files.
package exchange

import (
	"cmp"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// An Exchange is one request and what came back, as observed by the suite
// (which sends it), the proxy (which passes it), the mock's journal (which
// serves it) or a HAR file. Bodies hold at most what the observer keeps;
// the sizes say how long they were.
type Exchange struct {
	Time   time.Time
	Method string
	URL    string // the full address as the client used it: scheme://host/path?query
	// Path is the request path under the contract's base path, which the
	// judge matches; "": URL's path.
	Path     string
	Header   http.Header // the request headers as sent
	Body     []byte      // the request body as kept; nil: none
	BodySize int64       // the whole body's length; more than len(Body): cut
	// BodyEncoding names a content coding (Content-Encoding) the body is
	// still in, not decoded, such as br; "": as meant.
	BodyEncoding string

	Status          int // 0: no answer
	RespHeader      http.Header
	RespBody        []byte
	RespSize        int64  // as BodySize, for RespBody
	RespEncoding    string // as BodyEncoding, for RespBody
	RespNotRecorded bool   // the body was not kept at all (a HAR entry without its text)

	Failure string // how the answer failed: one of the Failure constants
	Err     string // the failure's words, such as "connection refused"
	Elapsed time.Duration
}

// Kinds of Exchange.Failure.
const (
	FailureNone     = ""
	FailureNoAnswer = "no-answer" // no connection, or no status line in time; Status is 0
	// FailureCut: the answer began, then ended or stalled past the timeout
	// before its body did; Status, headers and the bytes that came are kept.
	FailureCut    = "cut"
	FailureCapped = "capped" // the reader stopped at its own cap: the body is longer than kept
)

// RespCut reports whether the response body is longer than what was kept.
func (x *Exchange) RespCut() bool { return x.RespSize > int64(len(x.RespBody)) }

// ReqCut reports whether the request body is longer than what was kept.
func (x *Exchange) ReqCut() bool { return x.BodySize > int64(len(x.Body)) }

// MediaType returns the response's media type without parameters.
func (x *Exchange) MediaType() string {
	ct := x.RespHeader.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	return strings.TrimSpace(ct)
}

// Got describes the response for a failure message: status, content type,
// time and body, the body cut to a readable length, every secret rd knows
// hidden before the cut.
func (x *Exchange) Got(rd *Redactor) string {
	if x.Status == 0 {
		return "no response: " + rd.String(cmp.Or(x.Err, "no answer"))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s, Content-Type %s, after %s", x.Status, http.StatusText(x.Status),
		Quote(rd.String(x.RespHeader.Get("Content-Type"))), x.Elapsed.Round(time.Millisecond))
	switch {
	case x.Failure != "":
		fmt.Fprintf(&b, " (%s: %s)", x.Failure, rd.String(x.Err))
	case x.Err != "":
		fmt.Fprintf(&b, " (%s)", rd.String(x.Err))
	}
	size := max(x.RespSize, int64(len(x.RespBody)))
	b.WriteString("\n          " + Shown(rd, rd.Bytes(x.RespBody), size, size > int64(len(x.RespBody))))
	return b.String()
}

// Shown renders a body for a message, on one line: "(empty body)", the
// body, or where it was cut or is long, its start (what the cut left of a
// secret hidden by rd) and its whole size.
func Shown(rd *Redactor, body []byte, size int64, cut bool) string {
	const show = 600
	switch {
	case size == 0 && len(body) == 0:
		return "(empty body)"
	case cut || len(body) > show:
		return fmt.Sprintf("%s ... (%d bytes in all)", Printable(rd.Cut(body, show)), size)
	}
	return Printable(body)
}

// Printable renders b for a message on one line: invalid UTF-8 becomes
// U+FFFD and control characters (terminal escapes, newlines) become ·, so
// a peer cannot forge lines or colours in the output.
func Printable(b []byte) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return '·'
		}
		return r
	}, strings.ToValidUTF8(string(b), "\uFFFD"))
}

// FirstLine returns s up to its first newline: the summary of a message
// or a description.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Quote renders a string a peer chose (a header, a field name) in double
// quotes with every control character escaped.
func Quote(s string) string { return strconv.QuoteToGraphic(strings.ToValidUTF8(s, "\uFFFD")) }
