package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
)

// childRun is the command run in a child process: its exit status, its
// output, how long it took and the most memory it held.
type childRun struct {
	code   int
	out    string
	took   time.Duration
	maxRSS int64 // bytes: the child's peak resident memory
}

// runMeasured runs the command in a child process, as runChild does, and
// measures it.
func runMeasured(t *testing.T, args ...string) childRun {
	t.Helper()
	a, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	peak := filepath.Join(t.TempDir(), "peak")
	cmd.Env = append(os.Environ(), childArgs+"="+string(a), childPeak+"="+peak, "INVENTORY_API_KEY="+testKey)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r := childRun{out: out.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	// The child's own peak (VmHWM), which it writes as it exits; where
	// there is no /proc, rusage's, which counts the parent's peak too.
	if b, err := os.ReadFile(peak); err == nil {
		r.maxRSS, _ = strconv.ParseInt(string(b), 10, 64)
	} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss << 10 // KiB on Linux
	}
	if strings.Contains(r.out, testKey) {
		t.Errorf("the key appears in the output")
	}
	return r
}

// TestWrappedListWithMutations: a list that answers 200 with an object
// around the records breaks the contract before any check starts. With
// --allow-mutations that is exit 1, not 2: the list check fails, and the
// checks that need a listed record say they were not judged, and why.
func TestWrappedListWithMutations(t *testing.T) {
	url, _ := newMock(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.URL.Path == "/v1/inventory" && r.Header.Get("Authorization") == "Bearer "+testKey {
				rec := newRecorder()
				h.ServeHTTP(rec, r)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"items":%s}`, rec.body.Bytes())
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out := runChild(t, "--base-url", url, "--allow-mutations", "--junit-report", junit)
	if code != cli.ExitFailed {
		t.Fatalf("exit %d; want 1\n%s", code, out)
	}
	for _, want := range []string{"list: listInventory: 200 with an array of records valid against the contract", "got object, want array", "Not judged", "the list breaks the contract"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "could not be made") || strings.Contains(out, "RESTORE") {
		t.Errorf("the run says it could not be made, or restored something:\n%s", out)
	}
	if b, _ := os.ReadFile(junit); !bytes.Contains(b, []byte("not judged: ")) {
		t.Errorf("junit.xml does not say which checks were not judged:\n%.2000s", b)
	}
}

// TestHangingTarget: a target that stops answering part way is declared
// gone after 3 requests in a row without an answer: the run stops with
// exit 2 within seconds, and its reports keep the failures found before
// and say why it stopped.
func TestHangingTarget(t *testing.T) {
	var served atomic.Int64
	url, _ := newMock(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if served.Add(1) > 150 {
				select { // hang, until the client gives up
				case <-r.Context().Done():
				case <-time.After(time.Minute):
				}
				return
			}
			// A defect every check that lists finds, whatever order the
			// checks run in, before the target hangs.
			rec := newRecorder()
			h.ServeHTTP(rec, r)
			for k, v := range rec.h {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.code)
			_, _ = w.Write(bytes.Replace(rec.body.Bytes(), []byte(`"status":"available"`), []byte(`"status":"lost"`), 1))
		})
	})
	dir := t.TempDir()
	junit, js := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.json")
	r := runMeasured(t, "--base-url", url, "--allow-mutations", "--timeout", "300ms", "--junit-report", junit, "--json-report", js)
	if r.code != cli.ExitCannotRun {
		t.Fatalf("exit %d; want 2\n%s", r.code, r.out)
	}
	if !strings.Contains(r.out, "the target stopped answering: 3 requests in a row got no answer") {
		t.Errorf("the output does not say the target stopped answering:\n%s", r.out)
	}
	if r.took > 20*time.Second {
		t.Errorf("the run took %s; want it to stop within seconds of the target going silent", r.took)
	}
	t.Logf("exit 2 after %s", r.took.Round(time.Millisecond))
	doc := readJUnit(t, junit)
	stopped, failures := false, 0
	for _, s := range doc.Suites {
		for _, p := range s.Props {
			stopped = stopped || (p.Name == "stopped" && strings.Contains(p.Value, "stopped answering"))
		}
	}
	b, _ := os.ReadFile(junit)
	failures = bytes.Count(b, []byte("<failure "))
	if !stopped || failures == 0 {
		t.Errorf("junit.xml: stopped %v, %d failures; want the reason and the failures found before:\n%.3000s", stopped, failures, b)
	}
	if j, _ := os.ReadFile(js); !bytes.Contains(j, []byte("stopped answering")) || !bytes.Contains(j, []byte("lost")) {
		t.Errorf("report.json lacks the reason or the failures found:\n%.2000s", j)
	}
}

// TestMaxRunTime: --max-run-time stops a run that takes longer: exit 2,
// and the reports say why.
func TestMaxRunTime(t *testing.T) {
	url, _ := newMock(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(20 * time.Millisecond)
			h.ServeHTTP(w, r)
		})
	})
	junit := filepath.Join(t.TempDir(), "junit.xml")
	r := runMeasured(t, "--base-url", url, "--allow-mutations", "--max-run-time", "1s", "--junit-report", junit)
	if r.code != cli.ExitCannotRun || !strings.Contains(r.out, "--max-run-time 1s") {
		t.Fatalf("exit %d; want 2 and the reason\n%s", r.code, r.out)
	}
	if r.took > 10*time.Second {
		t.Errorf("the run took %s with --max-run-time 1s", r.took)
	}
	if b, _ := os.ReadFile(junit); !bytes.Contains(b, []byte("--max-run-time 1s")) {
		t.Errorf("junit.xml does not say why the run stopped:\n%.2000s", b)
	}
}

// TestLargeList: a target listing many pets, each past 2^53, is checked
// with memory bounded by the list's size: the records are indexed where
// they lie in the body, never decoded into maps, and the same warning for
// every record is one warning with a count. The reports stay small.
func TestLargeList(t *testing.T) {
	pets := 120_000
	if raceDetector {
		pets = 30_000
	}
	if n, err := strconv.Atoi(os.Getenv("LARGE_LIST_PETS")); err == nil {
		pets = n // such as 240000, the figure --help's bound is measured on
	}
	records := make([]fixtures.Record, pets)
	for i := range records {
		id := int64(1<<53 + 1 + i)
		records[i] = fixtures.Record{ID: id, JSON: fmt.Appendf(nil, `{"petId":%d,"quantity":%d,"status":"available"}`, id, i%1000)}
	}
	_, srv := mockserver.StartTest(t, mockserver.Config{APIKeys: []string{testKey}, Records: records}, nil)
	dir := t.TempDir()
	junit, js := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.json")
	r := runMeasured(t, "--base-url", srv.URL+"/v1", "--allow-mutations", "--label-filter", "list || update || explore", "--explore-time", "3s",
		"--junit-report", junit, "--json-report", js)
	if r.code != cli.ExitOK {
		t.Fatalf("exit %d; want 0\n%s", r.code, r.out)
	}
	if !strings.Contains(r.out, fmt.Sprintf("%d petIds exceed 2^53-1", pets)) || strings.Count(r.out, "exceed") != 1 {
		t.Errorf("want one warning counting the %d petIds past 2^53:\n%s", pets, r.out)
	}
	size := int64(len(records)) * int64(len(records[0].JSON)+1)
	var reports int64
	for _, f := range []string{junit, js} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		reports += fi.Size()
	}
	t.Logf("%d pets, a list of %.1f MiB: %s, peak RSS %d MiB, reports %d KiB", pets, float64(size)/(1<<20), r.took.Round(time.Millisecond), r.maxRSS>>20, reports>>10)
	// The bound --help states: about 20 bytes live per byte of the list,
	// under a collector limit of 400 MiB; the race detector's shadow
	// memory takes several times more.
	limit := int64(memoryLimit) + 100<<20
	if raceDetector {
		limit *= 4
	}
	if r.maxRSS > limit {
		t.Errorf("peak RSS %d MiB for a list of %d KiB; want under %d MiB", r.maxRSS>>20, size>>10, limit>>20)
	}
	if reports > 1<<20 {
		t.Errorf("reports of %d KiB; want them bounded, whatever the list", reports>>10)
	}
}

// recorder is a minimal http.ResponseWriter that keeps the body.
type recorder struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func newRecorder() *recorder                    { return &recorder{h: http.Header{}, code: http.StatusOK} }
func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) WriteHeader(code int)        { r.code = code }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
