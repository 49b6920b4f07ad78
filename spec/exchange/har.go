package exchange

import (
	"bufio"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The HAR 1.2 shapes read and written
// (http://www.softwareishard.com/blog/har-12-spec/), with extensions:
// _error (why there is no answer, as browsers write it, or why it was
// cut), _failure (Exchange.Failure where part of the answer arrived),
// _truncated (the text is the start of a longer body) and _coding (the
// text is still in this content coding).
type (
	harEntry struct {
		StartedDateTime string      `json:"startedDateTime"`
		Time            float64     `json:"time"`
		Request         harRequest  `json:"request"`
		Response        harResponse `json:"response"`
		Cache           struct{}    `json:"cache"`
		Timings         harTimings  `json:"timings"`
	}
	harRequest struct {
		Method      string       `json:"method"`
		URL         string       `json:"url"`
		HTTPVersion string       `json:"httpVersion"`
		Cookies     []harNV      `json:"cookies"`
		Headers     []harNV      `json:"headers"`
		QueryString []harNV      `json:"queryString"`
		PostData    *harPostData `json:"postData,omitempty"`
		HeadersSize int64        `json:"headersSize"`
		BodySize    int64        `json:"bodySize"`
	}
	harPostData struct {
		Text string `json:"text"`
		harText
	}
	harText struct {
		MimeType  string `json:"mimeType"`
		Encoding  string `json:"encoding,omitempty"` // "base64": not in HAR 1.2, written by some recorders
		Truncated bool   `json:"_truncated,omitempty"`
		Coding    string `json:"_coding,omitempty"`
	}
	harResponse struct {
		Status      int        `json:"status"`
		StatusText  string     `json:"statusText"`
		HTTPVersion string     `json:"httpVersion"`
		Cookies     []harNV    `json:"cookies"`
		Headers     []harNV    `json:"headers"`
		Content     harContent `json:"content"`
		RedirectURL string     `json:"redirectURL"`
		HeadersSize int64      `json:"headersSize"`
		BodySize    int64      `json:"bodySize"`
		Error       string     `json:"_error,omitempty"`
		Failure     string     `json:"_failure,omitempty"`
	}
	harContent struct {
		Size int64   `json:"size"`
		Text *string `json:"text,omitempty"`
		harText
	}
	harNV struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	harTimings struct {
		Send    float64 `json:"send"`
		Wait    float64 `json:"wait"`
		Receive float64 `json:"receive"`
	}
)

// A HAREntry is one entry of a HAR file: its Exchange holds the full URL
// and no Path (HARMapping.Exchange maps it to the contract's).
type HAREntry struct {
	Index int // from 0, in the file's order
	Exchange
}

// ErrNotHAR says a document is JSON but not a HAR log.
var ErrNotHAR = errors.New("not a HAR file: no log.entries array")

// ReadHAR reads a HAR document and calls each for every entry in order,
// decoding one entry at a time so that a large recording is never held in
// memory whole. It stops at the first error each returns. An entry with
// status 0 is an exchange with Failure FailureNoAnswer.
func ReadHAR(r io.Reader, each func(*HAREntry) error) error {
	dec := json.NewDecoder(r)
	found := false
	err := object(dec, func(key string) error {
		if key != "log" {
			return skip(dec)
		}
		return object(dec, func(key string) error {
			if key != "entries" {
				return skip(dec)
			}
			found = true
			if err := delim(dec, '['); err != nil {
				return err
			}
			for i := 0; dec.More(); i++ {
				var e harEntry
				if err := dec.Decode(&e); err != nil {
					return fmt.Errorf("entry %d: %w", i, err)
				}
				entry, err := e.entry(i)
				if err != nil {
					return fmt.Errorf("entry %d: %w", i, err)
				}
				if err := each(entry); err != nil {
					return err
				}
			}
			return delim(dec, ']')
		})
	})
	if err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return fmt.Errorf("not valid JSON at byte %d: %w", syn.Offset, err)
		}
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("not a HAR file: data after the document")
	}
	if !found {
		return ErrNotHAR
	}
	return nil
}

// object reads a JSON object, calling member for each key with the decoder
// at its value, which member must consume.
func object(dec *json.Decoder, member func(key string) error) error {
	if err := delim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return ErrNotHAR
		}
		if err := member(key); err != nil {
			return err
		}
	}
	return delim(dec, '}')
}

func delim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return ErrNotHAR
	}
	return nil
}

func skip(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}

func (e *harEntry) entry(i int) (*HAREntry, error) {
	x := Exchange{Method: strings.ToUpper(e.Request.Method), URL: e.Request.URL, Status: e.Response.Status,
		Header: harHeader(e.Request.Headers), RespHeader: harHeader(e.Response.Headers),
		Elapsed: time.Duration(e.Time * float64(time.Millisecond))}
	if e.StartedDateTime != "" {
		x.Time, _ = time.Parse(time.RFC3339Nano, e.StartedDateTime)
	}
	if x.Method == "" || x.URL == "" {
		return nil, errors.New("no request method or URL")
	}
	if x.Status < 0 || x.Status > 999 {
		return nil, fmt.Errorf("status %d is not an HTTP status", x.Status)
	}
	if pd := e.Request.PostData; pd != nil {
		b, err := decodeText(pd.Text, pd.Encoding)
		if err != nil {
			return nil, fmt.Errorf("request body: %w", err)
		}
		x.Body, x.BodySize, x.BodyEncoding = b, cutSize(len(b), e.Request.BodySize, pd.Truncated), pd.Coding
		if x.Header.Get("Content-Type") == "" && pd.MimeType != "" && len(b) > 0 {
			x.Header.Set("Content-Type", pd.MimeType)
		}
	}
	c := e.Response.Content
	switch {
	case x.Status == 0: // no answer, no body
	case c.Text != nil:
		b, err := decodeText(*c.Text, c.Encoding)
		if err != nil {
			return nil, fmt.Errorf("response body: %w", err)
		}
		x.RespBody, x.RespSize, x.RespEncoding = b, cutSize(len(b), c.Size, c.Truncated), c.Coding
	case c.Size > 0 || e.Response.BodySize > 0:
		x.RespNotRecorded, x.RespSize = true, max(c.Size, e.Response.BodySize)
	}
	switch f := e.Response.Failure; {
	case x.Status == 0:
		x.Failure, x.Err = FailureNoAnswer, e.Response.Error
	case f == FailureCut || f == FailureCapped:
		x.Failure, x.Err = f, e.Response.Error
	}
	return &HAREntry{Index: i, Exchange: x}, nil
}

// cutSize is the size of a body whose text has n bytes: n, unless the
// recording says the text was cut, when it is the recorded size (at least
// n+1). Recorders disagree on sizes (compressed or not, headers or not),
// so a size alone never says a body was cut.
func cutSize(n int, recorded int64, cut bool) int64 {
	if !cut {
		return int64(n)
	}
	return max(recorded, int64(n)+1)
}

func decodeText(text, encoding string) ([]byte, error) {
	switch strings.ToLower(encoding) {
	case "":
		return []byte(text), nil
	case "base64":
		return base64.StdEncoding.DecodeString(text)
	}
	return nil, fmt.Errorf("unknown encoding %q", encoding)
}

// harHeader turns HAR name-value pairs into a header, leaving out HTTP/2
// pseudo-headers such as :authority.
func harHeader(nvs []harNV) http.Header {
	h := http.Header{}
	for _, nv := range nvs {
		if nv.Name != "" && !strings.HasPrefix(nv.Name, ":") {
			h.Add(nv.Name, nv.Value)
		}
	}
	return h
}

// A HARMapping says which entries of a recording are the contract's
// traffic and where the contract's base path is in their URLs.
type HARMapping struct {
	// BasePath is the contract's base path, such as /v1.
	BasePath string
	// Base, if not nil, is the backend's address as the recording used it,
	// such as https://staging.example.com/v1: only entries under it are
	// the contract's, its path standing for BasePath. Nil: entries whose
	// path is under BasePath, on any host.
	Base *url.URL
	// Limit is the bytes kept of each body; longer bodies are cut to it
	// (and so RespCut or ReqCut). 0: no limit.
	Limit int
}

// Exchange returns the entry as an exchange with its Path under the
// contract's base path, or says why it is not the contract's traffic:
// another host or path, a CORS preflight, an entry with neither an answer
// nor request headers (a browser's aborted request). An entry without an
// answer (status 0) but with its request is an exchange whose request
// alone can be judged.
func (m HARMapping) Exchange(e *HAREntry) (*Exchange, string) {
	u, err := url.Parse(e.URL)
	if err != nil || u.Path == "" && u.Host == "" {
		return nil, "the URL cannot be read"
	}
	path := u.Path
	if m.Base != nil {
		if !strings.EqualFold(u.Host, m.Base.Host) || !strings.EqualFold(u.Scheme, m.Base.Scheme) {
			return nil, "another host"
		}
		rest, ok := strings.CutPrefix(path, strings.TrimSuffix(m.Base.Path, "/"))
		if !ok || rest != "" && rest[0] != '/' {
			return nil, "not under " + m.Base.String()
		}
		path = m.BasePath + rest
	} else if path != m.BasePath && !strings.HasPrefix(path, m.BasePath+"/") {
		return nil, "not under " + m.BasePath
	}
	if IsPreflight(e.Method, e.Header) {
		return nil, "a CORS preflight"
	}
	if e.Status == 0 && len(e.Header) == 0 {
		return nil, "no answer recorded" // a browser's aborted request: not even its headers were sent
	}
	x := e.Exchange
	x.Path = path
	if m.Limit > 0 {
		x.Body = x.Body[:min(len(x.Body), m.Limit)]
		x.RespBody = x.RespBody[:min(len(x.RespBody), m.Limit)]
	}
	return &x, ""
}

// IsPreflight reports whether a request is a CORS preflight, which a
// browser sends on its own and no contract describes.
func IsPreflight(method string, h http.Header) bool {
	return method == http.MethodOptions && h.Get("Origin") != "" && h.Get("Access-Control-Request-Method") != ""
}

// A HARWriter writes exchanges to a HAR 1.2 file one entry at a time, as
// they happen; the file is a whole document once Close has run. All is
// redacted with the Redactor's Remember. A cut answer is written as what
// arrived with _failure and _error; one without an answer with status 0
// and _error, as browsers write it. It is safe for concurrent use.
type HARWriter struct {
	rd *Redactor

	mu  sync.Mutex // guards w, n and err
	w   *bufio.Writer
	n   int
	err error
}

// NewHARWriter starts a HAR document on w, naming the program that
// records it.
func NewHARWriter(w io.Writer, creator, version string, rd *Redactor) (*HARWriter, error) {
	h := &HARWriter{rd: rd, w: bufio.NewWriterSize(w, 64<<10)}
	head, _ := json.Marshal(map[string]string{"name": creator, "version": version}) // strings: it cannot fail
	_, err := h.w.WriteString(`{"log":{"version":"1.2","creator":` + string(head) + `,"entries":[`)
	return h, err
}

// Write appends one exchange.
func (h *HARWriter) Write(x *Exchange) error {
	b, _ := json.Marshal(h.entry(x)) // strings, finite numbers and their structs: it cannot fail
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	if h.n > 0 {
		h.w.WriteByte(',')
	}
	h.w.WriteByte('\n')
	_, h.err = h.w.Write(b)
	h.n++
	return h.err
}

var errClosed = errors.New("exchange: HAR writer is closed")

// Close ends the document and flushes it. It does not close the
// underlying writer.
func (h *HARWriter) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	h.w.WriteString("\n]}}\n")
	if h.err = h.w.Flush(); h.err != nil {
		return h.err
	}
	h.err = errClosed
	return nil
}

func (h *HARWriter) entry(x *Exchange) harEntry {
	rd := h.rd.Remember(x)
	ms := float64(x.Elapsed) / float64(time.Millisecond)
	u := rd.URL(x.URL)
	e := harEntry{
		StartedDateTime: x.Time.UTC().Format(time.RFC3339Nano),
		Time:            ms,
		Request: harRequest{
			Method: rd.String(x.Method), URL: u, HTTPVersion: "HTTP/1.1",
			Cookies: []harNV{}, Headers: harPairs(rd.Header(x.Header)), QueryString: []harNV{},
			HeadersSize: -1, BodySize: x.BodySize,
		},
		Response: harResponse{
			Status: x.Status, StatusText: http.StatusText(x.Status), HTTPVersion: "HTTP/1.1",
			Cookies: []harNV{}, Headers: harPairs(rd.Header(x.RespHeader)),
			HeadersSize: -1, BodySize: x.RespSize,
		},
		Timings: harTimings{Wait: ms},
	}
	for _, p := range queryPairs(u) {
		e.Request.QueryString = append(e.Request.QueryString, harNV{rd.String(p[0]), rd.String(p[1])})
	}
	if x.Body != nil || x.BodySize > 0 {
		pd := &harPostData{}
		pd.Text, pd.harText, e.Request.BodySize = harBody(rd, x.Body, x.BodySize, false, x.Header, x.BodyEncoding)
		e.Request.PostData = pd
	}
	if x.Status == 0 || x.Failure == FailureNoAnswer {
		e.Response.Status, e.Response.StatusText, e.Response.HTTPVersion = 0, "", ""
		e.Response.Error = rd.String(cmp.Or(x.Err, "no answer"))
		e.Response.Content = harContent{harText: harText{MimeType: "x-unknown"}}
		return e
	}
	if x.Failure != FailureNone {
		e.Response.Failure, e.Response.Error = x.Failure, rd.String(cmp.Or(x.Err, x.Failure))
	}
	c := &e.Response.Content
	text := ""
	text, c.harText, c.Size = harBody(rd, x.RespBody, x.RespSize, x.Failure != FailureNone, x.RespHeader, x.RespEncoding)
	if c.Text = &text; x.RespNotRecorded {
		c.Text, c.Size = nil, x.RespSize
	}
	e.Response.BodySize = c.Size
	return e
}

// harBody renders a body as HAR text: secrets replaced (a JSON document
// stays one; a body that ended early, or was cut, loses a trailing start
// of a secret), in base64 where it is not UTF-8, _truncated where the
// body is longer; and the size to record: the whole body's where it was
// cut, else the text's. h is the body's header.
func harBody(rd *Redactor, b []byte, whole int64, ended bool, h http.Header, coding string) (string, harText, int64) {
	t := harText{MimeType: rd.String(h.Get("Content-Type")), Truncated: whole > int64(len(b)), Coding: coding}
	if mt, _, err := mime.ParseMediaType(t.MimeType); err == nil {
		t.MimeType = mt
	}
	if t.Truncated || ended {
		b = rd.Cut(b, len(b))
	} else if j, ok := rd.JSON(b); ok {
		b = j
	} else {
		b = rd.Bytes(b)
	}
	size := int64(len(b))
	if t.Truncated {
		size = whole
	}
	if utf8.Valid(b) {
		return string(b), t, size
	}
	t.Encoding = "base64"
	return base64.StdEncoding.EncodeToString(b), t, size
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
