package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// errorRequests are requests the mock answers with an Error, each with the
// code the answer and the access log carry.
var errorRequests = []struct {
	name   string
	r      req
	status int
	code   string
}{
	{"no key", req{method: "GET", path: "/v1/inventory", auth: "-"}, 401, httpapi.CodeUnauthorized},
	{"unknown key", req{method: "GET", path: "/v1/inventory", auth: "Bearer nope"}, 401, httpapi.CodeUnauthorized},
	{"an API key on the admin API", req{method: "POST", path: "/__admin/reset"}, 401, "admin_key_required"},
	{"no such pet", req{method: "PATCH", path: "/v1/inventory/9999", body: `{"quantity":1}`}, 404, "not_found"},
	{"no such path", req{method: "GET", path: "/v2/nothing"}, 404, "not_found"},
	{"the root", req{method: "GET", path: "/"}, 404, "not_found"},
	{"a forced 404", req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity":1}`, header: http.Header{"Prefer": {"code=404"}}}, 404, "not_found"},
	{"wrong method", req{method: "DELETE", path: "/v1/inventory"}, 405, "method_not_allowed"},
	{"bad body", req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity":"many"}`}, 400, "invalid_body"},
	{"bad petId", req{method: "PATCH", path: "/v1/inventory/abc", body: `{"quantity":1}`}, 400, "invalid_parameter"},
	{"wrong content type", req{method: "PATCH", path: "/v1/inventory/3", contentType: "text/plain", body: `{"quantity":1}`}, 400, "unsupported_media_type"},
	{"bad Prefer", req{method: "GET", path: "/v1/inventory", header: http.Header{"Prefer": {"code=abc"}}}, 400, httpapi.CodeInvalidPreference},
	{"no handler", req{method: "GET", path: "/v1/store/orders"}, 501, "not_implemented"},
}

// TestErrorsAreNotCached: every Error answer carries Cache-Control:
// no-store, so that no browser or proxy serves a 401 or a 404 again after
// the key or the pet is there.
func TestErrorsAreNotCached(t *testing.T) {
	s := newServer(t, func(c *Config) { c.AdminKey = "admin-secret" })
	for _, tt := range errorRequests {
		t.Run(tt.name, func(t *testing.T) {
			got := serve(t, s, tt.r)
			if got.status != tt.status || got.Code != tt.code {
				t.Fatalf("answer = %d %v; want %d %s", got.status, got.Code, tt.status, tt.code)
			}
			if cc := got.header.Values("Cache-Control"); len(cc) != 1 || cc[0] != "no-store" {
				t.Errorf("Cache-Control = %q; want no-store", cc)
			}
		})
	}
}

// loggers are the loggers the access log writes through: the mock's own
// (text and JSON, formatted by the access log itself) and a plain slog
// handler (formatted by slog). parse reads one line into its fields.
var loggers = []struct {
	name  string
	new   func(*bytes.Buffer) *slog.Logger
	parse func(string) map[string]string
}{
	{"inventory-mock's text", func(b *bytes.Buffer) *slog.Logger { return httpapi.NewLogger(b, false) }, parseText},
	{"inventory-mock's JSON", func(b *bytes.Buffer) *slog.Logger { return httpapi.NewLogger(b, true) }, parseJSON},
	{"slog's JSON handler", func(b *bytes.Buffer) *slog.Logger { return slog.New(slog.NewJSONHandler(b, nil)) }, parseJSON},
}

var textField = regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\S*)`)

func parseText(line string) map[string]string {
	f := map[string]string{}
	for _, m := range textField.FindAllStringSubmatch(line, -1) {
		v := m[2]
		if strings.HasPrefix(v, `"`) {
			json.Unmarshal([]byte(v), &v)
		}
		f[m[1]] = v
	}
	return f
}

func parseJSON(line string) map[string]string {
	var raw map[string]any
	if err := json.Unmarshal([]byte(line), &raw); err != nil {
		return nil
	}
	f := map[string]string{}
	for k, v := range raw {
		f[k] = fmt.Sprint(v)
	}
	return f
}

// logLines returns the fields of each line the logger wrote.
func logLines(out string, parse func(string) map[string]string) []map[string]string {
	var lines []map[string]string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		lines = append(lines, parse(l))
	}
	return lines
}

// lineOf finds the access-log line of the request with the given id.
func lineOf(lines []map[string]string, id string) map[string]string {
	for _, l := range lines {
		if l["request_id"] == id && l["method"] != "" {
			return l
		}
	}
	return nil
}

// TestAccessLogLine: the line of each request carries its request id (the
// one the answer carries), its status and, for an error, the Error code,
// the way a support engineer finds the request a user reports.
func TestAccessLogLine(t *testing.T) {
	for _, lg := range loggers {
		t.Run(lg.name, func(t *testing.T) {
			var logs bytes.Buffer
			s := newServer(t, func(c *Config) { c.Logger = lg.new(&logs); c.AdminKey = "admin-secret" })
			ids := map[string]string{} // case name → request id
			for i, tt := range errorRequests {
				r := tt.r
				r.header = r.header.Clone()
				if r.header == nil {
					r.header = http.Header{}
				}
				r.header.Set(httpapi.RequestIDHeader, fmt.Sprintf("case-%d", i))
				serve(t, s, r)
				ids[tt.name] = fmt.Sprintf("case-%d", i)
			}
			ok := serve(t, s, req{method: "GET", path: "/v1/inventory", header: http.Header{httpapi.RequestIDHeader: {"fine-1"}}})
			lines := logLines(logs.String(), lg.parse)
			for _, tt := range errorRequests {
				l := lineOf(lines, ids[tt.name])
				if l == nil {
					t.Errorf("%s: no log line with request_id=%s:\n%s", tt.name, ids[tt.name], &logs)
					continue
				}
				if l["code"] != tt.code || l["status"] != fmt.Sprint(tt.status) {
					t.Errorf("%s: log line has status=%s code=%q; want status=%d code=%s", tt.name, l["status"], l["code"], tt.status, tt.code)
				}
			}
			l := lineOf(lines, ok.header.Get(httpapi.RequestIDHeader))
			if l == nil || l["status"] != "200" {
				t.Fatalf("no 200 line with the id the answer carries (%s):\n%s", ok.header.Get(httpapi.RequestIDHeader), &logs)
			}
			if code, has := l["code"]; has {
				t.Errorf("a 200 line carries code=%q", code)
			}
		})
	}
}

// TestRequestID: a caller's usable X-Request-Id comes back on the answer
// and in the log line; anything else (too long, spaced, two of them, one
// holding the key) is replaced by an id the mock makes, never echoed.
func TestRequestID(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name   string
		sent   []string // the X-Request-Id values sent; nil for none
		auth   string
		echoed bool
	}{
		{"a caller's id", []string{"abc-123"}, "", true},
		{"a caller's id on a 401", []string{"trace-7f3a"}, "-", true},
		{"a UUID", []string{"0b9e7c1e-6a63-4a8e-9c43-2f1b8d4e5a6f"}, "", true},
		{"128 bytes", []string{strings.Repeat("y", 128)}, "", true},
		{"none", nil, "", false},
		{"300 bytes", []string{long}, "", false},
		{"spaces", []string{"a b"}, "", false},
		{"two of them", []string{"one", "two"}, "", false},
		{"the key itself", []string{testKey}, "", false},
		{"a quote", []string{`a"b`}, "", false},
	}
	var logs bytes.Buffer
	s := newServer(t, func(c *Config) { c.Logger = httpapi.NewLogger(&logs, false) })
	made := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs.Reset()
			got := serve(t, s, req{method: "GET", path: "/v1/inventory", auth: tt.auth, header: http.Header{httpapi.RequestIDHeader: tt.sent}})
			ids := got.header.Values(httpapi.RequestIDHeader)
			if len(ids) != 1 || ids[0] == "" {
				t.Fatalf("X-Request-Id = %q; want one id", ids)
			}
			id := ids[0]
			switch {
			case tt.echoed && id != tt.sent[0]:
				t.Errorf("X-Request-Id = %q; want the caller's %q echoed", id, tt.sent[0])
			case !tt.echoed && len(tt.sent) > 0 && id == tt.sent[0]:
				t.Errorf("X-Request-Id %q echoed; want one the mock makes", id)
			case !tt.echoed && made[id]:
				t.Errorf("X-Request-Id %q made twice", id)
			}
			made[id] = true
			line := parseText(strings.TrimSpace(logs.String()))
			if line["request_id"] != id {
				t.Errorf("log line request_id = %q; want %q, the answer's:\n%s", line["request_id"], id, &logs)
			}
			if strings.Contains(logs.String(), testKey) {
				t.Errorf("the log holds the key:\n%s", &logs)
			}
		})
	}
}

// TestCORSDefaultPort: an origin configured with its scheme's default port
// matches the Origin a browser sends, which leaves the port out.
func TestCORSDefaultPort(t *testing.T) {
	s := newServer(t, func(c *Config) { c.CORSOrigins = []string{"http://localhost:80", "HTTPS://App.Test:443/"} })
	for _, origin := range []string{"http://localhost", "https://app.test"} {
		got := serve(t, s, req{method: "OPTIONS", path: "/v1/inventory", auth: "-", header: http.Header{"Origin": {origin}, "Access-Control-Request-Method": {"GET"}}})
		if h := got.header.Get("Access-Control-Allow-Origin"); h != origin {
			t.Errorf("preflight from %s: Access-Control-Allow-Origin = %q; want it", origin, h)
		}
	}
	got := serve(t, s, req{method: "OPTIONS", path: "/v1/inventory", auth: "-", header: http.Header{"Origin": {"http://localhost:8080"}, "Access-Control-Request-Method": {"GET"}}})
	if h := got.header.Get("Access-Control-Allow-Origin"); h != "" {
		t.Errorf("preflight from another port: Access-Control-Allow-Origin = %q; want none", h)
	}
}
