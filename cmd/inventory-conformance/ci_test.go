package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/mockserver"
)

// TestHeadersNeverPrinted: a backend that needs headers besides the key
// (a tenant, a cookie) is checked with --header, and no output, report or
// curl line shows their values: curl lines name them by variable.
func TestHeadersNeverPrinted(t *testing.T) {
	const tenant, cookie = "tenant-7f3a9c2e1b", "session=c00kie-5e6d7a8b9c"
	url, _ := newMock(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Tenant") != tenant || r.Header.Get("Cookie") != cookie {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprint(w, `{"code":"no_tenant","message":"which tenant?","status":403}`)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	dir := t.TempDir()
	junit, js := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.json")
	args := []string{"--base-url", url, "--allow-mutations", "--explore-steps", "50", "--verbose", "--junit-report", junit, "--json-report", js,
		"--header", "X-Tenant: " + tenant, "--header", "Cookie: " + cookie}
	code, out := runChild(t, args...)
	if code != cli.ExitOK {
		t.Fatalf("exit %d; want 0\n%s", code, out)
	}
	if !strings.Contains(out, `-H "X-Tenant: $INVENTORY_HEADER_X_TENANT"`) || !strings.Contains(out, `-H "Cookie: $INVENTORY_HEADER_COOKIE"`) {
		t.Errorf("the curl lines do not name the headers by variable:\n%.3000s", out)
	}
	for name, b := range map[string]string{"the output": out, "junit.xml": readFile(t, junit), "report.json": readFile(t, js)} {
		for _, v := range []string{tenant, cookie, "c00kie-5e6d7a8b9c"} {
			if strings.Contains(b, v) {
				t.Errorf("%s shows the header value %q", name, v)
			}
		}
	}
	// A header value is never echoed by the flag parser either.
	code, _, errOut := runInProcess([]string{"--base-url", url, "--header", "X-Tenant " + tenant}, nil)
	if code != cli.ExitCannotRun || !strings.Contains(errOut, "--header number 1") || strings.Contains(errOut, tenant) {
		t.Errorf("a --header without a colon: exit %d, %q; want 2, a message without the value", code, errOut)
	}
}

// TestKeyCommandRefreshes: with --api-key-command, the command runs for
// the key at the start and again when the target answers 401 to the key
// that worked before (it expired); the run goes on with the new key, and
// neither key is ever printed.
func TestKeyCommandRefreshes(t *testing.T) {
	const first, second = "first-key-6a1d93c07e", "second-key-2b8e47f5a1"
	var firstUses atomic.Int64
	_, srv := mockserver.StartTest(t, mockserver.Config{APIKeys: []string{first, second}}, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "Bearer "+first && firstUses.Add(1) > 40 {
				r.Header.Set("Authorization", "Bearer expired") // the first key expires
			}
			h.ServeHTTP(w, r)
		})
	})
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	script := filepath.Join(dir, "key.sh")
	if err := os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\necho x >> %s\nif [ $(wc -l < %s) -eq 1 ]; then echo %s; else echo %s; fi\n", count, count, first, second)), 0o755); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "junit.xml")
	a, _ := json.Marshal([]string{"--base-url", srv.URL + "/v1", "--api-key-command", script, "--allow-mutations", "--explore-steps", "100", "--verbose", "--junit-report", junit})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgs+"="+string(a))
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err != nil {
		t.Fatalf("%v; want exit 0\n%s", err, out)
	}
	runs, _ := os.ReadFile(count)
	if n := bytes.Count(runs, []byte("x")); n != 2 {
		t.Errorf("the key command ran %d times; want 2 (at the start, and once after the first key expired)", n)
	}
	if firstUses.Load() <= 40 {
		t.Errorf("the first key was used %d times; the test wants it to expire", firstUses.Load())
	}
	for name, b := range map[string]string{"the output": out, "junit.xml": readFile(t, junit)} {
		if strings.Contains(b, first) || strings.Contains(b, second) {
			t.Errorf("%s shows a key", name)
		}
	}
	if !strings.Contains(out, "$INVENTORY_API_KEY") {
		t.Errorf("the curl lines do not show the key as $INVENTORY_API_KEY")
	}
	// A command that fails says so, with what it printed on stderr and
	// without its output.
	code, _, errOut := runInProcess([]string{"--base-url", srv.URL + "/v1", "--api-key-command", "echo " + first + "; echo no vault >&2; exit 3"}, nil)
	if code != cli.ExitCannotRun || !strings.Contains(errOut, "--api-key-command failed (exit status 3): no vault") || strings.Contains(errOut, first) {
		t.Errorf("a failing key command: exit %d, %q", code, errOut)
	}
}

// TestWaitedInSummary: the summary says how long the run waited on 429
// answers.
func TestWaitedInSummary(t *testing.T) {
	var n atomic.Int64
	url, _ := newMock(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1)%10 == 0 {
				w.Header().Set("Retry-After", "0")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, `{"code":"slow_down","message":"later","status":429}`)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	code, out := runChild(t, "--base-url", url, "--label-filter", "auth || list", "--explore-steps", "0")
	if code != cli.ExitOK || !strings.Contains(out, "in all on 429 answers (Retry-After), of the 30s --max-retry-wait allows") {
		t.Errorf("exit %d; want 0 and the time waited on 429 in the summary:\n%s", code, out)
	}
}
