package traffic

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The HAR 1.2 shapes this package reads and writes
// (http://www.softwareishard.com/blog/har-12-spec/). Only the fields the
// checks use are read; the writer fills every field the format requires.
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
		MimeType  string `json:"mimeType"`
		Text      string `json:"text"`
		Encoding  string `json:"encoding,omitempty"`   // "base64": not in HAR 1.2, written by some recorders
		Truncated bool   `json:"_truncated,omitempty"` // HARWriter's: text holds the start of a longer body
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
		Error       string     `json:"_error,omitempty"` // why there is no answer (status 0), as browsers write it
	}
	harContent struct {
		Size      int64   `json:"size"`
		MimeType  string  `json:"mimeType"`
		Text      *string `json:"text,omitempty"`
		Encoding  string  `json:"encoding,omitempty"`
		Truncated bool    `json:"_truncated,omitempty"` // HARWriter's: text holds the start of a longer body
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

// A HAREntry is one request and answer read from a HAR file.
type HAREntry struct {
	Index      int // from 0, in the file's order
	Started    time.Time
	Method     string
	URL        string
	ReqHeader  http.Header
	ReqBody    []byte
	ReqSize    int64 // len(ReqBody), or more where the recording says the text was cut
	Status     int   // 0: no answer was recorded
	RespHeader http.Header
	RespBody   []byte
	RespSize   int64 // len(RespBody), or more where the recording says the text was cut
	// RespNotRecorded says the entry holds no text for a body that had
	// bytes.
	RespNotRecorded bool
}

// ErrNotHAR says a document is JSON but not a HAR log.
var ErrNotHAR = errors.New("not a HAR file: no log.entries array")

// ReadHAR reads a HAR document and calls each for every entry in order,
// decoding one entry at a time so that a large recording is never held in
// memory whole. It stops at the first error each returns.
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

// delim reads one delimiter token, which must be want.
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

// skip consumes one value.
func skip(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}

// entry converts a decoded entry, decoding base64 bodies.
func (e *harEntry) entry(i int) (*HAREntry, error) {
	out := &HAREntry{Index: i, Method: strings.ToUpper(e.Request.Method), URL: e.Request.URL, Status: e.Response.Status,
		ReqHeader: harHeader(e.Request.Headers), RespHeader: harHeader(e.Response.Headers)}
	if e.StartedDateTime != "" {
		out.Started, _ = time.Parse(time.RFC3339Nano, e.StartedDateTime)
	}
	if out.Method == "" || out.URL == "" {
		return nil, errors.New("no request method or URL")
	}
	if e.Response.Status < 0 || e.Response.Status > 999 {
		return nil, fmt.Errorf("status %d is not an HTTP status", e.Response.Status)
	}
	if pd := e.Request.PostData; pd != nil {
		b, err := harText(pd.Text, pd.Encoding)
		if err != nil {
			return nil, fmt.Errorf("request body: %w", err)
		}
		out.ReqBody = b
		if out.ReqHeader.Get("Content-Type") == "" && pd.MimeType != "" && len(b) > 0 {
			out.ReqHeader.Set("Content-Type", pd.MimeType)
		}
		out.ReqSize = cutSize(len(b), e.Request.BodySize, pd.Truncated)
	}
	c := e.Response.Content
	if c.Text != nil {
		b, err := harText(*c.Text, c.Encoding)
		if err != nil {
			return nil, fmt.Errorf("response body: %w", err)
		}
		out.RespBody = b
		out.RespSize = cutSize(len(b), c.Size, c.Truncated)
	} else if c.Size > 0 || e.Response.BodySize > 0 {
		out.RespNotRecorded = true
	}
	return out, nil
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

// harText decodes a HAR body text.
func harText(text, encoding string) ([]byte, error) {
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
		if nv.Name == "" || strings.HasPrefix(nv.Name, ":") {
			continue
		}
		h.Add(nv.Name, nv.Value)
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
	// checked, its path standing for BasePath. Nil: entries whose path is
	// under BasePath, on any host.
	Base *url.URL
	// Limit is the bytes of each body checked; longer bodies are cut to it
	// and reported too large to check. 0: no limit.
	Limit int
}

// Exchange turns an entry into an exchange to check, or says why it is
// not the contract's traffic: another host or path, a CORS preflight, an
// entry with neither an answer nor request headers (a browser's aborted
// request). An entry without an answer (status 0) but with its request is
// an exchange whose request alone is checked.
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
	r := &http.Request{Method: e.Method, URL: &url.URL{Path: path, RawQuery: u.RawQuery}, Header: e.ReqHeader, Host: u.Host}
	if IsPreflight(r) {
		return nil, "a CORS preflight"
	}
	if e.Status == 0 && len(e.ReqHeader) == 0 {
		return nil, "no answer recorded" // a browser's aborted request: not even its headers were sent
	}
	x := &Exchange{Time: e.Started, Request: r, URL: e.URL, ReqBody: e.ReqBody, ReqSize: e.ReqSize,
		Status: e.Status, RespHeader: e.RespHeader, RespBody: e.RespBody, RespSize: e.RespSize, RespNotRecorded: e.RespNotRecorded}
	if m.Limit > 0 {
		x.ReqBody = x.ReqBody[:min(len(x.ReqBody), m.Limit)]
		x.RespBody = x.RespBody[:min(len(x.RespBody), m.Limit)]
	}
	return x, ""
}

// IsPreflight reports whether r is a CORS preflight, which a browser sends
// on its own and no contract describes.
func IsPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}
