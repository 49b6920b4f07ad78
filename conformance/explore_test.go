package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/mockserver"
)

const exploreKey = "explore-test-key-1234"

// exploreTarget starts the mock, wrapped by wrap (nil: none), and returns
// a target for it and the requests it received, in order.
func exploreTarget(t *testing.T, cfg ExploreConfig, wrap func(http.Handler) http.Handler) (*Target, func() []string) {
	t.Helper()
	m, err := mockserver.New(mockserver.Config{APIKeys: []string{exploreKey}})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = m
	if wrap != nil {
		h = wrap(h)
	}
	var mu sync.Mutex // guards log
	var log []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		mu.Lock()
		log = append(log, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Authorization")+" "+string(b))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tg, err := Prepare(context.Background(), Config{BaseURL: srv.URL + "/v1", APIKey: exploreKey, AllowMutations: true, Explore: cfg, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return tg, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), log...)
	}
}

// TestExploreSameSeedSameRun: two explorations with the same seed and one
// worker against targets in the same state send the very same requests,
// in the same order, and report the same steps; another seed sends
// others. With several workers, each runs the same sequences; only the
// order in which their requests interleave differs.
func TestExploreSameSeedSameRun(t *testing.T) {
	run := func(seed uint64) (*exploreResult, []string) {
		tg, log := exploreTarget(t, ExploreConfig{Steps: 60, Seed: seed, Time: time.Minute, Workers: 1}, nil)
		res := tg.Explore(context.Background())
		return res, log()
	}
	a, logA := run(42)
	b, logB := run(42)
	c, logC := run(43)
	if a.Failure != nil || a.Steps != 60 || a.Stopped != "the step budget" {
		t.Fatalf("the mock: %s", a.Summary())
	}
	if a.Steps != b.Steps || a.Sequences != b.Sequences || strings.Join(logA, "\n") != strings.Join(logB, "\n") {
		t.Errorf("seed 42 twice: %s (%d requests) and %s (%d requests); want the same run", a.Summary(), len(logA), b.Summary(), len(logB))
	}
	if strings.Join(logA, "\n") == strings.Join(logC, "\n") {
		t.Errorf("seeds 42 and 43 sent the same %d requests (%s)", len(logA), c.Summary())
	}
}

// TestExploreShrinks: a target that fails an update to a quantity above
// 500 right after a rejected body to the same record (a 500 answer) is
// found, and the sequence is shrunk to the two steps that break it, from
// a longer one.
// plantedServerError wraps the mock: an update above 500 right after a
// rejected body to the same record answers 500, a failure that needs two
// steps.
func plantedServerError(h http.Handler) http.Handler {
	var mu sync.Mutex // guards rejected
	rejected := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPatch || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "+exploreKey) {
			h.ServeHTTP(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var u struct{ Quantity *int64 }
		valid := json.Unmarshal(b, &u) == nil && u.Quantity != nil
		mu.Lock()
		after := rejected[r.URL.Path]
		rejected[r.URL.Path] = false
		mu.Unlock()
		if valid && after && *u.Quantity > 500 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"code":"planted","message":"planted","status":500}`)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		mu.Lock()
		rejected[r.URL.Path] = rec.Code == http.StatusBadRequest
		mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

func TestExploreShrinks(t *testing.T) {
	longer := false
	for seed := uint64(1); seed <= 8 && !longer; seed++ {
		tg, _ := exploreTarget(t, ExploreConfig{Seed: seed, Time: time.Minute, ShrinkTime: 5 * time.Second}, plantedServerError)
		res := tg.Explore(context.Background())
		f := res.Failure
		if f == nil {
			t.Fatalf("seed %d: the planted failure was not found: %s", seed, res.Summary())
		}
		if !f.Shrunk || len(f.Steps) != 2 || f.Cause != CauseServerError {
			t.Errorf("seed %d: found %d steps (shrunk %v) from %d, cause %s; want 2 steps, server-error:\n%s", seed, len(f.Steps), f.Shrunk, f.Original, f.Cause, f)
		}
		if !strings.Contains(f.Steps[len(f.Steps)-1], "update petId") || !strings.Contains(f.Steps[0], "invalid") || !strings.Contains(f.String(), "curl ") || !strings.Contains(f.String(), "$INVENTORY_API_KEY") {
			t.Errorf("seed %d: the steps are not an invalid body, then an update, shown with their curl lines:\n%s", seed, f)
		}
		t.Logf("seed %d: %s; shrunk from %d steps to %d", seed, res.Summary(), f.Original, len(f.Steps))
		longer = f.Original > len(f.Steps)
	}
	if !longer {
		t.Error("no seed found the failure in a longer sequence than the shrunk one: shrinking was not shown")
	}
}

// TestExploreShrinkOutOfTime: a failure whose shrinking has no time is
// reported as it was first found, saying why, with the seed that replays
// it.
func TestExploreShrinkOutOfTime(t *testing.T) {
	tg, _ := exploreTarget(t, ExploreConfig{Seed: 1, Time: time.Minute, ShrinkTime: time.Nanosecond}, plantedServerError)
	res := tg.Explore(context.Background())
	f := res.Failure
	if f == nil {
		t.Fatalf("the planted failure was not found: %s", res.Summary())
	}
	// Which reason depends on how far the replay got in its nanosecond;
	// that the failure is kept as found, and why, does not.
	if f.Shrunk || f.Why == "" || len(f.Steps) != f.Original || f.Cause != CauseServerError {
		t.Errorf("got %d of %d steps (shrunk %v, why %q), cause %s; want the sequence first found, not shrunk, saying why, server-error", len(f.Steps), f.Original, f.Shrunk, f.Why, f.Cause)
	}
	if !strings.Contains(f.String(), f.Why) {
		t.Errorf("the failure as printed does not say why it is not shrunk (%q):\n%s", f.Why, f)
	}
	if !strings.Contains(res.Summary(), "seed 1") {
		t.Errorf("the summary does not give the seed that replays it: %s", res.Summary())
	}
}

// TestExploreBudgets: the step budget and the time budget each stop the
// exploration, and say which stopped it.
func TestExploreBudgets(t *testing.T) {
	tg, _ := exploreTarget(t, ExploreConfig{Steps: 5, Seed: 3, Time: time.Minute}, nil)
	if res := tg.Explore(context.Background()); res.Steps != 5 || res.Stopped != "the step budget" {
		t.Errorf("--explore-steps 5: %s", res.Summary())
	}
	slow := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(5 * time.Millisecond)
			h.ServeHTTP(w, r)
		})
	}
	tg, _ = exploreTarget(t, ExploreConfig{Steps: 1 << 30, Seed: 3, Time: 400 * time.Millisecond}, slow)
	start := time.Now()
	res := tg.Explore(context.Background())
	if res.Stopped != "the time budget" || res.Steps == 0 || time.Since(start) > 5*time.Second {
		t.Errorf("--explore-time 400ms: %s after %s", res.Summary(), time.Since(start))
	}
}
