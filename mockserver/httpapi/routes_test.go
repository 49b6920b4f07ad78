package httpapi

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/spec"
)

// TestAdminMux checks the admin API of one server: its operations bound
// and validated; the other server's answering 404 with whose they are;
// a handler missing or without an operation refused.
func TestAdminMux(t *testing.T) {
	doc, err := spec.Admin()
	if err != nil {
		t.Fatal(err)
	}
	var served int
	ok := func(w http.ResponseWriter, r *http.Request, _ *Request) {
		served++
		w.Write([]byte("[]"))
	}
	h, err := AdminMux(doc, ProxyTag, map[string]Handler{"listViolations": ok, "clearViolations": ok})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/__admin/violations", 200, "[]"},
		{"GET", "/__admin/violations?severity=bad", 400, "severity"},
		{"PUT", "/__admin/violations", 405, "allowed: DELETE, GET, HEAD"},
		{"POST", "/__admin/reset", 404, "is the mock (inventory-mock without --proxy-to)'s"},
		{"GET", "/__admin/nowhere", 404, "no such path"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.body) {
			t.Errorf("%s %s: %d %s; want %d with %q", tc.method, tc.path, rec.Code, rec.Body, tc.status, tc.body)
		}
	}
	if served != 1 {
		t.Errorf("the handler served %d requests; want 1", served)
	}
	if _, err := AdminMux(doc, ProxyTag, map[string]Handler{"listViolations": ok}); err == nil || !strings.Contains(err.Error(), "clearViolations") {
		t.Errorf("an operation without a handler: error %v", err)
	}
	if _, err := AdminMux(doc, ProxyTag, map[string]Handler{"listViolations": ok, "clearViolations": ok, "noSuchOperation": ok}); err == nil {
		t.Error("a handler for no operation of the document: no error")
	}
}

// TestRecover checks that a panic becomes a 500 Error body and a log line,
// and that a request id the access log made is on both.
func TestRecover(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	h := Chain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), AccessLog(logger, nil), Recover(logger, nil))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/inventory", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"code":"internal"`) || !strings.Contains(rec.Body.String(), `"status":500`) {
		t.Errorf("panic: %d %s; want a 500 Error body", rec.Code, rec.Body)
	}
	id := rec.Header().Get(RequestIDHeader)
	if !strings.Contains(logs.String(), "boom") || id == "" || strings.Count(logs.String(), id) != 2 {
		t.Errorf("want the panic and the access line, both with the request id %q:\n%s", id, &logs)
	}
}

func BenchmarkRequireKey(b *testing.B) {
	keys := NewKeyring([]string{"test-key", "test-key-2"})
	h := RequireKey(keys)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	for _, tc := range []struct{ name, auth string }{{"valid", "Bearer test-key"}, {"invalid", "Bearer wrong-key"}} {
		b.Run(tc.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/v1/inventory", nil)
			r.Header.Set("Authorization", tc.auth)
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), r)
			}
		})
	}
}
