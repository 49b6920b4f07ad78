package mockserver

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/metrics"
)

// guarded sends one request to s with the given Host and headers, and
// returns the recorder.
func guarded(s *Server, method, host, path, body string, header map[string]string) *httptest.ResponseRecorder {
	var r *http.Request
	if body == "" {
		r = httptest.NewRequest(method, path, nil)
	} else {
		r = httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	}
	r.Host = host
	r.Header.Set("Authorization", "Bearer "+testKey)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// errorCode returns the code of an Error body; "" for another body.
func errorCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var e struct {
		Code   string
		Status int
	}
	if json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Status != w.Code {
		return ""
	}
	return e.Code
}

// TestAdminHosts checks the Host header on /__admin/: the names that
// reach this machine (localhost, its subdomains, IP addresses) and the
// allowed hosts pass; another name, as a page that rebinds its own name to
// 127.0.0.1 sends, is refused with an Error body. The contract's
// operations answer whatever the Host.
func TestAdminHosts(t *testing.T) {
	s := newServer(t, func(c *Config) { c.AllowedHosts = []string{"inventory-mock", "Mock.Internal."} })
	tests := []struct {
		host, path string
		status     int
		code       string
	}{
		{"127.0.0.1:8080", "/__admin/requests", 200, ""},
		{"localhost:8080", "/__admin/requests", 200, ""},
		{"LOCALHOST.:8080", "/__admin/requests", 200, ""},
		{"app.localhost:8080", "/__admin/requests", 200, ""},
		{"[::1]:8080", "/__admin/requests", 200, ""},
		{"10.0.0.7:8080", "/__admin/requests", 200, ""},
		{"inventory-mock:8080", "/__admin/requests", 200, ""},
		{"mock.internal", "/__admin/chaos", 200, ""},
		{"", "/__admin/requests", 200, ""}, // HTTP/1.0 without Host: no browser
		{"evil.example:8080", "/__admin/requests", 403, httpapi.CodeHostNotAllowed},
		{"evil.example:8080", "/__admin/", 403, httpapi.CodeHostNotAllowed},
		{"evil.example:8080", "/__admin/openapi.yaml", 403, httpapi.CodeHostNotAllowed},
		{"evil.example:8080", "/__admin", 403, httpapi.CodeHostNotAllowed},
		{"localhost.evil.example", "/__admin/chaos", 403, httpapi.CodeHostNotAllowed},
		{"inventory-mock.evil.example", "/__admin/chaos", 403, httpapi.CodeHostNotAllowed},
		{"evil.example:8080", "/v1/inventory", 200, ""},
		{"evil.example:8080", "/healthz", 200, ""},
		{"evil.example:8080", "/__adminx", 404, httpapi.CodeNotFound},
	}
	for _, tt := range tests {
		w := guarded(s, "GET", tt.host, tt.path, "", nil)
		if w.Code != tt.status || (tt.code != "" && errorCode(t, w) != tt.code) {
			t.Errorf("GET %s with Host %q = %d %s; want %d %s", tt.path, tt.host, w.Code, w.Body, tt.status, tt.code)
		}
		if tt.code == httpapi.CodeHostNotAllowed && !strings.Contains(w.Body.String(), "--allowed-host") {
			t.Errorf("GET %s with Host %q: the message does not name --allowed-host: %s", tt.path, tt.host, w.Body)
		}
	}
	anyHost := newServer(t, func(c *Config) { c.AllowedHosts = []string{"*"} })
	if w := guarded(anyHost, "GET", "evil.example", "/__admin/requests", "", nil); w.Code != 200 {
		t.Errorf("with AllowedHosts *: %d %s; want 200", w.Code, w.Body)
	}
}

// TestAdminCORS checks what a page of another origin gets from /__admin/:
// no CORS header, so its browser keeps every answer from it, and a
// change refused outright; the contract's operations keep answering any
// origin; the dashboard's own requests (same origin) and the pages of
// AdminOrigins pass. Each refused origin is logged once.
func TestAdminCORS(t *testing.T) {
	var logs bytes.Buffer
	s := newServer(t, func(c *Config) {
		c.AdminOrigins = []string{"http://LOCALHOST:3000/"}
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	const host = "127.0.0.1:8080"
	evil := "https://evil.example"
	preflight := func(origin, method string) map[string]string {
		return map[string]string{"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": "authorization"}
	}
	chaos := `{"rules": [{"fault": "reset"}]}`
	tests := []struct {
		name               string
		method, path, body string
		header             map[string]string
		status             int
		code               string
		allowOrigin        string
	}{
		{"the list, from any origin", "GET", "/v1/inventory", "", map[string]string{"Origin": evil}, 200, "", "*"},
		{"the list's preflight", "OPTIONS", "/v1/inventory", "", preflight(evil, "GET"), 204, "", "*"},
		{"the journal's preflight", "OPTIONS", "/__admin/requests", "", preflight(evil, "GET"), 204, "", ""},
		{"the chaos rules' preflight", "OPTIONS", "/__admin/chaos", "", preflight(evil, "PUT"), 204, "", ""},
		{"the journal, read cross-site", "GET", "/__admin/requests", "", map[string]string{"Origin": evil, "Sec-Fetch-Site": "cross-site"}, 200, "", ""},
		{"chaos put cross-site", "PUT", "/__admin/chaos", chaos, map[string]string{"Origin": evil, "Sec-Fetch-Site": "cross-site"}, 403, httpapi.CodeCrossOrigin, ""},
		{"chaos put from another port of this site", "PUT", "/__admin/chaos", chaos, map[string]string{"Origin": "http://127.0.0.1:9999", "Sec-Fetch-Site": "same-site"}, 403, httpapi.CodeCrossOrigin, ""},
		{"chaos put, Origin only", "PUT", "/__admin/chaos", chaos, map[string]string{"Origin": evil}, 403, httpapi.CodeCrossOrigin, ""},
		{"a reset cross-site", "POST", "/__admin/reset", "", map[string]string{"Origin": evil, "Sec-Fetch-Site": "cross-site"}, 403, httpapi.CodeCrossOrigin, ""},
		{"chaos put by the dashboard", "PUT", "/__admin/chaos", `{"rules": []}`, map[string]string{"Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}, 200, "", ""},
		{"chaos put by curl", "PUT", "/__admin/chaos", `{"rules": []}`, nil, 200, "", ""},
		{"the admin origin's preflight", "OPTIONS", "/__admin/chaos", "", preflight("http://localhost:3000", "PUT"), 204, "", "http://localhost:3000"},
		{"chaos put by the admin origin", "PUT", "/__admin/chaos", `{"rules": []}`, map[string]string{"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"}, 200, "", "http://localhost:3000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := guarded(s, tt.method, host, tt.path, tt.body, tt.header)
			if w.Code != tt.status || (tt.code != "" && errorCode(t, w) != tt.code) {
				t.Errorf("%s %s = %d %s; want %d %s", tt.method, tt.path, w.Code, w.Body, tt.status, tt.code)
			}
			if got := w.Header().Get("Access-Control-Allow-Origin"); got != tt.allowOrigin {
				t.Errorf("Access-Control-Allow-Origin = %q; want %q", got, tt.allowOrigin)
			}
		})
	}
	if rules := s.Chaos().Rules; len(rules) != 0 {
		t.Errorf("chaos rules in force: %+v; want none (every put of a rule was refused)", rules)
	}
	if n := strings.Count(logs.String(), "origin="+evil); n != 1 || !strings.Contains(logs.String(), "--admin-origin "+evil) {
		t.Errorf("the log names %s %d times; want once, with --admin-origin:\n%s", evil, n, &logs)
	}
	if strings.Contains(logs.String(), "origin=http://"+host) {
		t.Errorf("the log names the dashboard's own origin as refused:\n%s", &logs)
	}
}

// TestCORSRefusalsAreLogged checks that a page of an origin the
// contract's operations refuse is logged once, with the flag to give.
func TestCORSRefusalsAreLogged(t *testing.T) {
	var logs bytes.Buffer
	s := newServer(t, func(c *Config) {
		c.CORSOrigins = []string{"http://localhost:3000"}
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	for range 3 {
		w := guarded(s, "OPTIONS", "127.0.0.1:8080", "/v1/inventory", "", map[string]string{"Origin": "http://localhost:5173", "Access-Control-Request-Method": "GET"})
		if w.Code != 204 || w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("preflight of a refused origin = %d %v; want 204 without CORS headers", w.Code, w.Header())
		}
	}
	if n := strings.Count(logs.String(), "CORS: refused"); n != 1 || !strings.Contains(logs.String(), "--cors-origin http://localhost:5173") {
		t.Errorf("the log has %d refusals; want one naming --cors-origin http://localhost:5173:\n%s", n, &logs)
	}
}

// TestAdminOriginStar checks that the admin API is never opened to every
// origin.
func TestAdminOriginStar(t *testing.T) {
	if _, err := New(Config{AdminOrigins: []string{"*"}}); err == nil || !strings.Contains(err.Error(), "never open to every origin") {
		t.Errorf("New with AdminOrigins * = %v; want a refusal", err)
	}
}

// TestMetricsGuarded: /metrics tells what the mock has served, so it
// keeps the admin API's rules: a Host a page rebinds to this machine is
// refused, and a page of another origin gets no CORS header (its browser
// keeps the answer from it), where the contract's operations answer any
// origin with "*".
func TestMetricsGuarded(t *testing.T) {
	s := newServer(t, func(c *Config) { c.Metrics = metrics.New() })
	tests := []struct {
		name, host, path, origin string
		status                   int
		code                     string
		allowOrigin              string // Access-Control-Allow-Origin
	}{
		{"loopback", "127.0.0.1:8080", "/metrics", "", 200, "", ""},
		{"rebound name", "evil.example:8080", "/metrics", "", 403, httpapi.CodeHostNotAllowed, ""},
		{"page of another origin", "127.0.0.1:8080", "/metrics", "http://evil.example", 200, "", ""},
		{"the API, for comparison", "127.0.0.1:8080", "/v1/inventory", "http://evil.example", 200, "", "*"},
	}
	for _, tt := range tests {
		var h map[string]string
		if tt.origin != "" {
			h = map[string]string{"Origin": tt.origin}
		}
		w := guarded(s, "GET", tt.host, tt.path, "", h)
		if w.Code != tt.status || (tt.code != "" && errorCode(t, w) != tt.code) || w.Header().Get("Access-Control-Allow-Origin") != tt.allowOrigin {
			t.Errorf("%s: GET %s, Host %s, Origin %q = %d %s, Access-Control-Allow-Origin %q; want %d %s, %q", tt.name, tt.path, tt.host, tt.origin,
				w.Code, errorCode(t, w), w.Header().Get("Access-Control-Allow-Origin"), tt.status, tt.code, tt.allowOrigin)
		}
	}
}
