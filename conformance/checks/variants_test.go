package checks

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// variantDir holds variants of the contract (the spec-driven issue).
const variantDir = "../../testdata/specs"

// TestVariants runs the suite, each time in a child process, against the
// mock serving each variant of the contract, checked against that same
// variant: every run must pass. Then against the mock serving the embedded
// contract, checked against variants it disagrees with: each must fail
// the checks named.
func TestVariants(t *testing.T) {
	if os.Getenv(brokenEnv) != "" {
		t.Skip("in a child process")
	}
	if testing.Short() {
		t.Skip("-short: skipping the variant runs")
	}
	files, err := filepath.Glob(filepath.Join(variantDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no variants in %s: %v", variantDir, err)
	}
	type run struct {
		name, suite, mock string
		server            string   // the broken server wrapping the mock; empty: none
		fails             []string // empty: the run must pass
		only              bool     // the checks in fails are the only ones that fail
	}
	v := func(name string) string { return filepath.Join(variantDir, name) }
	var runs []run
	for _, f := range files {
		if filepath.Base(f) == "new-write-operation.yaml" {
			continue // the mock cannot serve its new operation: below
		}
		runs = append(runs, run{name: "agree/" + filepath.Base(f), suite: f, mock: f})
	}
	// A new write operation gets the generic checks: the mock answers it
	// 501 (it cannot serve it), which is the one failure; a server that
	// serves it as the contract says passes; one that ignores the key on
	// it, or answers another shape, fails the check for that.
	nw := v("new-write-operation.yaml")
	runs = append(runs,
		run{name: "mock-cannot-serve/new-write-operation", suite: nw, mock: nw, only: true,
			fails: []string{"operations: placeOrder: with the key and a body valid against its schema, a documented status and a body valid against the contract"}},
		run{name: "served/new-write-operation", suite: nw, mock: nw, server: "orders-served"},
		run{name: "auth-ignored/new-write-operation", suite: nw, mock: nw, server: "orders-auth-ignored", fails: []string{"placeOrder: no Authorization header gives 401"}},
		run{name: "wrong-shape/new-write-operation", suite: nw, mock: nw, server: "orders-wrong-shape", fails: []string{"placeOrder: with the key and a body valid against its schema"}},
	)
	runs = append(runs,
		run{name: "disagree/quantity-bounds", suite: v("quantity-bounds.yaml"), fails: []string{"quantity 1001 (above the highest, 1000) gives 400"}},
		run{name: "disagree/required-updated-at", suite: v("required-updated-at.yaml"), fails: []string{"200 with an array of records valid against the contract"}},
		run{name: "disagree/get-one-record", suite: v("get-one-record.yaml"), fails: []string{"getInventoryItem: with the key, a documented status"}},
		run{name: "disagree/update-status", suite: v("update-status.yaml"), fails: []string{"the answer has the same identifier and the values sent"}},
		run{name: "disagree/wide-bounds", suite: v("wide-bounds.yaml"), fails: []string{"quantity -100 (a bound the schema states) is accepted"}},
		run{name: "disagree/quantity-multiple-of", suite: v("quantity-multiple-of.yaml"), fails: []string{"quantity 1 (not a multiple of 5) gives 400"}},
		// Not a disagreement the contract lets the suite see: the mock,
		// which reads any int64, answers petId 101 (past the variant's
		// bound, 100) 404, and an identifier outside the bounds addresses
		// no pet, so 404 is as right as 400.
		run{name: "bounds-answered-404/id-bounds", suite: v("id-bounds.yaml")},
	)
	dir := t.TempDir()
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			steps := "30"
			if len(r.fails) > 0 && !r.only {
				steps = "0" // the checks named find the disagreement
			}
			server := correctServer
			if r.server != "" {
				server = r.server
			}
			c := runChildEnv(t, server, filepath.Join(dir, strings.ReplaceAll(r.name, "/", "-")),
				suiteSpecEnv+"="+r.suite, mockSpecEnv+"="+r.mock, exploreEnv+"="+steps)
			failed, _, _ := outcome(c.report)
			if r.only && strings.Join(failed, "\n") != strings.Join(r.fails, "\n") {
				t.Errorf("%s: failed %q; want exactly %q", r.name, failed, r.fails)
			}
			if len(r.fails) == 0 {
				if c.err != nil || len(failed) > 0 {
					t.Errorf("%s: failed %q (%v):\n%s", r.name, failed, c.err, tail(c.output))
				}
				return
			}
			for _, want := range r.fails {
				if !containsSub(failed, want) {
					t.Errorf("%s: no failed check matches %q; failed: %q", r.name, want, failed)
				}
			}
		}()
	}
	wg.Wait()
}

func containsSub(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
