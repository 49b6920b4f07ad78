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
	brokenEnv     = "CONFORMANCE_BROKEN_SERVER" // the broken server to run against
	reportEnv     = "CONFORMANCE_JSON_REPORT"   // where to write the JSON report
	junitEnv      = "CONFORMANCE_JUNIT_REPORT"  // where to write the JUnit report
	exploreEnv    = "CONFORMANCE_EXPLORE_STEPS" // the exploration's step budget
	childSeed     = 7                           // the exploration seed of every child
	defaultChecks = 30                          // exploration steps of a child by default
)

// newMock returns the in-process mock with the default fixtures.
func newMock(tb testing.TB) *mockserver.Server {
	c, err := spec.Shared()
	if err != nil {
		tb.Fatal(err)
	}
	sh, err := fixtures.NewShape(c)
	if err != nil {
		tb.Fatal(err)
	}
	records, _, err := fixtures.Default(sh)
	if err != nil {
		tb.Fatal(err)
	}
	h, err := mockserver.New(mockserver.Config{Contract: c, Records: records, APIKeys: []string{testKey}})
	if err != nil {
		tb.Fatal(err)
	}
	return h
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
	srv := httptest.NewServer(h)
	defer srv.Close()
	var timeout time.Duration
	if b, ok := brokenServerNamed(os.Getenv(brokenEnv)); ok {
		timeout = b.timeout
	}
	steps := defaultChecks
	if v := os.Getenv(exploreEnv); v != "" {
		steps, _ = strconv.Atoi(v)
	}
	tg, err := conformance.Prepare(context.Background(), conformance.Config{
		BaseURL: srv.URL + "/v1", APIKey: testKey, AllowMutations: true, Timeout: timeout,
		Explore: conformance.ExploreConfig{Steps: steps, Seed: childSeed, Time: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = conformance.Run(tg, Register, conformance.RunOptions{
		T: t, JSONReport: os.Getenv(reportEnv), JUnitReport: os.Getenv(junitEnv),
		Info: conformance.RunInfo{Target: srv.URL + "/v1", Contract: "embedded"},
	})
	if err != nil {
		t.Fatal(err)
	}
}
