package traffic

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// A HARWriter writes exchanges to a HAR 1.2 file as they happen, one entry
// at a time, so that a long session is never held in memory. The file is
// a whole HAR document once Close has run. Credentials are redacted as in
// findings: an Authorization header keeps its scheme word only ("Bearer
// [REDACTED]"), so a check of the file sees that one was sent. It is safe
// for concurrent use.
type HARWriter struct {
	redactor *redactor

	mu  sync.Mutex // guards w, n and err
	w   *bufio.Writer
	n   int
	err error
}

// NewHARWriter starts a HAR document on w, naming the program that
// records it. redact lists secrets to replace besides each exchange's own
// credentials.
func NewHARWriter(w io.Writer, creator, version string, redact []string) (*HARWriter, error) {
	h := &HARWriter{redactor: newRedactor(redact), w: bufio.NewWriterSize(w, 64<<10)}
	head, err := json.Marshal(map[string]string{"name": creator, "version": version})
	if err != nil {
		return nil, err
	}
	_, err = h.w.WriteString(`{"log":{"version":"1.2","creator":` + string(head) + `,"entries":[`)
	return h, err
}

// Write appends one exchange; d is how long it took. An exchange without
// an answer (Status 0) is written with status 0, as browsers write one.
func (h *HARWriter) Write(x *Exchange, d time.Duration) error {
	e := h.entry(x, d)
	b, err := json.Marshal(e)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	if err != nil {
		h.err = err
		return err
	}
	if h.n > 0 {
		h.w.WriteByte(',')
	}
	h.w.WriteByte('\n')
	_, h.err = h.w.Write(b)
	h.n++
	return h.err
}

// Close ends the document and flushes it. It does not close the
// underlying writer.
func (h *HARWriter) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	h.w.WriteString("\n]}}\n")
	h.err = h.w.Flush()
	if h.err == nil {
		h.err = errClosed
		return nil
	}
	return h.err
}

var errClosed = &closedError{}

type closedError struct{}

func (*closedError) Error() string { return "traffic: HAR writer is closed" }

// entry renders x as a HAR entry with its secrets redacted.
func (h *HARWriter) entry(x *Exchange, d time.Duration) harEntry {
	sc := h.redactor.secrets(x)
	rawURL := x.URL
	if rawURL == "" {
		rawURL = x.Request.URL.String()
	}
	ms := float64(d) / float64(time.Millisecond)
	e := harEntry{
		StartedDateTime: x.Time.UTC().Format(time.RFC3339Nano),
		Time:            ms,
		Request: harRequest{
			Method: x.Request.Method, URL: sc.url(rawURL), HTTPVersion: "HTTP/1.1",
			Cookies: []harNV{}, Headers: harPairs(sc.header(x.Request.Header)), QueryString: []harNV{},
			HeadersSize: -1, BodySize: x.ReqSize,
		},
		Response: harResponse{
			Status: x.Status, StatusText: http.StatusText(x.Status), HTTPVersion: "HTTP/1.1",
			Cookies: []harNV{}, Headers: harPairs(sc.header(x.RespHeader)),
			HeadersSize: -1, BodySize: x.RespSize,
		},
		Timings: harTimings{Send: 0, Wait: ms, Receive: 0},
	}
	{
		for name, vs := range x.Request.URL.Query() {
			for _, v := range vs {
				if secretName(name) {
					v = Redacted
				}
				e.Request.QueryString = append(e.Request.QueryString, harNV{name, sc.apply(v)})
			}
		}
		sort.Slice(e.Request.QueryString, func(i, j int) bool { return e.Request.QueryString[i].Name < e.Request.QueryString[j].Name })
	}
	if x.ReqSize > 0 || len(x.ReqBody) > 0 {
		text, enc, size, cut := harBody(sc, x.ReqBody, x.ReqSize)
		e.Request.PostData = &harPostData{MimeType: x.Request.Header.Get("Content-Type"), Text: text, Encoding: enc, Truncated: cut}
		e.Request.BodySize = size
	}
	if x.Status == 0 {
		e.Response.Error = "no answer"
		e.Response.HTTPVersion = ""
		e.Response.Content = harContent{MimeType: "x-unknown"}
		return e
	}
	text, enc, size, cut := harBody(sc, x.RespBody, x.RespSize)
	mt := x.RespHeader.Get("Content-Type")
	if base, _, err := mime.ParseMediaType(mt); err == nil {
		mt = base
	}
	e.Response.Content = harContent{Size: size, MimeType: mt, Text: &text, Encoding: enc, Truncated: cut}
	e.Response.BodySize = size
	return e
}

// harBody renders a body as HAR text, as it is where it is UTF-8, else in
// base64, secrets replaced first; the size to record, the redacted text's
// where the body is whole, else the whole body's; and whether the text was
// cut to the check limit, which the entry says in _truncated.
func harBody(sc secrets, b []byte, whole int64) (text, encoding string, size int64, cut bool) {
	s := sc.apply(string(b))
	size, cut = int64(len(s)), whole > int64(len(b))
	if cut {
		size = whole
	}
	if utf8.ValidString(s) {
		return s, "", size, cut
	}
	return base64.StdEncoding.EncodeToString([]byte(s)), "base64", size, cut
}

// harPairs lists a header as HAR name-value pairs, sorted by name.
func harPairs(h http.Header) []harNV {
	out := []harNV{}
	for name, vs := range h {
		for _, v := range vs {
			out = append(out, harNV{name, v})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out
}
