package main

import (
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/metrics"
)

// TestPassesAgainstARateLimitedMock runs the suite against the mock with
// a rate limit, as a shared staging service would have one: the suite is
// answered 429 on the way, waits as each Retry-After says, and passes.
func TestPassesAgainstARateLimitedMock(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the run waits on the rate limit")
	}
	m := metrics.New()
	_, srv := mockserver.StartTest(t, mockserver.Config{APIKeys: []string{testKey}, Metrics: m, RateLimit: mockserver.RateLimit{Rate: "100/s", Burst: 20}}, nil)
	code, out := runChild(t, "--base-url", srv.URL+"/v1", "--allow-mutations", "--explore-steps", "100")
	if code != cli.ExitOK || !strings.Contains(out, "0 failed") {
		t.Fatalf("exit %d; want 0 and 0 failed\n%s", code, out)
	}
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	limited := 0.0
	for _, f := range families {
		if f.GetName() != "inventory_mock_requests_total" {
			continue
		}
		for _, s := range f.Metric {
			for _, l := range s.Label {
				if l.GetName() == "status" && l.GetValue() == "429" {
					limited += s.GetCounter().GetValue()
				}
			}
		}
	}
	if limited == 0 {
		t.Error("the mock answered no 429: the run did not meet the rate limit")
	}
	t.Logf("%v requests answered 429 on the way", limited)
}
