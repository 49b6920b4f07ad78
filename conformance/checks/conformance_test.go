package checks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec"
)

// testKey is the key the in-process mock accepts. The leak test looks for
// it in every output.
const testKey = "ck-test-5f1d2e9a7b3c4d6e"

// Environment of a child process run by TestBrokenServers.
const (
	brokenEnv      = "CONFORMANCE_BROKEN_SERVER" // the broken server to run against
	reportEnv      = "CONFORMANCE_JSON_REPORT"   // where to write the JSON report
	junitEnv       = "CONFORMANCE_JUNIT_REPORT"  // where to write the JUnit report
	exploreEnv     = "CONFORMANCE_EXPLORE_STEPS" // the exploration's step budget
	suiteSpecEnv   = "CONFORMANCE_SUITE_SPEC"    // the document the suite checks (a file); empty: embedded
	mockSpecEnv    = "CONFORMANCE_MOCK_SPEC"     // the document the mock serves (a file); empty: embedded
	labelEnv       = "CONFORMANCE_LABEL_FILTER"  // the checks a child runs; empty: all
	seedEnv        = "CONFORMANCE_SEED"          // the exploration seed of a child; empty: childSeed
	exploreTimeEnv = "CONFORMANCE_EXPLORE_TIME"  // the exploration's time budget; empty: 5s
	latencyEnv     = "CONFORMANCE_LATENCY"       // the delay the server adds to each request, a target that far away; empty: none
	childSeed      = 7                           // the exploration seed of a child by default
	defaultChecks  = 80                          // exploration steps of a child by default
)

// loadSpec loads a document from a file, or the embedded one for "".
func loadSpec(tb testing.TB, file string) *spec.Contract {
	if file == "" {
		c, err := spec.Shared()
		if err != nil {
			tb.Fatal(err)
		}
		return c
	}
	doc, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := spec.Load(doc)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// newMock returns the in-process mock serving the document named by
// CONFORMANCE_MOCK_SPEC (default: embedded) with the default fixtures, or
// generated ones where the fixtures do not fit the document.
func newMock(tb testing.TB) *mockserver.Server {
	c := loadSpec(tb, os.Getenv(mockSpecEnv))
	sh, err := fixtures.NewShape(c)
	if err != nil {
		tb.Fatal(err)
	}
	records, _, err := fixtures.Default(sh)
	if err != nil {
		if records, err = fixtures.Generate(sh, 64, 1); err != nil {
			tb.Fatal(err)
		}
	}
	return mockserver.NewTest(tb, mockserver.Config{Contract: c, Records: records, APIKeys: []string{testKey}})
}

// TestConformance runs the whole suite, mutating checks and a short
// exploration included, against the in-process mock, or against the
// broken server named by CONFORMANCE_BROKEN_SERVER (set by
// TestBrokenServers in a child process).
func TestConformance(t *testing.T) {
	var h http.Handler = newMock(t)
	if name := os.Getenv(brokenEnv); name != "" && name != correctServer {
		b, ok := brokenServerNamed(name)
		if !ok {
			t.Fatalf("no broken server %q", name)
		}
		h = b.wrap(h)
	}
	if v := os.Getenv(latencyEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s: %v", latencyEnv, err)
		}
		h = withLatency(d)(h)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	suiteSpec := loadSpec(t, os.Getenv(suiteSpecEnv))
	var timeout time.Duration
	if b, ok := brokenServerNamed(os.Getenv(brokenEnv)); ok {
		timeout = b.timeout
	}
	// The step budget: a number, "none" for the time alone, "0" for no
	// exploration.
	steps := defaultChecks
	if v := os.Getenv(exploreEnv); v == "none" {
		steps = 0
	} else if v != "" {
		steps, _ = strconv.Atoi(v)
	}
	seed := uint64(childSeed)
	if v := os.Getenv(seedEnv); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	budget, shrink := 5*time.Second, 300*time.Millisecond
	if v := os.Getenv(exploreTimeEnv); v == "default" {
		budget, shrink = 0, 0 // the binary's defaults
	} else if v != "" {
		budget, _ = time.ParseDuration(v)
	}
	tg, err := conformance.Prepare(context.Background(), conformance.Config{
		BaseURL: srv.URL + loadSpec(t, os.Getenv(mockSpecEnv)).BasePath, APIKey: testKey, Contract: suiteSpec, AllowMutations: true, Timeout: timeout,
		Explore: conformance.ExploreConfig{Off: os.Getenv(exploreEnv) == "0", Steps: steps, Seed: seed, Time: budget, ShrinkTime: shrink},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = conformance.Run(tg, Register, conformance.RunOptions{
		T: t, JSONReport: os.Getenv(reportEnv), JUnitReport: os.Getenv(junitEnv), LabelFilter: os.Getenv(labelEnv),
		MarkdownReport: os.Getenv(markdownEnv), HTMLReport: os.Getenv(htmlEnv), Annotations: annotations(),
		Info: conformance.RunInfo{Target: srv.URL + "/v1", Contract: "embedded"},
	})
	if err != nil {
		t.Fatal(err)
	}
}
