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

// TestFront checks what the outermost layer does around a handler: a
// panic becomes a 500 Error body and a log line, both with the request id;
// a panic after the answer began, or a connection dropped on purpose,
// aborts the connection; a step that answers ends the request; and After
// sees every request, with its answer's status, before the access line.
func TestFront(t *testing.T) {
	stop := Step(func(w http.ResponseWriter, r *http.Request) *http.Request {
		if r.Header.Get("Stop") == "" {
			return r
		}
		WriteError(w, r, http.StatusForbidden, CodeCrossOrigin, "stopped")
		return nil
	})
	for _, tc := range []struct {
		name      string
		stop      bool
		handler   http.HandlerFunc
		wantCode  int
		wantAbort bool
		wantLog   string
	}{
		{"served", false, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, 204, false, "status=204"},
		{"a step answers", true, func(w http.ResponseWriter, r *http.Request) { t.Error("the handler ran after a step answered") }, 403, false, "status=403"},
		{"panic", false, func(http.ResponseWriter, *http.Request) { panic("boom") }, 500, false, "boom"},
		{"panic after the answer began", false, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200); panic("boom") }, 200, true, "boom"},
		{"dropped on purpose", false, func(w http.ResponseWriter, r *http.Request) { EntryOf(r).Aborted = true; panic(http.ErrAbortHandler) }, 200, true, "status=0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			var seen []int
			h := Front{
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Steps:  []Step{nil, stop},
				After:  []After{func(w http.ResponseWriter, r *http.Request, e *Entry) { seen = append(seen, e.Status()) }, nil},
			}.Serve(tc.handler)
			rec := httptest.NewRecorder()
			r := httptest.NewRequest("GET", "/v1/inventory", nil)
			if tc.stop {
				r.Header.Set("Stop", "1")
			}
			aborted := func() (aborted bool) {
				defer func() { aborted = recover() == http.ErrAbortHandler }()
				h.ServeHTTP(rec, r)
				return false
			}()
			if rec.Code != tc.wantCode || aborted != tc.wantAbort {
				t.Errorf("answer %d, aborted %v; want %d, aborted %v", rec.Code, aborted, tc.wantCode, tc.wantAbort)
			}
			if tc.wantCode == 500 && (!strings.Contains(rec.Body.String(), `"code":"internal"`) || !strings.Contains(rec.Body.String(), `"status":500`)) {
				t.Errorf("panic: %s; want a 500 Error body", rec.Body)
			}
			if len(seen) != 1 {
				t.Errorf("After saw %d requests; want 1", len(seen))
			}
			id := rec.Header().Get(RequestIDHeader)
			if !strings.Contains(logs.String(), tc.wantLog) || id == "" || !strings.Contains(logs.String(), "request_id="+id) {
				t.Errorf("log = %s; want %q and the request id %q", &logs, tc.wantLog, id)
			}
		})
	}
}

func BenchmarkRequireKey(b *testing.B) {
	keys := NewKeyring([]string{"test-key", "test-key-2"})
	h := Steps(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }), RequireKey(keys))
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
