package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/store"
)

// testKey is the key the test mock accepts; no output may contain it.
const testKey = "ic-test-key-8c1f0e7d6b5a"

// childArgs, in the environment, makes the test binary run the command
// with these arguments (JSON) and exit: RunSpecs runs once per process.
const childArgs = "INVENTORY_CONFORMANCE_TEST_ARGS"

// childPeak, in the environment, names a file where such a child writes
// its peak resident memory (VmHWM) when it is done.
const childPeak = "INVENTORY_CONFORMANCE_TEST_PEAK"

func TestMain(m *testing.M) {
	if a := os.Getenv(childArgs); a != "" {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			panic(err)
		}
		code := cli.Code(run(context.Background(), args, os.LookupEnv, os.Stdout, os.Stderr))
		if f := os.Getenv(childPeak); f != "" {
			n, err := cli.PeakRSS("self")
			if err == nil {
				err = os.WriteFile(f, []byte(strconv.FormatInt(n, 10)), 0o644)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "peak RSS: %v\n", err)
			}
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// listed returns the mock's list as its store holds it.
func listed(t *testing.T, m *mockserver.Server) []byte {
	t.Helper()
	l, err := m.Store().List(context.Background(), store.DefaultSession)
	if err != nil {
		t.Fatal(err)
	}
	return l.Bytes()
}

// newMock starts the mock, optionally wrapped, and returns its /v1 address.
func newMock(t *testing.T, wrap func(http.Handler) http.Handler) (string, *mockserver.Server) {
	t.Helper()
	m, srv := mockserver.StartTest(t, mockserver.Config{APIKeys: []string{testKey}}, wrap)
	return srv.URL + "/v1", m
}

// runInProcess calls run for cases that end before the suite starts.
func runInProcess(args []string, env map[string]string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := conform(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelp(t *testing.T) {
	code, out, _ := runInProcess([]string{"--help"}, nil)
	if code != cli.ExitOK {
		t.Errorf("--help: exit %d; want 0", code)
	}
	for _, f := range []string{"--base-url", "--api-key", "--allow-mutations", "--pet-id", "--ca-cert", "--insecure-skip-verify",
		"--timeout", "--junit-report", "--json-report", "--label-filter", "--verbose", "INVENTORY_API_KEY", "Exit status"} {
		if !strings.Contains(out, f) {
			t.Errorf("--help does not mention %s:\n%s", f, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  --") && len(strings.Fields(l)) < 3 {
			t.Errorf("help line without an explanation: %q", l)
		}
	}
}

// TestCannotRun covers exit status 2: each case says why in its message.
func TestCannotRun(t *testing.T) {
	url, _ := newMock(t, nil)
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// What answers at a wrong address: a web page, a TLS server asked in
	// plain HTTP, a plain HTTP server asked in TLS.
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>Welcome</title>")
	}))
	t.Cleanup(page.Close)
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	plain := strings.Replace(url, "http://", "https://", 1)
	gitHub := map[string]string{"GITHUB_ACTIONS": "true"}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown flag", []string{"--nope"}, nil, "not defined"},
		{"a web page", []string{"--base-url", page.URL + "/v1", "--api-key", testKey}, nil, "an HTML page (text/html; charset=utf-8): this is not the API; check --base-url"},
		{"http against a TLS server", []string{"--base-url", strings.Replace(tlsSrv.URL, "https://", "http://", 1) + "/v1", "--api-key", testKey}, nil, "the target speaks HTTPS; use https:// in --base-url"},
		{"https against a plain HTTP server", []string{"--base-url", plain, "--api-key", testKey}, nil, "the target speaks plain HTTP; use http:// in --base-url"},
		{"target down", []string{"--base-url", "http://127.0.0.1:1/v1", "--api-key", testKey}, nil, "nothing listens there; start the service"},
		{"bad duration", []string{"--base-url", url, "--timeout", "soon"}, nil, `--timeout "soon": want a duration such as 500ms`},
		{"stray argument", []string{"--base-url", url, "extra"}, nil, "unexpected argument"},
		{"no base URL", []string{"--api-key", testKey}, nil, "--base-url is required"},
		{"not a URL", []string{"--base-url", "ftp:/x", "--api-key", testKey}, nil, "--base-url"},
		{"no key", []string{"--base-url", url}, nil, "INVENTORY_API_KEY"},
		{"bad label filter", []string{"--base-url", url, "--api-key", testKey, "--label-filter", "auth &&"}, nil, "--label-filter"},
		{"unreachable target", []string{"--base-url", "http://127.0.0.1:1/v1", "--api-key", testKey}, nil, "unreachable"},
		{"rejected key", []string{"--base-url", url, "--api-key", "wrong-key"}, nil, "API key was rejected: a plain GET " + url + "/inventory answered 401, so every check would fail on it; pass a key this target accepts"},
		{"rejected key from the environment", []string{"--base-url", url}, map[string]string{"INVENTORY_API_KEY": "wrong-key"}, "pass a key this target accepts with --api-key, INVENTORY_API_KEY or --api-key-command"},
		{"base URL without /v1", []string{"--base-url", strings.TrimSuffix(url, "/v1"), "--api-key", testKey}, nil, "should end in /v1"},
		{"unknown pet", []string{"--base-url", url, "--api-key", testKey, "--pet-id", "999999"}, nil, "--pet-id 999999"},
		{"unwritable JUnit report", []string{"--base-url", url, "--api-key", testKey, "--junit-report", filepath.Join(notDir, "r.xml")}, nil, "--junit-report"},
		{"unwritable JSON report", []string{"--base-url", url, "--api-key", testKey, "--json-report", filepath.Join(notDir, "r.json")}, nil, "--json-report"},
		{"missing CA file", []string{"--base-url", url, "--api-key", testKey, "--ca-cert", filepath.Join(notDir, "ca.pem")}, nil, "--ca-cert"},
		// A bad flag stops the parse before it reads the key: the key is
		// hidden still, in the message and in the annotation.
		{"the key as a bad duration", []string{"--api-key=" + testKey, "--timeout", testKey}, gitHub, `--timeout "$INVENTORY_API_KEY": want a duration`},
		{"the key after the bad flag", []string{"--timeout", testKey, "-api-key", testKey}, gitHub, `--timeout "$INVENTORY_API_KEY": want a duration`},
		{"the key from the environment as a bad duration", []string{"--timeout", testKey}, map[string]string{"GITHUB_ACTIONS": "true", "INVENTORY_API_KEY": testKey}, `--timeout "$INVENTORY_API_KEY"`},
		{"a header's value as a bad duration", []string{"--header", "X-Tenant: t-" + testKey, "--timeout", "t-" + testKey}, gitHub, `--timeout "$INVENTORY_HEADER_X_TENANT"`},
		{"HAR: the key as a bad coverage", []string{"--har", "testdata/browser.har", "--api-key", testKey, "--min-coverage", testKey}, nil, `--min-coverage "$INVENTORY_API_KEY"`},
		{"HAR: the key in a file name", []string{"--har", testKey + ".har", "--api-key", testKey}, nil, "open $INVENTORY_API_KEY.har"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runInProcess(tt.args, tt.env)
			if code != cli.ExitCannotRun {
				t.Errorf("exit %d; want 2 (stderr %q)", code, errOut)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr = %q; want it to mention %q", errOut, tt.want)
			}
			if strings.Contains(out+errOut, testKey) {
				t.Errorf("the key appears in the output")
			}
		})
	}
}

// runChild runs the command in a child process; the key comes from the
// environment.
func runChild(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return runChildKey(t, testKey, args...)
}

// runChildKey is runChild with another key.
func runChildKey(t *testing.T, key string, args ...string) (int, string) {
	t.Helper()
	a, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgs+"="+string(a), "INVENTORY_API_KEY="+key)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if len(key) >= 8 && strings.Contains(string(out), key) {
		t.Errorf("the key appears in the output")
	}
	return code, string(out)
}

func noKeyIn(t *testing.T, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("report: %v", err)
			continue
		}
		if len(b) == 0 {
			t.Errorf("%s is empty", filepath.Base(f))
		}
		if bytes.Contains(b, []byte(testKey)) {
			t.Errorf("the key appears in %s", filepath.Base(f))
		}
	}
}

func TestPassesAgainstTheMock(t *testing.T) {
	url, _ := newMock(t, nil)
	dir := t.TempDir()
	junit, js := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.json")
	code, out := runChild(t, "--base-url", url, "--allow-mutations", "--explore-steps", "100", "--junit-report", junit, "--json-report", js)
	if code != cli.ExitOK {
		t.Fatalf("exit %d; want 0\n%s", code, out)
	}
	for _, want := range []string{"Conformance summary", "0 failed", "Observations", "list order"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	noKeyIn(t, junit, js)
	checkJUnit(t, junit, out)
	// Neither the console (Ginkgo's "Running Suite" line) nor a report
	// names the directory the run was made in, and the banner ends with
	// the suite's name, not a stray " - ." where the directory was.
	if _, banner, _ := strings.Cut(out, "Running Suite: "); !strings.HasPrefix(banner, conformance.SuiteName+"\n") {
		t.Errorf("the banner reads %q; want the suite's name alone", "Running Suite: "+strings.SplitN(banner, "\n", 2)[0])
	}
	cwd, _ := os.Getwd()
	for name, b := range map[string]string{"the output": out, "junit.xml": readFile(t, junit), "report.json": readFile(t, js)} {
		if strings.Contains(b, cwd) {
			t.Errorf("%s names the working directory %s", name, cwd)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadOnlyChangesNothing runs without --allow-mutations and checks
// that the mock's data is exactly as before.
func TestReadOnlyChangesNothing(t *testing.T) {
	url, m := newMock(t, nil)
	before := listed(t, m)
	code, out := runChild(t, "--base-url", url, "--explore-steps", "100")
	if code != cli.ExitOK {
		t.Fatalf("exit %d; want 0\n%s", code, out)
	}
	if !strings.Contains(out, "mutating checks were skipped") {
		t.Errorf("the summary does not say the mutating checks were skipped:\n%s", out)
	}
	if after := listed(t, m); !bytes.Equal(before, after) {
		t.Errorf("the data changed:\nbefore %s\nafter  %s", before, after)
	}
}

// ignoresKey breaks a mock: every request reaches it with the right key,
// whatever key it was sent with.
func ignoresKey(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+testKey)
		h.ServeHTTP(w, r)
	})
}

// TestFailsAgainstABrokenServer: a mock that ignores the key breaks the
// contract; the run exits 1 and the failure shows curl with the key hidden.
func TestFailsAgainstABrokenServer(t *testing.T) {
	url, _ := newMock(t, ignoresKey)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out := runChild(t, "--base-url", url, "--label-filter", "auth", "--junit-report", junit)
	if code != cli.ExitFailed {
		t.Fatalf("exit %d; want 1\n%s", code, out)
	}
	for _, want := range []string{"curl ", "$INVENTORY_API_KEY", "no Authorization header gives 401", "status 200; want 401"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	noKeyIn(t, junit)
}

// TestRestoresAfterAWrite checks that a mutating run leaves the data as
// it found it.
func TestRestoresAfterAWrite(t *testing.T) {
	url, m := newMock(t, nil)
	before := listed(t, m)
	code, out := runChild(t, "--base-url", url, "--allow-mutations", "--label-filter", "mutating", "--pet-id", "3")
	if code != cli.ExitOK {
		t.Fatalf("exit %d; want 0\n%s", code, out)
	}
	if after := listed(t, m); !bytes.Equal(before, after) {
		t.Errorf("the data changed:\nbefore %s\nafter  %s", before, after)
	}
}

// TestInterruptRestores interrupts a mutating run while a write is in
// flight and checks that the data is back as it was and the exit status
// is 2.
func TestInterruptRestores(t *testing.T) {
	written := make(chan struct{}, 1)
	url, m := newMock(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r)
			if r.Method == http.MethodPatch {
				select {
				case written <- struct{}{}:
				default:
				}
				time.Sleep(300 * time.Millisecond) // the write is applied; the answer is slow
			}
		})
	})
	before := listed(t, m)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	a, _ := json.Marshal([]string{"--base-url", url, "--allow-mutations", "--label-filter", "update", "--junit-report", junit})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgs+"="+string(a), "INVENTORY_API_KEY="+testKey)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-written:
	case <-time.After(20 * time.Second):
		t.Fatal("no write within 20s")
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != cli.ExitCannotRun {
		t.Errorf("exit %v; want 2\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "interrupted") {
		t.Errorf("the output does not say the run was interrupted:\n%s", out.String())
	}
	// The report says so too, and counts the interrupted check as no
	// contract failure.
	if b, _ := os.ReadFile(junit); !bytes.Contains(b, []byte("interrupted: the run is incomplete")) || !bytes.Contains(b, []byte(" 0 failed")) {
		t.Errorf("junit.xml does not say the run was interrupted, with no failure:\n%s", b)
	}
	if after := listed(t, m); !bytes.Equal(before, after) {
		t.Errorf("the data was not restored:\nbefore %s\nafter  %s", before, after)
	}
}

// TestTLS: a target with a certificate the system does not trust cannot
// be checked (exit 2) unless --ca-cert names its CA or
// --insecure-skip-verify is given.
func TestTLS(t *testing.T) {
	m, err := mockserver.New(mockserver.Config{APIKeys: []string{testKey}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(m)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	url := srv.URL + "/v1"
	ca := filepath.Join(t.TempDir(), "ca.pem")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}

	code, _, errOut := runInProcess([]string{"--base-url", url, "--api-key", testKey}, nil)
	if code != cli.ExitCannotRun || !strings.Contains(errOut, "certificate") || !strings.Contains(errOut, "--ca-cert FILE") || !strings.Contains(errOut, "--insecure-skip-verify") {
		t.Errorf("untrusted certificate: exit %d, stderr %q; want 2 and a word on the certificate", code, errOut)
	}
	for _, extra := range [][]string{{"--ca-cert", ca}, {"--insecure-skip-verify"}} {
		args := append([]string{"--base-url", url, "--label-filter", "list"}, extra...)
		if code, out := runChild(t, args...); code != cli.ExitOK {
			t.Errorf("%v: exit %d; want 0\n%s", extra, code, out)
		}
	}
}

// TestRestoreFailureIsLoud: a target that keeps the first write and then
// only pretends to write cannot be restored; the run says so with the
// petId and the original quantity, and exits 1.
func TestRestoreFailureIsLoud(t *testing.T) {
	var mu sync.Mutex // guards wrote
	wrote := false
	url, _ := newMock(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPatch {
				h.ServeHTTP(w, r)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if !wrote {
				wrote = true
				h.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			var u struct{ Quantity int64 }
			_ = json.Unmarshal(body, &u)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"petId":3,"quantity":%d,"status":"available"}`, u.Quantity)
		})
	})
	code, out := runChild(t, "--base-url", url, "--allow-mutations", "--pet-id", "3", "--label-filter", "update && !bad-input")
	if code != cli.ExitFailed {
		t.Errorf("exit %d; want 1\n%s", code, out)
	}
	for _, want := range []string{"Left changed: set these records back by hand (1 record):", "petId 3: found quantity ", "; wanted quantity 25 — "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// checkJUnit reads a JUnit report as CI test views do: as many tests as
// the console counted, a classname per area, names without Ginkgo's
// prefixes, and a summary suite with properties.
func checkJUnit(t *testing.T, path, console string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests  int `xml:"tests,attr"`
		Suites []struct {
			Name  string `xml:"name,attr"`
			Props []struct {
				Name string `xml:"name,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("junit.xml: %v", err)
	}
	var passed, failed, skipped int
	if _, err := fmt.Sscanf(console[strings.Index(console, "== Conformance summary:"):], "== Conformance summary: %d passed, %d failed, %d skipped", &passed, &failed, &skipped); err != nil {
		t.Fatalf("no summary line: %v", err)
	}
	if doc.Tests != passed+failed+skipped {
		t.Errorf("junit tests=%d; the console counted %d", doc.Tests, passed+failed+skipped)
	}
	classes := map[string]bool{}
	summary := false
	for _, s := range doc.Suites {
		summary = summary || (s.Name == "summary" && len(s.Props) > 0)
		for _, c := range s.Cases {
			classes[c.Classname] = true
			if strings.Contains(c.Name, "[It]") || c.Classname != "conformance."+s.Name {
				t.Errorf("test %q in %q: want no Ginkgo prefix and the classname conformance.%s", c.Name, c.Classname, s.Name)
			}
		}
	}
	if len(classes) < 8 || !summary {
		t.Errorf("junit.xml has %d classnames and summary properties %v; want one per area and a summary", len(classes), summary)
	}
}

// TestVerboseShowsExchanges: --verbose shows each HTTP exchange.
func TestVerboseShowsExchanges(t *testing.T) {
	url, _ := newMock(t, nil)
	code, out := runChild(t, "--base-url", url, "--verbose", "--label-filter", "list", "--explore-steps", "0")
	if code != cli.ExitOK || !strings.Contains(out, "→ curl -sS -i 'http://") || !strings.Contains(out, "← 200 OK") {
		t.Errorf("exit %d; want 0 and the exchanges shown:\n%s", code, out)
	}
}
