package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/mockserver/proxy"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// startProxy starts the validating proxy in front of backend (an address
// ending in /v1), recording to a HAR file, and returns its /v1 address,
// the proxy and a function that stops the proxy once it has checked every
// exchange, closes the HAR file and returns its path.
func startProxy(t *testing.T, backend string) (string, *proxy.Proxy, func() string) {
	t.Helper()
	c, err := spec.Shared()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "traffic.har")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	har, err := exchange.NewHARWriter(f, "test", "1", conformance.KeyRedactor(testKey))
	if err != nil {
		t.Fatal(err)
	}
	p, err := proxy.New(proxy.Config{Contract: c, Upstream: backend, HAR: har, APIKeys: []string{testKey}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", p, func() string {
		srv.Close() // every exchange is recorded
		if err := har.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return path
	}
}

// tally reads the "N violations and M warnings in K groups" line.
var tally = regexp.MustCompile(`(\d+) violations and (\d+) warnings in (\d+) groups`)

// TestConformanceThroughProxy runs the whole suite, mutating checks
// included, through the proxy in front of the mock: the suite passes (the
// proxy changed nothing), the proxy finds nothing wrong with the mock's
// answers, and every request it flags is one the mock refused. Checking
// the HAR the proxy recorded gives the same tally, and exit 0 once the
// suite's deliberately bad requests are left out.
func TestConformanceThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the suite in a child process")
	}
	mock, _ := newMock(t, nil)
	front, p, closeHAR := startProxy(t, mock)
	code, out := runChild(t, "--base-url", front, "--allow-mutations", "--explore-steps", "200", "--seed", "7")
	if code != cli.ExitOK {
		t.Fatalf("the suite through the proxy: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "Exploration seed: 7") {
		t.Errorf("the suite did not explore through the proxy:\n%s", out)
	}
	har := closeHAR() // after every exchange is checked
	var errs, warns int64
	for _, f := range p.Findings().List() {
		if f.Severity == spec.SeverityError {
			errs += f.Count
		} else {
			warns += f.Count
		}
		switch {
		case f.Where == spec.WhereResponse:
			t.Errorf("a finding about the mock's answer: %s %s %s: %s (e.g. %s %s -> %d)", f.Operation, f.Rule, f.Path, f.Message, f.Example.Method, f.Example.URL, f.Example.Status)
		case f.Example.Status < 400 || f.Example.Status > 499:
			t.Errorf("the proxy flags a request the mock accepted (%d): %s %s %s: %s", f.Example.Status, f.Operation, f.Rule, f.Path, f.Message)
		}
	}
	if errs == 0 {
		t.Error("no finding about the suite's deliberately bad requests")
	}
	code, out, errOut := runInProcess([]string{"--har", har}, nil)
	m := tally.FindStringSubmatch(out)
	if code != cli.ExitFailed || m == nil || m[1] != strconv.FormatInt(errs, 10) || m[2] != strconv.FormatInt(warns, 10) {
		t.Errorf("--har: exit %d, tally %q; want 1 and %d violations, %d warnings, as live\n%s%s", code, m, errs, warns, out, errOut)
	}
	code, out, _ = runInProcess([]string{"--har", har, "--ignore-rule", "request-*"}, nil)
	if code != cli.ExitOK || !strings.Contains(out, "0 violations") {
		t.Errorf("--har --ignore-rule 'request-*': exit %d; want 0\n%s", code, out)
	}
}

// TestHARCommand checks exit statuses and output of --har on recordings of
// a broken backend, a browser's export, and files that are not HAR.
func TestHARCommand(t *testing.T) {
	broken, _ := newMock(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPatch {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"petId":3,"quantity":9,"status":"lost"}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	front, _, closeHAR := startProxy(t, broken)
	for range 3 {
		req, _ := http.NewRequest("PATCH", front+"/inventory/3", strings.NewReader(`{"quantity":9}`))
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	recorded := closeHAR()
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "x.har")
	os.WriteFile(notJSON, []byte("<html>"), 0o644)
	notHAR := filepath.Join(dir, "y.har")
	os.WriteFile(notHAR, []byte(`{"log":{}}`), 0o644)
	junit, jsonl := filepath.Join(dir, "r", "junit.xml"), filepath.Join(dir, "r", "v.jsonl")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"a broken backend", []string{"--har", recorded, "--junit-report", junit, "--report-jsonl", jsonl}, cli.ExitFailed,
			[]string{"Checked 3 of the 3 entries", "3 violations and 0 warnings in 1 groups", "response-body-schema", `"lost" is not one of`, "3×", "PATCH http://"}},
		{"a browser's export", []string{"--har=testdata/browser.har", "--base-url", "https://staging.example.com/v1"}, cli.ExitFailed,
			[]string{"Checked 2 of the 5 entries", "1 a CORS preflight", "1 another host", "1 no answer recorded",
				"response-body-schema response $[*].status", `"on-hold" is not one of`, "request-body request $.quantity", "response-content-type", `"application/problem+json"; want application/json`}},
		{"the browser's export, only the answers' rules", []string{"--har", "testdata/browser.har", "--ignore-rule", "request-*", "--ignore-rule", "response-*", "--ignore-rule", "error-*"}, cli.ExitOK,
			[]string{"Checked 2 of the 5 entries", "0 violations"}},
		{"help", []string{"--har", "x", "--help"}, cli.ExitOK, []string{"Usage: inventory-conformance --har FILE"}},
		{"no such file", []string{"--har", filepath.Join(dir, "none.har")}, cli.ExitCannotRun, []string{"no such file"}},
		{"not JSON", []string{"--har", notJSON}, cli.ExitCannotRun, []string{"not valid JSON"}},
		{"not HAR", []string{"--har", notHAR}, cli.ExitCannotRun, []string{"not a HAR file"}},
		{"nothing under the base URL", []string{"--har", "testdata/browser.har", "--base-url", "https://prod.example.com/v1"}, cli.ExitCannotRun, []string{"no exchange under https://prod.example.com/v1"}},
		{"a bad rule pattern", []string{"--har", recorded, "--ignore-rule", "nope"}, cli.ExitCannotRun, []string{"matches no rule", "the rules are: request-operation-unknown"}},
		{"a flag of a run against a target", []string{"--har", recorded, "--allow-mutations"}, cli.ExitCannotRun, []string{"--allow-mutations does not apply to --har"}},
		{"a flag of a run against a target, with a value", []string{"--har", recorded, "--seed=7"}, cli.ExitCannotRun, []string{"--seed does not apply to --har"}},
		{"a flag nobody has", []string{"--har", recorded, "--nope"}, cli.ExitCannotRun, []string{"flag provided but not defined: --nope"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runInProcess(tc.args, map[string]string{"INVENTORY_API_KEY": testKey})
			if code != tc.code {
				t.Errorf("exit %d; want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %q:\n%s%s", w, out, errOut)
				}
			}
			for _, secret := range []string{testKey, "har-browser-token-0a1b2c"} {
				if strings.Contains(out+errOut, secret) {
					t.Errorf("the output holds %q", secret)
				}
			}
		})
	}
	noKeyIn(t, junit, jsonl)
}

// TestProxyAndHARAgree runs the same traffic through the proxy, in front of
// a backend that cuts half of its lists short and breaks its updates'
// answers, and checks that --har over the proxy's own recording names the
// same (operation, rule) pairs, as often, as the proxy found live.
func TestProxyAndHARAgree(t *testing.T) {
	var mu sync.Mutex // guards n
	n := 0
	backend, _ := newMock(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			cut := n%2 == 0
			mu.Unlock()
			switch {
			case r.Method == http.MethodGet && cut:
				// A list that says it is longer than it is: the connection
				// ends in its middle.
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", strconv.Itoa(rec.Body.Len()))
				w.WriteHeader(http.StatusOK)
				w.Write(rec.Body.Bytes()[:rec.Body.Len()/2])
				http.NewResponseController(w).Flush()
				panic(http.ErrAbortHandler)
			case r.Method == http.MethodPatch:
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"petId":3,"quantity":9,"status":"lost"}`))
			default:
				h.ServeHTTP(w, r)
			}
		})
	})
	front, p, closeHAR := startProxy(t, backend)
	send := func(method, path, body string) {
		req, _ := http.NewRequest(method, front+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testKey)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	for range 4 {
		send("GET", "/inventory", "")
		send("PATCH", "/inventory/3", `{"quantity":9}`)
		send("PATCH", "/inventory/abc", `{"quantity":9}`)
	}
	har := closeHAR()
	pairs := func(fs []spec.Finding) string {
		count := map[string]int64{}
		for _, f := range fs {
			count[f.Operation+" "+f.Rule] += f.Count
		}
		var out []string
		for k, n := range count {
			out = append(out, fmt.Sprintf("%s ×%d", k, n))
		}
		slices.Sort(out)
		return strings.Join(out, ", ")
	}
	live := pairs(p.Findings().List())
	if !strings.Contains(live, "listInventory answer-incomplete") || !strings.Contains(live, "updateInventory response-body-schema") {
		t.Fatalf("live findings %s; want the cut lists and the bad updates", live)
	}
	jsonl := filepath.Join(t.TempDir(), "v.jsonl")
	code, out, errOut := runInProcess([]string{"--har", har, "--report-jsonl", jsonl}, nil)
	if code != cli.ExitFailed {
		t.Fatalf("--har: exit %d\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	var fromHAR []spec.Finding
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var f spec.Finding
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatal(err)
		}
		f.Count = 1
		fromHAR = append(fromHAR, f)
	}
	if got := pairs(fromHAR); got != live {
		t.Errorf("--har over the proxy's recording found\n  %s\nthe proxy live\n  %s", got, live)
	}
}
