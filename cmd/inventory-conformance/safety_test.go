package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

// looseIDs reads a path identifier as a careless backend does: its
// leading digits (abc, with none, as 1; 1.5 as 1; a number past int64 as
// the largest int64).
func looseIDs(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/v1/inventory/"); ok {
			if _, err := strconv.ParseInt(rest, 10, 64); err != nil {
				digits := rest[:len(rest)-len(strings.TrimLeft(rest, "0123456789"))]
				if _, err := strconv.ParseInt(digits, 10, 64); err != nil && digits != "" {
					digits = strconv.FormatInt(math.MaxInt64, 10)
				}
				if digits == "" {
					digits = "1"
				}
				r.URL.Path, r.URL.RawPath = "/v1/inventory/"+digits, ""
			}
		}
		h.ServeHTTP(w, r)
	})
}

// TestReadOnlyAgainstLooseIDs: without --allow-mutations, against a target
// that reads malformed identifiers as other pets' (abc as 1), no request
// carries values it could write there: the data is the same afterwards,
// over several seeds, and the summary does not claim more than that.
func TestReadOnlyAgainstLooseIDs(t *testing.T) {
	url, m := newMock(t, looseIDs)
	before := listed(t, m)
	for _, seed := range []string{"5", "42", "777"} {
		// Exit 0 or 1: with no body to send, the target's 400 for the
		// missing body hides its loose reading; the data is what counts.
		code, out := runChild(t, "--base-url", url, "--pet-id", "3", "--seed", seed, "--explore-steps", "300")
		if code == cli.ExitCannotRun {
			t.Fatalf("seed %s: exit 2\n%s", seed, out)
		}
		if after := listed(t, m); !bytes.Equal(before, after) {
			t.Fatalf("seed %s: a read-only run changed the data:\nbefore %s\nafter  %s", seed, before, after)
		}
		if strings.Contains(out, "no request changed data") || !strings.Contains(out, "writes a conforming target refuses") {
			t.Errorf("seed %s: the summary does not say what a read-only run sends:\n%s", seed, out)
		}
	}
}

// TestPetIDBoundsExploration: with --pet-id, the exploration writes to
// that pet only; every other listed pet gets reads. The exploration is
// labelled mutating when it writes, so '!mutating' leaves it out.
func TestPetIDBoundsExploration(t *testing.T) {
	var mu sync.Mutex // guards patched
	patched := map[string]int{}
	url, m := newMock(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPatch {
				mu.Lock()
				patched[strings.TrimPrefix(r.URL.Path, "/v1/inventory/")]++
				mu.Unlock()
			}
			h.ServeHTTP(w, r)
		})
	})
	var ids []struct {
		PetID int64 `json:"petId"`
	}
	if err := json.Unmarshal(listed(t, m), &ids); err != nil {
		t.Fatal(err)
	}
	code, out := runChild(t, "--base-url", url, "--allow-mutations", "--pet-id", "3", "--label-filter", "explore", "--explore-steps", "300", "--seed", "9")
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if patched["3"] < 10 {
		t.Errorf("pet 3 was written %d times; want the exploration to write to it", patched["3"])
	}
	for _, id := range ids {
		if n := patched[strconv.FormatInt(id.PetID, 10)]; id.PetID != 3 && n > 0 {
			t.Errorf("pet %d was PATCHed %d times; --pet-id 3 allows writes to pet 3 only", id.PetID, n)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--list", "--allow-mutations"}, "[explore, mutating]"},
		{[]string{"--list"}, "[explore]"},
	} {
		if code, out := runChild(t, tt.args...); code != cli.ExitOK || !strings.Contains(out, "explore: random sequences") || !strings.Contains(out, tt.want) {
			t.Errorf("%v: exit %d; want the explore check labelled %s:\n%s", tt.args, code, tt.want, out)
		}
	}
}

// hugeList is a target listing n pets, quickly, as a hostile or very large
// backend would; it counts the lists it served.
func hugeList(t *testing.T, n int) (string, *atomic.Int64) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"petId":%d,"quantity":%d,"status":"available"}`, i, i%1000)
	}
	b.WriteByte(']')
	body := b.Bytes()
	var lists atomic.Int64
	url := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "+testKey) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"code":"unauthorized","message":"no key","status":401}`)
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/v1/inventory" {
			lists.Add(1)
			_, _ = w.Write(body)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"code":"not_found","message":"no","status":404}`)
	})
	return url, &lists
}

// TestInterruptLargeList: a run against a target listing 200,000 pets,
// interrupted while the checks walk the list, exits 2 within seconds of
// the signal, saying so, and its reports say it was interrupted.
func TestInterruptLargeList(t *testing.T) {
	pets := 200_000
	if raceDetector {
		pets = 50_000 // still a list the checks take seconds to walk under -race
	}
	url, lists := hugeList(t, pets)
	dir := t.TempDir()
	junit, js := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.json")
	a, _ := json.Marshal([]string{"--base-url", url, "--junit-report", junit, "--json-report", js})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgs+"="+string(a), "INVENTORY_API_KEY="+testKey)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for lists.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if lists.Load() < 4 {
		_ = cmd.Process.Kill()
		t.Fatalf("the run did not list the pets 4 times in 60s:\n%s", out.String())
	}
	sent := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	took := time.Since(sent)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != cli.ExitCannotRun {
		t.Errorf("exit %v; want 2\n%s", err, out.String())
	}
	// Promptly, not at once: the bound leaves room for a loaded machine
	// and the race detector; a run that walked on would take far longer.
	if took > 3*time.Second {
		t.Errorf("the run took %s to stop after the interrupt; want under 3s", took.Round(time.Millisecond))
	}
	t.Logf("stopped %s after the interrupt, having listed %d pets %d times", took.Round(time.Millisecond), pets, lists.Load())
	for _, f := range []string{junit, js} {
		if b, _ := os.ReadFile(f); !bytes.Contains(b, []byte("interrupted")) {
			t.Errorf("%s does not say the run was interrupted:\n%.600s", filepath.Base(f), b)
		}
	}
	if strings.Contains(out.String(), "Exploration seed") {
		t.Errorf("the output names an exploration seed that never ran:\n%s", out.String())
	}
}
