package proxy

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec"
)

// testKey is the key the test mock accepts; no report may contain it.
const testKey = "px-test-key-4b9e1c7a2d"

// newMock returns the mock with the default fixtures, serving testKey.
func newMock(tb testing.TB) *mockserver.Server {
	tb.Helper()
	return mockserver.NewTest(tb, mockserver.Config{APIKeys: []string{testKey}})
}

// startProxy starts a proxy in front of upstream (an address with its
// base path) and returns its address and the proxy.
func startProxy(tb testing.TB, upstream string, cfg Config) (string, *Proxy) {
	tb.Helper()
	c, err := spec.Shared()
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Contract, cfg.Upstream = c, upstream
	if cfg.APIKeys == nil {
		cfg.APIKeys = []string{testKey}
	}
	p, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(p)
	tb.Cleanup(srv.Close)
	return srv.URL, p
}

// do sends a request with the test key and returns the answer, its body read.
func do(tb testing.TB, method, url, body string, header ...string) (*http.Response, []byte) {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		tb.Fatal(err)
	}
	return resp, b
}

// rules lists the findings as "operation rule path" lines.
func rules(fs []spec.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Operation+" "+f.Rule+" "+f.Path)
	}
	return out
}

func TestForwardsUnchanged(t *testing.T) {
	mock := httptest.NewServer(newMock(t))
	defer mock.Close()
	addr, p := startProxy(t, mock.URL+"/v1", Config{})
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/v1/inventory", ""},
		{"PATCH", "/v1/inventory/3", `{"quantity":7}`},
		{"PATCH", "/v1/inventory/3", `{"quantity":"many"}`},
		{"GET", "/v1/inventory?x=1;y=2", ""},
		{"GET", "/v1/pets/1", ""},
		{"GET", "/v1//inventory", ""},
		{"DELETE", "/v1/inventory", ""},
	} {
		direct, db := do(t, tc.method, mock.URL+tc.path, tc.body)
		proxied, pb := do(t, tc.method, addr+tc.path, tc.body)
		if direct.StatusCode != proxied.StatusCode || !bytes.Equal(db, pb) {
			t.Errorf("%s %s: proxied %d %s; direct %d %s", tc.method, tc.path, proxied.StatusCode, pb, direct.StatusCode, db)
		}
		for _, h := range []string{"Content-Type", "Cache-Control", "Content-Length", "Www-Authenticate", "Deprecation", "X-Stability", "Allow"} {
			if d, p := direct.Header.Values(h), proxied.Header.Values(h); strings.Join(d, ",") != strings.Join(p, ",") {
				t.Errorf("%s %s: header %s proxied %q; direct %q", tc.method, tc.path, h, p, d)
			}
		}
		if n := len(proxied.Header.Values(httpapi.RequestIDHeader)); n != 1 {
			t.Errorf("%s %s: %d X-Request-Id headers; want the backend's one", tc.method, tc.path, n)
		}
	}
	// The invalid PATCH and the unknown method are the client's; the mock answered each as the contract says.
	settle(t, p, 7)
	var got []string
	for _, f := range p.Findings().List() {
		if f.Where == spec.WhereResponse {
			got = append(got, f.Operation+" "+f.Rule+" "+f.Path)
		}
	}
	if len(got) > 0 {
		t.Errorf("findings about the mock's answers: %q", got)
	}
}

func TestBasePathMapping(t *testing.T) {
	var seen []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.RequestURI())
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("[]"))
	}))
	defer backend.Close()
	addr, _ := startProxy(t, backend.URL+"/api/inventory-service/v1/", Config{})
	do(t, "GET", addr+"/v1/inventory?limit=5", "")
	do(t, "GET", addr+"/v1/inventory/a%2Fb", "")
	resp, body := do(t, "GET", addr+"/elsewhere", "")
	want := []string{"/api/inventory-service/v1/inventory?limit=5", "/api/inventory-service/v1/inventory/a%2Fb"}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("backend saw %q; want %q", seen, want)
	}
	if resp.StatusCode != 404 || !bytes.Contains(body, []byte(`"status":404`)) {
		t.Errorf("a path outside /v1: %d %s; want 404 with an Error body", resp.StatusCode, body)
	}
}

func TestUpstreamDown(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	url := down.URL
	down.Close()
	addr, p := startProxy(t, url+"/v1", Config{})
	resp, body := do(t, "GET", addr+"/v1/inventory", "")
	var e struct {
		Code   string
		Status int
	}
	if resp.StatusCode != 502 || json.Unmarshal(body, &e) != nil || e.Status != 502 || e.Code != "upstream_unreachable" {
		t.Fatalf("backend down: %d %s; want 502 with an Error body", resp.StatusCode, body)
	}
	settle(t, p, 1)
	if got := rules(p.Findings().List()); strings.Join(got, ",") != "listInventory no-answer status" {
		t.Errorf("findings %q; want the no-answer one", got)
	}
}

func TestUpstreamTimeout(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/inventory/1" { // headers, then silence
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			w.Write([]byte(`{"petId":1,`))
			http.NewResponseController(w).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	addr, p := startProxy(t, slow.URL+"/v1", Config{Timeout: 200 * time.Millisecond})
	start := time.Now()
	resp, _ := do(t, "GET", addr+"/v1/inventory", "")
	if resp.StatusCode != http.StatusGatewayTimeout || time.Since(start) > 5*time.Second {
		t.Errorf("a silent backend: %d after %s; want 504 after about 200ms", resp.StatusCode, time.Since(start))
	}
	req, _ := http.NewRequest("PATCH", addr+"/v1/inventory/1", strings.NewReader(`{"quantity":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testKey)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Error("an answer that stops half-way reached the client whole")
		}
	}
	settle(t, p, 2)
	got := strings.Join(rules(p.Findings().List()), ",")
	for _, want := range []string{"listInventory no-answer status", "updateInventory answer-incomplete $"} {
		if !strings.Contains(got, want) {
			t.Errorf("findings %q; want %q", got, want)
		}
	}
}

func TestEnforce(t *testing.T) {
	mock := newMock(t)
	broken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("all good"))
			return
		}
		mock.ServeHTTP(w, r)
	})
	var reached int
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++; broken(w, r) }))
	defer backend.Close()
	addr, p := startProxy(t, backend.URL+"/v1", Config{Enforce: true})
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"GET", "/v1/inventory", "", 502, "contract_violation"},
		{"PATCH", "/v1/inventory/abc", `{"quantity":1}`, 400, "invalid_parameter"},
		{"PATCH", "/v1/inventory/3", `{"quantity":"x"}`, 400, "invalid_body"},
		{"PATCH", "/v1/inventory/3", `{"quantity":4}`, 200, ""},
		{"GET", "/v1/nowhere", "", 404, "not_found"},
		{"PUT", "/v1/inventory/3", `{}`, 405, "method_not_allowed"},
	} {
		resp, body := do(t, tc.method, addr+tc.path, tc.body)
		var e struct{ Code string }
		json.Unmarshal(body, &e)
		if resp.StatusCode != tc.status || e.Code != tc.code {
			t.Errorf("%s %s: %d %s; want %d %s", tc.method, tc.path, resp.StatusCode, body, tc.status, tc.code)
		}
	}
	if reached != 2 {
		t.Errorf("the backend saw %d requests; want 2 (the list and the valid update)", reached)
	}
	// Without a key the request passes: the backend checks keys.
	if resp, _ := do(t, "PATCH", addr+"/v1/inventory/3", `{"quantity":"x"}`, "Authorization", ""); resp.StatusCode != 401 {
		t.Errorf("an invalid update without a key: %d; want the backend's 401", resp.StatusCode)
	}
	settle(t, p, 7)
	got := strings.Join(rules(p.Findings().List()), ",")
	if !strings.Contains(got, "listInventory response-content-type header.Content-Type") {
		t.Errorf("findings %q; want the list's Content-Type", got)
	}
}

// settle waits until the proxy has recorded n exchanges: it checks each
// after the client has the answer, so a test may see the answer first.
func settle(tb testing.TB, p *Proxy, n int64) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		byOp, total := p.Findings().Traffic()
		for _, c := range byOp {
			total += c
		}
		if total >= n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the proxy recorded %d exchanges; want %d", total, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func mustContract(tb testing.TB) *spec.Contract {
	c, err := spec.Shared()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
