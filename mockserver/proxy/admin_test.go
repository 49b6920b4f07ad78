package proxy

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

func TestAdmin(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[{"petId":1,"quantity":2,"status":"lost"}]`))
	}))
	defer backend.Close()
	addr, p := startProxy(t, backend.URL+"/v1", Config{AdminKey: "admin-key-123"})
	do(t, "GET", addr+"/v1/inventory", "")
	do(t, "GET", addr+"/v1/inventory", "")
	settle(t, p, 2)
	for _, tc := range []struct {
		method, path, key string
		status            int
	}{
		{"GET", "/__admin/violations", "", 401},
		{"GET", "/__admin/violations", testKey, 401},
		{"GET", "/__admin/violations", "admin-key-123", 200},
		{"GET", "/__admin/violations?rule=response-body-schema", "admin-key-123", 200},
		{"GET", "/__admin/violations?severity=fatal", "admin-key-123", 400},
		{"POST", "/__admin/violations", "admin-key-123", 405},
		{"POST", "/__admin/reset", "admin-key-123", 404},
		{"GET", "/__admin/sessions", "admin-key-123", 404},
		{"GET", "/__admin/openapi.yaml", "", 200},
		{"GET", "/healthz", "", 200},
		{"GET", "/openapi.yaml", "", 200},
	} {
		resp, body := do(t, tc.method, addr+tc.path, "", "Authorization", "Bearer "+tc.key)
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s with key %q: %d %s; want %d", tc.method, tc.path, tc.key, resp.StatusCode, body, tc.status)
		}
	}
	_, body := do(t, "GET", addr+"/__admin/violations", "", "Authorization", "Bearer admin-key-123")
	admin, err := spec.Admin()
	if err != nil {
		t.Fatal(err)
	}
	if ps := admin.Operation("listViolations").CheckResponse(200, http.Header{"Content-Type": {"application/json"}}, body); len(ps) > 0 {
		t.Errorf("GET /__admin/violations breaks the admin document: %s\n%s", spec.Join(ps), body)
	}
	var fs []spec.Finding
	json.Unmarshal(body, &fs)
	if len(fs) != 1 || fs[0].Count != 2 || fs[0].Path != "$[*].status" || fs[0].Rule != spec.RuleResponseBody {
		t.Errorf("violations %s; want one group of 2 at $[*].status", body)
	}
	if resp, _ := do(t, "DELETE", addr+"/__admin/violations", "", "Authorization", "Bearer admin-key-123"); resp.StatusCode != 204 {
		t.Errorf("DELETE: %d; want 204", resp.StatusCode)
	}
	if _, body := do(t, "GET", addr+"/__admin/violations", "", "Authorization", "Bearer admin-key-123"); string(bytes.TrimSpace(body)) != "[]" {
		t.Errorf("after DELETE: %s; want []", body)
	}
}

// TestSecretsNeverWritten runs a hostile backend that echoes the client's
// credentials in its headers and bodies, and checks that no output of the
// proxy holds them: the admin API, JSON lines, JUnit, HAR, logs, and the
// Error bodies Enforce sends.
func TestSecretsNeverWritten(t *testing.T) {
	const token, queryKey, configured = "client-token-93ab7f", "query-key-55c1d0", "configured-key-7e2a"
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		w.Header().Set("X-Echo", auth)
		w.Header().Set("Set-Cookie", "session="+token)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/inventory":
			w.Write([]byte(`[{"petId":1,"quantity":"` + token + `","status":"` + auth + ` ` + r.URL.Query().Get("api_key") + ` ` + configured + `"}]`))
		default:
			w.WriteHeader(500)
			w.Write([]byte(`{"code":"boom","message":"token ` + token + ` rejected","status":` + `"` + token + `"}`))
		}
	}))
	defer backend.Close()
	var jsonl, harOut, logs bytes.Buffer
	c, _ := spec.Shared()
	findings := spec.NewFindings(c, spec.FindingsOptions{JSONL: &jsonl, Redactor: exchange.NewRedactor(exchange.Secret{Value: configured})})
	har, err := exchange.NewHARWriter(&harOut, "test", "1", exchange.NewRedactor(exchange.Secret{Value: configured}))
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	var answers bytes.Buffer
	for i, enforce := range []bool{false, true} {
		addr, p := startProxy(t, backend.URL+"/v1", Config{Findings: findings, HAR: har, Logger: logger, Enforce: enforce, APIKeys: []string{configured}})
		for _, path := range []string{"/v1/inventory?api_key=" + queryKey, "/v1/inventory/1"} {
			body := ""
			if strings.Contains(path, "/1") {
				body = `{"quantity":3}`
			}
			_, b := do(t, map[bool]string{true: "PATCH", false: "GET"}[body != ""], addr+path, body, "Authorization", "Bearer "+token)
			if enforce {
				answers.Write(b)
			}
		}
		settle(t, p, int64(2*(i+1)))
		_, b := do(t, "GET", addr+"/__admin/violations", "", "Authorization", "Bearer "+configured)
		answers.Write(b)
	}
	if err := har.Close(); err != nil {
		t.Fatal(err)
	}
	if len(findings.List()) < 3 {
		t.Fatalf("only %d findings; the test needs violations to show", len(findings.List()))
	}
	for name, out := range map[string]*bytes.Buffer{"admin API and Enforce answers": &answers, "JSON lines": &jsonl, "HAR": &harOut, "logs": &logs} {
		for _, secret := range []string{token, queryKey, configured} {
			if bytes.Contains(out.Bytes(), []byte(secret)) {
				t.Errorf("%s holds the secret %q", name, secret)
			}
		}
		if out.Len() == 0 && name != "logs" {
			t.Errorf("%s is empty", name)
		}
	}
	if !bytes.Contains(harOut.Bytes(), []byte(`"Bearer [REDACTED]"`)) {
		t.Error("the HAR does not show that a Bearer credential was sent")
	}
}
