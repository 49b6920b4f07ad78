package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// hostile starts a server on loopback that answers every request with h.
func hostile(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestReportsAfterExit2 covers a run that cannot be made: an old report
// (a green one from an earlier run) must not survive, and the new one
// must say why the run could not be made. A bad flag is no exception,
// wherever the report flags stand.
func TestReportsAfterExit2(t *testing.T) {
	tests := []struct {
		name string
		args func(junit, js string) []string
		want string
	}{
		{"unreachable target", func(junit, js string) []string {
			return []string{"--base-url", "http://127.0.0.1:1/v1", "--api-key", testKey, "--junit-report", junit, "--json-report", js}
		}, "unreachable"},
		{"bad duration after the reports", func(junit, js string) []string {
			return []string{"--junit-report", junit, "--json-report", js, "--base-url", "http://127.0.0.1:1/v1", "--timeout", "abc"}
		}, "--timeout"},
		{"bad duration before the reports", func(junit, js string) []string {
			return []string{"--timeout", "abc", "--junit-report", junit, "--json-report=" + js}
		}, "--timeout"},
		{"unknown flag before the reports", func(junit, js string) []string {
			return []string{"--nope", "-junit-report", junit, "--json-report", js}
		}, "--nope"},
		{"stray argument", func(junit, js string) []string {
			return []string{"--junit-report=" + junit, "--json-report", js, "extra"}
		}, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			junit, js := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.json")
			stale := `<testsuites tests="66" failures="0"></testsuites>`
			for _, f := range []string{junit, js} {
				if err := os.WriteFile(f, []byte(stale+strings.Repeat(" ", 4096)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, _, errOut := runInProcess(tt.args(junit, js), nil)
			if code != cli.ExitCannotRun {
				t.Fatalf("exit %d; want 2 (%s)", code, errOut)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr = %q; want it to name %q", errOut, tt.want)
			}
			b, _ := os.ReadFile(junit)
			var doc struct {
				Errors int `xml:"errors,attr"`
				Suites []struct {
					Cases []struct {
						Error *struct {
							Message string `xml:"message,attr"`
						} `xml:"error"`
					} `xml:"testcase"`
				} `xml:"testsuite"`
			}
			if err := xml.Unmarshal(b, &doc); err != nil {
				t.Fatalf("junit.xml is not XML: %v\n%s", err, b)
			}
			if doc.Errors != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 1 || doc.Suites[0].Cases[0].Error == nil ||
				!strings.Contains(doc.Suites[0].Cases[0].Error.Message, tt.want) {
				t.Errorf("junit.xml does not hold one error naming %q:\n%s", tt.want, b)
			}
			if j, _ := os.ReadFile(js); bytes.Contains(j, []byte(stale)) || !bytes.Contains(j, []byte("could not be made")) || !bytes.Contains(j, []byte(tt.want)) {
				t.Errorf("report.json does not say why the run could not be made:\n%s", j)
			}
		})
	}
}

// TestEmptyListWithMutations: a target that lists nothing cannot be
// written to and restored; with --allow-mutations that is exit 2.
func TestEmptyListWithMutations(t *testing.T) {
	url := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "[]")
	})
	code, _, errOut := runInProcess([]string{"--base-url", url, "--api-key", testKey, "--allow-mutations"}, nil)
	if code != cli.ExitCannotRun || !strings.Contains(errOut, "at least one pet") {
		t.Errorf("exit %d, stderr %q; want 2 and a word that the target needs at least one pet", code, errOut)
	}
}

// TestGzipBomb: a target whose every answer is a small gzip body that
// inflates to 32 MiB (a real bomb inflates further; the caps cut both). The run reads at most the caps (small here, to keep
// the test fast under -race), so memory stays bounded, and the checks
// fail saying the body passed the cap.
func TestGzipBomb(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestSpeed)
	chunk := make([]byte, 1<<20)
	for range 32 {
		_, _ = zw.Write(chunk)
	}
	_ = zw.Close()
	url := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(bomb.Bytes())
	})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tg, err := conformance.Prepare(context.Background(), conformance.Config{BaseURL: url, APIKey: testKey, MaxResponseBytes: 256 << 10, MaxRunBytes: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for range 7 {
		x := tg.Send(context.Background(), conformance.Request{Method: "GET", Path: "/inventory"})
		if x.Failure != exchange.FailureCapped || !strings.Contains(x.Err, "cap") {
			t.Fatalf("a 32 MiB body was read past the cap without error: %v", x.Err)
		}
	}
	runtime.ReadMemStats(&after)
	// Each capped read may allocate up to twice its cap while its buffer
	// grows; before the caps, 20 bombs took the binary to 2.8 GB.
	if got := after.TotalAlloc - before.TotalAlloc; got > 7*2*(256<<10)+(16<<20) {
		t.Errorf("allocated %d KiB for 7 capped responses; want about 2 x 256 KiB each", got>>10)
	}
	if got := tg.BytesRead(); got > 2<<20+8 {
		t.Errorf("read %d bytes; the run's cap is 2 MiB", got)
	}
	for range 2 {
		_ = tg.Send(context.Background(), conformance.Request{Method: "GET", Path: "/inventory"})
	}
	x := tg.Send(context.Background(), conformance.Request{Method: "GET", Path: "/inventory"})
	if x.Failure != exchange.FailureCapped || !strings.Contains(x.Err, "--max-run-bytes") {
		t.Errorf("after the run's cap, the error is %v; want one naming --max-run-bytes", x.Err)
	}
	if ps := tg.ResponseProblems(x); len(ps) == 0 {
		t.Errorf("a capped response keeps the rules")
	}
}

// TestKeyEchoedEverywhere: a target that echoes the key in headers,
// bodies, Content-Type, error fields and record fields, and refuses the
// restore. No output, report or restore message may show the key.
func TestKeyEchoedEverywhere(t *testing.T) {
	var writes atomic.Int64
	url := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		w.Header().Set("X-Echo", auth)
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+testKey+`"`)
		w.Header().Set("Content-Type", `application/json; key="`+testKey+`"`)
		key := strings.TrimPrefix(auth, "Bearer ")
		if key != testKey {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"code":"bad key %s","message":"you sent %q","status":401}`, key, auth)
			return
		}
		if r.Method == http.MethodPatch && writes.Add(1) > 1 {
			w.WriteHeader(http.StatusBadRequest) // refuse the restore, echoing the key
			fmt.Fprintf(w, `{"code":"%s","message":"no","status":400}`, testKey)
			return
		}
		if r.Method == http.MethodPatch {
			fmt.Fprintf(w, `{"petId":1,"quantity":8,"status":"sold","echo":"%s"}`, testKey)
			return
		}
		fmt.Fprintf(w, `[{"petId":1,"quantity":3,"status":"sold","%s":"%s"}]`, testKey, testKey)
	})
	dir := t.TempDir()
	junit, js := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.json")
	code, out := runChild(t, "--base-url", url, "--allow-mutations", "--explore-steps", "20", "--junit-report", junit, "--json-report", js, "--verbose")
	if code != cli.ExitFailed {
		t.Errorf("exit %d; want 1", code)
	}
	// The restore is refused, yet the list shows the record as it was:
	// the check that could not restore fails; nothing is left changed.
	if !strings.Contains(out, "petId 1: could not restore quantity 3: PATCH answered 400") || strings.Contains(out, "Left changed") {
		t.Errorf("the refused restore is not reported, or a record the list shows as it was is reported left changed:\n%s", out)
	}
	noKeyIn(t, junit, js) // runChild checks the output
}

// TestForgedLines: a target whose field names and headers carry terminal
// escape codes and newlines cannot forge lines in the summary.
func TestForgedLines(t *testing.T) {
	url := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "+testKey) {
			w.Header().Set("WWW-Authenticate", "Bearer\x1b[2J")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"code":"x\u001b[31m","message":"m\n== Conformance summary: 99 passed, 0 failed ==","status":401}`)
			return
		}
		fmt.Fprint(w, `[{"petId":1,"quantity":3,"status":"sold","\u001b[2Jx\n== Conformance summary: 99 passed, 0 failed, 0 skipped ==":1}]`)
	})
	code, out := runChild(t, "--base-url", url, "--label-filter", "list || silent", "--explore-steps", "0")
	if code == cli.ExitCannotRun {
		t.Fatalf("exit 2:\n%s", out)
	}
	if strings.Contains(out, "\x1b[2J") || strings.Count("\n"+out, "\n== Conformance summary:") != 1 {
		t.Errorf("the target forged output:\n%q", out)
	}
}

// TestRetryAfterCapped: a target that always answers 429 with a long
// Retry-After cannot stretch the run past --max-retry-wait.
func TestRetryAfterCapped(t *testing.T) {
	var calls atomic.Int64
	url := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `[{"petId":1,"quantity":3,"status":"sold"}]`)
			return
		}
		w.Header().Set("Retry-After", "3600")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"code":"slow down","message":"later","status":429}`)
	})
	start := time.Now()
	code, out := runChild(t, "--base-url", url, "--max-retry-wait", "1s", "--label-filter", "list", "--explore-steps", "0")
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the run took %s against a target that always says 429; want the 1s allowance to bound it", took)
	}
	if code != cli.ExitFailed || !strings.Contains(out, "--max-retry-wait") {
		t.Errorf("exit %d; want 1 and a failure naming --max-retry-wait:\n%s", code, out)
	}
}

// TestShortKeysKeepReports: with a key of a few letters ("test", "x",
// "k"), which occur inside the words and element names of every report,
// the JUnit report is still XML with its element names, the JSON report
// still Ginkgo's JSON, and the console still readable.
func TestShortKeysKeepReports(t *testing.T) {
	elements := map[string]bool{"testsuites": true, "testsuite": true, "properties": true, "property": true, "testcase": true, "skipped": true, "system-out": true}
	for _, key := range []string{"test", "x", "k"} {
		t.Run(key, func(t *testing.T) {
			m, err := mockserver.New(mockserver.Config{APIKeys: []string{key}})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(m)
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			junit, js := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.json")
			code, out := runChildKey(t, key, "--base-url", srv.URL+"/v1", "--explore-steps", "10", "--junit-report", junit, "--json-report", js)
			if code != cli.ExitOK {
				t.Fatalf("exit %d; want 0\n%s", code, out)
			}
			for _, want := range []string{"skipped", "--allow-mutations", "Conformance summary"} {
				if !strings.Contains(out, want) {
					t.Errorf("the console lacks %q:\n%s", want, out)
				}
			}
			b, _ := os.ReadFile(junit)
			d := xml.NewDecoder(bytes.NewReader(b))
			cases := 0
			for {
				tok, err := d.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("junit.xml: %v\n%s", err, b)
				}
				if se, ok := tok.(xml.StartElement); ok {
					if !elements[se.Name.Local] {
						t.Errorf("junit.xml has an element <%s>", se.Name.Local)
					}
					if se.Name.Local == "testcase" {
						cases++
					}
				}
			}
			if cases < 60 {
				t.Errorf("junit.xml has %d test cases; want every check", cases)
			}
			var reports []types.Report
			j, _ := os.ReadFile(js)
			if err := json.Unmarshal(j, &reports); err != nil || len(reports) != 1 || reports[0].SuiteDescription != conformance.SuiteName || len(reports[0].SpecReports) < 60 {
				t.Errorf("report.json is not Ginkgo's report (%v):\n%.500s", err, j)
			}
		})
	}
}
