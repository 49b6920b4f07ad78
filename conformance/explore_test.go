package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec"
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
// worker against targets in the same state send the same requests (the
// values they carry may follow which of the writes a step sends at once
// the target applied last), in the same order, and report the same
// steps; another seed sends
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
	logA, logB, logC = requestLines(logA), requestLines(logB), requestLines(logC)
	if a.Steps != b.Steps || a.Sequences != b.Sequences || strings.Join(logA, "\n") != strings.Join(logB, "\n") {
		i := 0
		for i < min(len(logA), len(logB)) && logA[i] == logB[i] {
			i++
		}
		t.Errorf("seed 42 twice: %s (%d requests) and %s (%d requests); want the same run; request %d differs:\n%s\n%s", a.Summary(), len(logA), b.Summary(), len(logB), i, strings.Join(logA[i:min(i+3, len(logA))], "\n"), strings.Join(logB[i:min(i+3, len(logB))], "\n"))
	}
	if strings.Join(logA, "\n") == strings.Join(logC, "\n") {
		t.Errorf("seeds 42 and 43 sent the same %d requests (%s)", len(logA), c.Summary())
	}
}

// requestLines keeps of each request in log its method, path and
// credential: which of the writes a step sends at once the target applies
// last decides the values later steps send (restores, bodies drawn from
// the record), not which requests they are.
func requestLines(log []string) []string {
	out := make([]string, len(log))
	for i, l := range log {
		f := strings.Fields(l)
		out[i] = strings.Join(f[:min(len(f), 4)], " ")
	}
	return out
}

// plantedServerError wraps the mock: an update above 500 whose previous
// update (of any record) was a body rejected for the same record answers
// 500, a failure that needs two steps.
func plantedServerError(h http.Handler) http.Handler {
	var mu sync.Mutex // guards rejected
	rejected := ""    // the path of the previous update, if it was rejected
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/v1/inventory/"), 10, 64)
		if r.Method != http.MethodPatch || err != nil || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "+exploreKey) {
			h.ServeHTTP(w, r) // a malformed identifier addresses no record
			return
		}
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var u struct{ Quantity *int64 }
		valid := json.Unmarshal(b, &u) == nil && u.Quantity != nil
		mu.Lock()
		after := rejected == r.URL.Path
		rejected = ""
		mu.Unlock()
		if valid && after && *u.Quantity > 500 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"code":"planted","message":"planted","status":500}`)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code == http.StatusBadRequest {
			mu.Lock()
			rejected = r.URL.Path
			mu.Unlock()
		}
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// TestExploreShrinks: a target that fails an update to a quantity above
// 500 right after a rejected body to the same record (a 500 answer) is
// found, and the sequence is shrunk to the two steps that break it, from
// a longer one. One worker: the planted server's memory is the previous
// update, which another worker's would overwrite.
func TestExploreShrinks(t *testing.T) {
	longer := false
	for seed := uint64(1); seed <= 8 && !longer; seed++ {
		tg, _ := exploreTarget(t, ExploreConfig{Seed: seed, Time: time.Minute, ShrinkTime: 5 * time.Second, Workers: 1}, plantedServerError)
		res := tg.Explore(context.Background())
		f := res.Failure
		if f == nil {
			t.Fatalf("seed %d: the planted failure was not found: %s", seed, res.Summary())
		}
		last := f.Steps[len(f.Steps)-1]
		if !f.Shrunk || f.Cause != spec.RuleServerError || !strings.Contains(last, "update petId") || !strings.Contains(f.String(), "curl ") || !strings.Contains(f.String(), "$INVENTORY_API_KEY") {
			t.Errorf("seed %d: found %d steps (shrunk %v) from %d, cause %s; want a shrunk sequence ending in an update, server-error, shown with curl lines:\n%s", seed, len(f.Steps), f.Shrunk, f.Original, f.Cause, f)
		}
		t.Logf("seed %d: %s; shrunk from %d steps to %d", seed, res.Summary(), f.Original, len(f.Steps))
		rejected := len(f.Steps) == 2 && (strings.Contains(f.Steps[0], "invalid") || strings.Contains(f.Steps[0], "not an identifier") || strings.Contains(f.Steps[0], "silent"))
		switch {
		case rejected:
			longer = longer || f.Original > 2
		case len(f.Steps) == 1:
			// The planted server remembers a rejected body across
			// sequences (a sequence whose writes were all rejected
			// restores nothing): then one update is the shortest
			// sequence that fails, and shrinking found it.
		default:
			t.Errorf("seed %d: the steps are not a rejected request, then an update:\n%s", seed, f)
		}
	}
	if !longer {
		t.Error("no seed shrank the failure to a rejected request, then an update, from a longer sequence: shrinking was not shown")
	}
}

// TestExploreShrinkOutOfTime: a failure whose shrinking has no time is
// reported as it was first found, saying why, with the seed that replays
// it.
func TestExploreShrinkOutOfTime(t *testing.T) {
	tg, _ := exploreTarget(t, ExploreConfig{Seed: 1, Time: time.Minute, ShrinkTime: time.Nanosecond, Workers: 1}, plantedServerError)
	res := tg.Explore(context.Background())
	f := res.Failure
	if f == nil {
		t.Fatalf("the planted failure was not found: %s", res.Summary())
	}
	// Which reason depends on how far the replay got in its nanosecond;
	// that the failure is kept as found, and why, does not.
	if f.Shrunk || f.Why == "" || len(f.Steps) != f.Original || f.Cause != spec.RuleServerError {
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

// stockByDifference wraps the mock as a backend that keeps stock as
// movements: an update reads the record, waits a moment (its database is
// far), and adds the difference to what the record holds then. One write
// at a time is right; two at once leave the sum of both differences, a
// value neither sent (a lost update). Its answers echo the values sent,
// as such a backend's do, so only a later list shows the defect.
func stockByDifference(h http.Handler) http.Handler {
	var mu sync.Mutex // one adjustment at a time, as a database increment is
	quantity := func(r *http.Request, id string) (int64, bool) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequestWithContext(r.Context(), http.MethodGet, "/v1/inventory", nil)
		req.Header.Set("Authorization", r.Header.Get("Authorization"))
		h.ServeHTTP(rec, req)
		var items []struct {
			PetID    json.Number `json:"petId"`
			Quantity int64       `json:"quantity"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &items)
		for _, it := range items {
			if it.PetID.String() == id {
				return it.Quantity, true
			}
		}
		return 0, false
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := strings.CutPrefix(r.URL.Path, "/v1/inventory/")
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var u struct{ Quantity *int64 }
		if r.Method != http.MethodPatch || !ok || r.Header.Get("Authorization") != "Bearer "+exploreKey || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &u) != nil || u.Quantity == nil || *u.Quantity < 0 {
			h.ServeHTTP(w, r) // what it refuses, the mock refuses
			return
		}
		before, found := quantity(r, id)
		if !found {
			h.ServeHTTP(w, r)
			return
		}
		time.Sleep(10 * time.Millisecond)
		mu.Lock()
		now, _ := quantity(r, id)
		r.Body = io.NopCloser(strings.NewReader(`{"quantity":` + strconv.FormatInt(max(now+*u.Quantity-before, 0), 10) + `}`))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		mu.Unlock()
		var item map[string]any
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &item) != nil {
			maps.Copy(w.Header(), rec.Header())
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		item["quantity"] = *u.Quantity
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(item)
	})
}

// TestExploreFindsLostUpdate: the exploration alone (no check of the
// suite runs here) finds a backend whose concurrent writes to one record
// lose one another, and names the cause.
func TestExploreFindsLostUpdate(t *testing.T) {
	tg, _ := exploreTarget(t, ExploreConfig{Seed: 5, Time: time.Minute, ShrinkTime: 5 * time.Second}, stockByDifference)
	res := tg.Explore(context.Background())
	f := res.Failure
	if f == nil {
		t.Fatalf("the lost update was not found: %s", res.Summary())
	}
	if f.Cause != spec.RuleLostUpdate || !strings.Contains(f.String(), "at once") {
		t.Errorf("found cause %s; want %s, in a step that writes at once:\n%s", f.Cause, spec.RuleLostUpdate, f)
	}
	t.Logf("%s\n%s", res.Summary(), f)
}
