package main

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec"
)

// backendKey is the key of the backend behind the proxy in these tests.
const backendKey = "backend-key-0d6f3a9c"

// newBackend starts the mock as the backend a proxy fronts, answering
// every list with an unknown status when broken.
func newBackend(t *testing.T, broken bool) string {
	t.Helper()
	c, _ := spec.Shared()
	sh, _ := fixtures.NewShape(c)
	records, _, _ := fixtures.Default(sh)
	m, err := mockserver.New(mockserver.Config{Contract: c, Records: records, APIKeys: []string{backendKey}})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = m
	if broken {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/inventory" {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`[{"petId":1,"quantity":1,"status":"lost"}]`))
				return
			}
			m.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestProxyMode(t *testing.T) {
	for _, broken := range []bool{false, true} {
		dir := t.TempDir()
		junit, jsonl, har := filepath.Join(dir, "r", "junit.xml"), filepath.Join(dir, "v.jsonl"), filepath.Join(dir, "t.har")
		var logs syncBuffer
		addr, stop := start(t, []string{"--proxy-to", newBackend(t, broken), "--fail-on-violation", "--junit-report", junit,
			"--report-jsonl", jsonl, "--har-out", har, "--admin-key", "adm-key-1"}, env(nil), &logs)
		if got, body := get(t, http.DefaultClient, "http://"+addr+"/v1/inventory", backendKey); got != 200 {
			t.Fatalf("through the proxy: %d %s", got, body)
		}
		if got, _ := get(t, http.DefaultClient, "http://"+addr+"/__admin/violations", "adm-key-1"); got != 200 {
			t.Errorf("GET /__admin/violations: %d; want 200", got)
		}
		err := stop()
		switch {
		case broken && (err == nil || !strings.Contains(err.Error(), "broke the contract (--fail-on-violation)") || cli.Code(err) != 1):
			t.Errorf("broken backend: run = %v (exit %d); want violations, exit 1", err, cli.Code(err))
		case !broken && err != nil:
			t.Errorf("correct backend: run = %v; want nil", err)
		}
		b, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Failures int `xml:"failures,attr"`
		}
		if err := xml.Unmarshal(b, &doc); err != nil || (doc.Failures > 0) != broken {
			t.Errorf("broken %v: JUnit with %d failures (%v)", broken, doc.Failures, err)
		}
		lines, _ := os.ReadFile(jsonl)
		if broken != strings.Contains(string(lines), `"rule":"response-body-schema"`) {
			t.Errorf("broken %v: JSON lines %s", broken, lines)
		}
		h, _ := os.ReadFile(har)
		if !strings.HasSuffix(string(h), "]}}\n") || strings.Contains(string(h), backendKey) || strings.Contains(logs.String(), backendKey) {
			t.Errorf("broken %v: HAR not closed, or a key in the HAR or logs", broken)
		}
		if broken && !strings.Contains(logs.String(), "contract violation") {
			t.Errorf("the log does not announce the violation:\n%s", logs.String())
		}
	}
}

func TestProxyFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--proxy-to", "http://x/v1", "--generate", "5"}, "--generate"},
		{[]string{"--enforce"}, "need --proxy-to"},
		{[]string{"--proxy-to", "http://x/v1", "--store", "memory"}, "--store does not apply"},
		{[]string{"--proxy-to", "http://x/v1", "--cors-origin", "http://localhost:3000"}, "--cors-origin does not apply"},
		{[]string{"--proxy-to", "http://x/v1", "--ignore-rule", "no-such-*"}, "matches no rule"},
		{[]string{"--proxy-to", "http://x/v1", "--upstream-timeout", "0s"}, "must be positive"},
		{[]string{"--proxy-to", "http://x/v1", "--ignore-rule", "request-*", "--enforce"}, ""},
		{[]string{"--proxy-memory-budget", "1048576"}, "need --proxy-to"},
		{[]string{"--proxy-to", "http://x/v1", "--proxy-memory-budget", "-1"}, "--proxy-memory-budget must be positive"},
		{[]string{"--proxy-to", "http://x/v1", "--proxy-memory-budget", "1048576"}, ""},
	} {
		_, err := parse(tt.args, env(nil))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("parse(%q) = %v; want no error", tt.args, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("parse(%q) = %v; want an error with %q", tt.args, err, tt.want)
		}
	}
	o, err := parse(nil, env(map[string]string{"INVENTORY_MOCK_PROXY_TO": "https://staging.test/v1", "INVENTORY_MOCK_FAIL_ON_VIOLATION": "true", "INVENTORY_MOCK_PROXY_MEMORY_BUDGET": "4096"}))
	if err != nil || o.Proxy.To != "https://staging.test/v1" || !o.Proxy.FailOnViolation || o.Proxy.MemoryBudget != 4096 {
		t.Errorf("from the environment: %+v, %v", o, err)
	}
	if err := run(t.Context(), []string{"--proxy-to", "ftp://x"}, env(nil), io.Discard, io.Discard); err == nil || cli.Code(err) != 2 {
		t.Errorf("--proxy-to ftp://x: %v; want a start-up error", err)
	}
}

// TestProxyAdminHosts checks that the proxy's admin API, as the mock's,
// answers only the names that reach this machine and --allowed-host's,
// while the proxied operations pass whatever the Host.
func TestProxyAdminHosts(t *testing.T) {
	addr, _ := start(t, []string{"--proxy-to", newBackend(t, false), "--admin-key", "adm-key-1", "--allowed-host", "proxy.internal"}, env(nil), io.Discard)
	for _, tt := range []struct {
		host, path, key string
		status          int
	}{
		{addr, "/__admin/violations", "adm-key-1", 200},
		{"proxy.internal:8181", "/__admin/violations", "adm-key-1", 200},
		{"rebind.evil.test:8181", "/__admin/violations", "adm-key-1", 403},
		{"rebind.evil.test:8181", "/v1/inventory", backendKey, 200},
	} {
		req, _ := http.NewRequest("GET", "http://"+addr+tt.path, nil)
		req.Host = tt.host
		req.Header.Set("Authorization", "Bearer "+tt.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || (tt.status == 403 && !strings.Contains(string(body), `"code":"host_not_allowed"`)) {
			t.Errorf("GET %s with Host %s = %d %s; want %d", tt.path, tt.host, resp.StatusCode, body, tt.status)
		}
	}
}
