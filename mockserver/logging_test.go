package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/spec/exchange"

	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/petstore/inventory-kit/mockserver/store"
)

// panickyStore is a store whose List panics, a bug in the mock's path.
type panickyStore struct{ store.Store }

func (panickyStore) List(context.Context, string) (store.List, error) { panic("boom in List") }

// jsonLogLines decodes JSON log lines.
func jsonLogLines(t *testing.T, logs *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestPanicGetsAccessLine checks, through New's chain, that a request
// whose handler panics is answered with a 500 Error and still gets its
// access-log line, with that status, beside the panic's line: the logger
// sits outside the recoverer.
func TestPanicGetsAccessLine(t *testing.T) {
	var logs bytes.Buffer
	s := newServer(t, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
		c.Store = panickyStore{store.NewMemory(testRecords(t), store.Options{})}
	})
	got := serve(t, s, req{method: "GET", path: "/v1/inventory"})
	if got.status != 500 || got.Code != httpapi.CodeInternal {
		t.Fatalf("panic: %d %s; want 500 %s", got.status, got.body, httpapi.CodeInternal)
	}
	var access, panicked map[string]any
	for _, l := range jsonLogLines(t, &logs) {
		switch l["msg"] {
		case "request":
			access = l
		case "panic":
			panicked = l
		}
	}
	if access == nil || access["status"] != float64(500) || access["path"] != "/v1/inventory" || access["code"] != httpapi.CodeInternal {
		t.Errorf("access line = %v; want one with status 500, code internal, path /v1/inventory\n%s", access, logs.String())
	}
	if panicked == nil || !strings.Contains(panicked["panic"].(string), "boom in List") || panicked["request_id"] != access["request_id"] {
		t.Errorf("panic line = %v; want the panic, with the access line's request id", panicked)
	}
}

// maxLoggedPath is the most of a path an access line holds (httpapi's).
const maxLoggedPath = 256

// TestLoggedPathIsCapped checks that a long path is cut in the access log
// line, with its length said, and that the panic line cuts it the same
// way, at the start of a character, with keys replaced.
func TestLoggedPathIsCapped(t *testing.T) {
	long := "/v1/" + strings.Repeat("a", maxLoggedPath-5) + "é" + strings.Repeat("b", 5000)
	var logs bytes.Buffer
	s := newServer(t, func(c *Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	if got := serve(t, s, req{method: "GET", path: long}); got.status != 404 {
		t.Fatalf("status = %d; want 404", got.status)
	}
	lines := jsonLogLines(t, &logs)
	path, _ := lines[len(lines)-1]["path"].(string)
	if len(path) > maxLoggedPath+32 || !strings.HasSuffix(path, "...(5257 bytes)") || !strings.HasPrefix(path, "/v1/aaaa") {
		t.Errorf("access log path = %q (%d bytes); want at most %d bytes of it, and its length", path, len(path), maxLoggedPath)
	}

	key := "secret-key-in-the-path"
	for _, tt := range []struct{ name, path, want string }{
		{"cut inside a character", long, "/v1/" + strings.Repeat("a", maxLoggedPath-5) + "...(5257 bytes)"},
		{"a key", "/v1/inventory/" + key, "/v1/inventory/" + exchange.Redacted},
		{"a key, escaped", "/v1/inventory/%73ecret-key-in-the-path", "/v1/inventory/" + exchange.Redacted},
		{"a key in a long path", "/v1/" + key + "/" + strings.Repeat("c", 1000), "/v1/" + exchange.Redacted + "/" + strings.Repeat("c", maxLoggedPath-len("/v1/"+exchange.Redacted+"/")) + "...(1027 bytes)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := httpapi.Front{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Redactor: exchange.NewRedactor(exchange.Secret{Value: key})}.Serve(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
			r := httptest.NewRequest("GET", "/", nil)
			r.URL.Path = tt.path
			h.ServeHTTP(httptest.NewRecorder(), r)
			got, _ := jsonLogLines(t, &logs)[0]["path"].(string)
			if got != tt.want || !utf8.ValidString(got) || strings.Contains(got, key) {
				t.Errorf("panic line path = %q; want %q", got, tt.want)
			}
		})
	}
}

// TestBodyEndsEarly checks, over a real connection, that a body shorter
// than its Content-Length, whether the client stops sending (EOF) or
// stalls past the server's read timeout, is 400 invalid_body "ended
// early", not payload_too_large.
func TestBodyEndsEarly(t *testing.T) {
	s := newServer(t)
	srv := httptest.NewUnstartedServer(s)
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	for _, tt := range []struct {
		name  string
		close bool // the client closes its side after the short body
	}{
		{"the client stops sending", true},
		{"the client stalls past the read timeout", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			body := `{"quantity":7`
			io.WriteString(conn, "PATCH /v1/inventory/3 HTTP/1.1\r\nHost: mock.test\r\nAuthorization: Bearer "+testKey+
				"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"+body)
			if tt.close {
				conn.(*net.TCPConn).CloseWrite()
			}
			start := time.Now()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			defer resp.Body.Close()
			var e errorBody
			json.NewDecoder(resp.Body).Decode(&e)
			if resp.StatusCode != 400 || e.Code != httpapi.CodeInvalidBody || !strings.Contains(e.Message.(string), "ended early") {
				t.Errorf("answer %d %+v; want 400 %s saying the body ended early", resp.StatusCode, e, httpapi.CodeInvalidBody)
			}
			if !tt.close && time.Since(start) > 5*time.Second {
				t.Errorf("answered after %s; want soon after the 300 ms read timeout", time.Since(start))
			}
		})
	}
	if it := stored(t, s, 3); it.Quantity == 7 {
		t.Error("a body that ended early was written")
	}
}
