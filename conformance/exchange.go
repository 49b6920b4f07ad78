package conformance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/spec"
)

// maxBody bounds how much of a response body is kept: 64 MiB, room for a
// large production list.
const maxBody = 64 << 20

// A Request is what a spec sends, relative to the target's base URL.
type Request struct {
	Method string
	Path   string // such as "/inventory/3" or "/inventory?api_key=..."; appended to the base URL
	// Auth is the Authorization header. Empty means "Bearer <key>"; use
	// NoAuth to send none.
	Auth        string
	ContentType string // empty: application/json when there is a body
	Body        []byte
}

// Values of Request.Auth that send no credential.
const (
	NoAuth    = "\x00none"  // no Authorization header
	EmptyAuth = "\x00empty" // an Authorization header with an empty value
)

// An Exchange is one request and what came back, kept so a failure can show
// both.
type Exchange struct {
	Op       *spec.Operation // the operation the path and method address; nil if none
	Method   string
	URL      string
	Header   http.Header // as sent
	Body     []byte      // as sent
	Status   int
	RespHead http.Header
	RespBody []byte
	Elapsed  time.Duration
	Err      error

	key string // for redaction
}

// send makes the request. It never fails the spec: transport errors are in
// the Exchange.
func (t *Target) send(ctx context.Context, r Request) *Exchange {
	x := &Exchange{Method: r.Method, URL: t.base.String() + r.Path, Header: http.Header{}, Body: r.Body, key: t.cfg.APIKey}
	x.Op = t.operation(r.Method, r.Path)
	switch r.Auth {
	case "":
		x.Header.Set("Authorization", "Bearer "+t.cfg.APIKey)
	case NoAuth:
	case EmptyAuth:
		x.Header["Authorization"] = []string{""}
	default:
		x.Header.Set("Authorization", r.Auth)
	}
	if r.Body != nil {
		ct := r.ContentType
		if ct == "" {
			ct = "application/json"
		}
		x.Header.Set("Content-Type", ct)
	}
	x.Header.Set("Accept", "application/json")
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, x.URL, body)
	if err != nil {
		x.Err = err
		return x
	}
	req.Header = x.Header.Clone()
	for attempt := 1; ; attempt++ {
		t.roundTrip(req, x)
		if x.Err != nil || x.Status != http.StatusTooManyRequests || attempt == maxAttempts {
			return x
		}
		// A rate limit is the target's right, not a contract failure: wait and retry.
		select {
		case <-ctx.Done():
			return x
		case <-time.After(retryAfter(x.RespHead.Get("Retry-After"))):
		}
		if r.Body != nil {
			req.Body = io.NopCloser(bytes.NewReader(r.Body))
		}
	}
}

// maxAttempts bounds the tries of a request answered 429.
const maxAttempts = 4

// retryAfter reads a Retry-After header in seconds, between 100ms and 5s.
func retryAfter(v string) time.Duration {
	d := 500 * time.Millisecond
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		d = time.Duration(s) * time.Second
	}
	return min(max(d, 100*time.Millisecond), 5*time.Second)
}

// roundTrip makes one attempt of req and records it in x.
func (t *Target) roundTrip(req *http.Request, x *Exchange) {
	start := time.Now()
	resp, err := t.client.Do(req)
	x.Err = err
	if err != nil {
		x.Elapsed = time.Since(start)
		return
	}
	defer resp.Body.Close()
	x.RespBody, x.Err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	x.Elapsed = time.Since(start)
	x.Status = resp.StatusCode
	x.RespHead = resp.Header
}

// operation returns the contract operation method and path address, or nil.
func (t *Target) operation(method, path string) *spec.Operation {
	path, _, _ = strings.Cut(path, "?")
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for _, o := range t.contract.Operations {
		if o.Method != method {
			continue
		}
		tmpl := strings.Split(strings.Trim(o.Path, "/"), "/")
		if len(tmpl) != len(segs) {
			continue
		}
		match := true
		for i, s := range tmpl {
			if !strings.HasPrefix(s, "{") && s != segs[i] {
				match = false
				break
			}
		}
		if match {
			return o
		}
	}
	return nil
}

// opName names an operation: its operationId, or "GET /pets/{petId}".
func opName(o *spec.Operation) string {
	if o == nil {
		return "no operation"
	}
	if o.ID != "" {
		return o.ID
	}
	return o.Method + " " + o.Path
}

// MediaType returns the response's media type without parameters.
func (x *Exchange) MediaType() string {
	mt, _, err := mime.ParseMediaType(x.RespHead.Get("Content-Type"))
	if err != nil {
		return strings.TrimSpace(x.RespHead.Get("Content-Type"))
	}
	return mt
}

// redact replaces the API key in s.
func (x *Exchange) redact(s string) string {
	if x.key == "" {
		return s
	}
	return strings.ReplaceAll(s, x.key, KeyPlaceholder)
}

// redactErr renders the transport error without the key (a url.Error
// repeats the URL, query string included).
func (x *Exchange) redactErr() string {
	if x.Err == nil {
		return ""
	}
	return x.redact(x.Err.Error())
}

// Curl renders the request as a curl command with the key replaced by
// $INVENTORY_API_KEY.
func (x *Exchange) Curl() string {
	args := []string{"curl", "-sS", "-i", "-X", x.Method, x.shellQuote(x.URL)}
	names := make([]string, 0, len(x.Header))
	for n := range x.Header {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, v := range x.Header[n] {
			args = append(args, "-H", x.shellQuote(n+": "+v))
		}
	}
	if x.Body != nil {
		if len(x.Body) > 512 {
			args = append(args, "--data-binary", "@body.json", fmt.Sprintf("# body.json: %d bytes, starting %s", len(x.Body), x.redact(printable(x.Body[:80]))))
		} else {
			args = append(args, "--data-binary", x.shellQuote(string(x.Body)))
		}
	}
	return strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell. Where the key occurs, the quoting
// is double so that $INVENTORY_API_KEY expands.
func (x *Exchange) shellQuote(s string) string {
	if x.key == "" || !strings.Contains(s, x.key) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	parts := strings.Split(s, x.key)
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	for i, p := range parts {
		parts[i] = esc.Replace(p)
	}
	return `"` + strings.Join(parts, KeyPlaceholder) + `"`
}

// printable renders b for a message on one line: invalid UTF-8 becomes
// U+FFFD and control characters are escaped.
func printable(b []byte) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '·'
		}
		return r
	}, strings.ToValidUTF8(string(b), "\uFFFD"))
}

// Got describes the response: status, content type, time and body, the
// body cut to a readable length.
func (x *Exchange) Got() string {
	if x.Err != nil {
		return "no response: " + x.redactErr()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s, Content-Type %q, after %s", x.Status, http.StatusText(x.Status), x.RespHead.Get("Content-Type"), x.Elapsed.Round(time.Millisecond))
	body := x.RespBody
	const show = 600
	switch {
	case len(body) == 0:
		b.WriteString("\n          (empty body)")
	case len(body) > show:
		fmt.Fprintf(&b, "\n          %s ... (%d bytes in all)", x.redact(printable(body[:show])), len(body))
	default:
		fmt.Fprintf(&b, "\n          %s", x.redact(printable(body)))
	}
	return b.String()
}

// Want renders a failure message: what the contract wanted, the request as
// curl and what came back.
func (x *Exchange) Want(format string, args ...any) string {
	return fmt.Sprintf("contract: %s\nrequest:  %s\ngot:      %s\n", x.redact(fmt.Sprintf(format, args...)), x.Curl(), x.Got())
}
