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
		fails             []string // empty: the run must pass
	}
	var runs []run
	for _, f := range files {
		runs = append(runs, run{name: "agree/" + filepath.Base(f), suite: f, mock: f})
	}
	v := func(name string) string { return filepath.Join(variantDir, name) }
	runs = append(runs,
		run{name: "disagree/quantity-bounds", suite: v("quantity-bounds.yaml"), fails: []string{"quantity 1001 (above the highest, 1000) gives 400"}},
		run{name: "disagree/required-updated-at", suite: v("required-updated-at.yaml"), fails: []string{"200 with an array of records valid against the contract"}},
		run{name: "disagree/get-one-record", suite: v("get-one-record.yaml"), fails: []string{"getInventoryItem: with the key, a documented status"}},
		run{name: "disagree/update-status", suite: v("update-status.yaml"), fails: []string{"the answer has the same identifier and the values sent"}},
		run{name: "disagree/wide-bounds", suite: v("wide-bounds.yaml"), fails: []string{"quantity -100 (a bound the schema states) is accepted"}},
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
			if len(r.fails) > 0 {
				steps = "0" // the checks named find the disagreement
			}
			c := runChildEnv(t, correctServer, filepath.Join(dir, strings.ReplaceAll(r.name, "/", "-")),
				suiteSpecEnv+"="+r.suite, mockSpecEnv+"="+r.mock, exploreEnv+"="+steps)
			failed, _, _ := outcome(c.report)
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
