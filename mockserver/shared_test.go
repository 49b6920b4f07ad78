package mockserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestNoViolations checks that the mock answers the proxy's endpoints 404,
// behind the admin key like every admin endpoint.
func TestNoViolations(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct {
		r      req
		status int
	}{
		{req{method: "GET", path: "/__admin/violations"}, 404},
		{req{method: "DELETE", path: "/__admin/violations"}, 404},
		{req{method: "GET", path: "/__admin/violations", auth: "-"}, 401},
	} {
		if got := serve(t, s, tc.r); got.status != tc.status {
			t.Errorf("%s %s: %d; want %d", tc.r.method, tc.r.path, got.status, tc.status)
		}
	}
}

// TestNewAdmin checks the admin surface another server builds: its
// operations bound and validated, behind the admin key; the others 404.
func TestNewAdmin(t *testing.T) {
	var served int
	h, err := NewAdmin(map[string]http.Handler{"listViolations": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served++
		w.Write([]byte("[]"))
	})}, "the-admin-key", []string{testKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path, key string
		status            int
	}{
		{"GET", "/__admin/violations", "the-admin-key", 200},
		{"GET", "/__admin/violations?severity=bad", "the-admin-key", 400},
		{"GET", "/__admin/violations", testKey, 401},
		{"DELETE", "/__admin/violations", "the-admin-key", 405},
		{"POST", "/__admin/reset", "the-admin-key", 404},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		r.Header.Set("Authorization", "Bearer "+tc.key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tc.status {
			t.Errorf("%s %s: %d %s; want %d", tc.method, tc.path, rec.Code, rec.Body, tc.status)
		}
	}
	if served != 1 {
		t.Errorf("the handler served %d requests; want 1", served)
	}
	if _, err := NewAdmin(map[string]http.Handler{"noSuchOperation": http.NotFoundHandler()}, "", nil); err == nil {
		t.Error("a handler for no operation of the document: no error")
	}
}
