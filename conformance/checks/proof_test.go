package checks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/petstore/inventory-kit/conformance"
)

// correctServer names the unbroken mock among the children.
const correctServer = "correct"

// exploreBlind lists the broken servers exploration alone cannot find,
// and why. Every other server that breaks a rule must make the
// exploration check fail; every server that breaks none must not.
var exploreBlind = map[string]string{
	"query-key-accepted": "exploration never puts the key in a URL (the key-in-url checks do, and production runs leave them out)",
	"lost-updates":       "exploration sends one request at a time; the concurrency check finds it",
	"huge-body-crashes":  "exploration sends no body past 1 MiB; the 4 MiB check finds it",
}

// warningOnly lists specs that report warnings and cannot fail on their
// own; a broken server proves each by making it warn.
var warningOnly = []string{"identifiers fit a JavaScript number (warning only)", "the scheme word is case-insensitive (bearer KEY)"}

// A childRun is the suite run against one server in a child process.
type childRun struct {
	name   string
	err    error
	output []byte
	report types.Report
}

// runChildEnv runs TestConformance in a child process against the named
// server, with its report files at prefix and the extra environment env,
// and reads its Ginkgo JSON report.
func runChildEnv(t *testing.T, name, prefix string, env ...string) childRun {
	report := prefix + ".json"
	cmd := exec.Command(os.Args[0], "-test.run=^TestConformance$", "-test.count=1", "-ginkgo.no-color")
	cmd.Env = append(append(os.Environ(), brokenEnv+"="+name, reportEnv+"="+report, junitEnv+"="+prefix+".xml"), env...)
	out, err := cmd.CombinedOutput()
	run := childRun{name: name, err: err, output: out}
	data, rerr := os.ReadFile(report)
	if rerr != nil {
		t.Errorf("%s: no report: %v\n%s", name, rerr, out)
		return run
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil || len(reports) != 1 {
		t.Errorf("%s: report %s: %v", name, report, err)
		return run
	}
	run.report = reports[0]
	for _, f := range []string{report, prefix + ".xml"} {
		if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(testKey)) {
			t.Errorf("%s: the API key appears in %s", name, filepath.Base(f))
		}
	}
	if bytes.Contains(out, []byte(testKey)) {
		t.Errorf("%s: the API key appears in the output", name)
	}
	return run
}

// TestBrokenServers runs the suite against the correct mock and against
// every broken server, each in its own process, and checks that the
// correct one passes, that each broken one fails the specs for the rule it
// breaks, and that every spec is failed by at least one broken server.
func TestBrokenServers(t *testing.T) {
	if os.Getenv(brokenEnv) != "" {
		t.Skip("in a child process")
	}
	if testing.Short() {
		t.Skip("-short: skipping the broken-server runs")
	}
	dir := t.TempDir()
	names := []string{correctServer}
	for _, b := range brokenServers {
		names = append(names, b.name)
	}
	runs := make([]childRun, len(names))
	sem := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var env []string
			if raceDetector {
				// Exploration is proven by TestExplorationProof; here, under
				// -race, a short one keeps its spec in every run.
				env = append(env, exploreEnv+"=20")
			}
			runs[i] = runChildEnv(t, name, filepath.Join(dir, name), env...)
		}()
	}
	wg.Wait()

	failedBySomeone := map[string]bool{}
	var all []string
	for _, r := range runs {
		failed, warnings, restores := outcome(r.report)
		if r.name == correctServer {
			if r.err != nil || len(failed) > 0 {
				t.Errorf("the correct mock failed %v (%v):\n%s", failed, r.err, tail(r.output))
			}
			for _, s := range r.report.SpecReports {
				if s.LeafNodeType == types.NodeTypeIt {
					all = append(all, conformance.FullName(s))
				}
			}
			continue
		}
		b, _ := brokenServerNamed(r.name)
		for _, f := range failed {
			failedBySomeone[f] = true
		}
		for _, want := range b.fails {
			if !slices.ContainsFunc(failed, func(f string) bool { return strings.Contains(f, want) }) {
				t.Errorf("%s: no failed spec matches %q; failed: %q", b.name, want, failed)
			}
		}
		for _, want := range b.warns {
			if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, want) }) {
				t.Errorf("%s: no warning matches %q; warnings: %q", b.name, want, warnings)
			}
		}
		for _, want := range b.restores {
			if !slices.ContainsFunc(restores, func(w string) bool { return strings.Contains(w, want) }) {
				t.Errorf("%s: no failed restore matches %q; reported: %q", b.name, want, restores)
			}
		}
		switch {
		case len(b.fails) > 0 && r.err == nil:
			t.Errorf("%s: the child run passed", b.name)
		case len(b.fails) == 0 && r.err != nil:
			t.Errorf("%s: the child run failed %q (%v)", b.name, failed, r.err)
		}
	}
	if len(all) == 0 {
		t.Fatal("the correct run listed no specs")
	}
	for _, s := range all {
		if !failedBySomeone[s] && !slices.ContainsFunc(warningOnly, func(w string) bool { return strings.HasSuffix(s, w) }) {
			t.Errorf("no broken server makes %q fail: remove the check or add a server that proves it", s)
		}
	}
	t.Logf("%d broken servers, %d specs, each failed by at least one", len(brokenServers), len(all))
}

// proofSeeds are the exploration seeds TestExplorationProof runs every
// server with: the proof holds for each of them, not for one lucky seed.
// CONFORMANCE_PROOF_SEEDS (comma-separated) replaces them.
var proofSeeds = []string{"7", "12345", "2024"}

// TestExplorationProof runs the exploration alone (--label-filter explore),
// at the default budget of conformance.DefaultExploreSteps steps, against
// every broken server and the correct mock, once per seed of proofSeeds.
// For every seed, the exploration must fail against every server that
// breaks a rule, except the ones it cannot see (exploreBlind), and must
// pass against every server that breaks none. It logs, per server, how
// many steps each seed needed and how long it took.
func TestExplorationProof(t *testing.T) {
	if os.Getenv(brokenEnv) != "" {
		t.Skip("in a child process")
	}
	if testing.Short() {
		t.Skip("-short: skipping the exploration proof")
	}
	seeds := proofSeeds
	if raceDetector {
		// Under -race one seed: the race detector sees the same code on
		// each; the three run without it (go test ./conformance/checks,
		// and .ci/run).
		seeds = proofSeeds[:1]
	}
	if v := os.Getenv("CONFORMANCE_PROOF_SEEDS"); v != "" {
		seeds = strings.Split(v, ",")
	}
	names := []string{correctServer}
	for _, b := range brokenServers {
		names = append(names, b.name)
	}
	type job struct{ seed, name string }
	var jobs []job
	for _, seed := range seeds {
		for _, name := range names {
			jobs = append(jobs, job{seed, name})
		}
	}
	dir := t.TempDir()
	runs := make([]childRun, len(jobs))
	start := time.Now()
	sem := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			runs[i] = runChildEnv(t, j.name, filepath.Join(dir, j.seed+"-"+j.name), labelEnv+"=explore", seedEnv+"="+j.seed,
				exploreEnv+"="+strconv.Itoa(conformance.DefaultExploreSteps), exploreTimeEnv+"="+conformance.DefaultExploreTime.String())
		}()
	}
	wg.Wait()
	wall := time.Since(start)

	found := map[string][]string{} // server → per seed: steps and time
	maxSteps, slowest := 0, ""
	for i, r := range runs {
		j := jobs[i]
		failed, _, _ := outcome(r.report)
		hit := len(failed) > 0
		b, _ := brokenServerNamed(j.name)
		_, blind := exploreBlind[j.name]
		breaks := j.name != correctServer && len(b.fails) > 0
		switch {
		case breaks && !blind && !hit:
			t.Errorf("seed %s: %s: exploration alone did not find it in %d steps", j.seed, j.name, conformance.DefaultExploreSteps)
		case !breaks && hit:
			t.Errorf("seed %s: %s breaks no rule, but exploration failed: %q\n%s", j.seed, j.name, failed, tail(r.output))
		}
		for _, e := range conformance.TallyReport(r.report, true).Exploration {
			var steps int
			_, _ = fmt.Sscanf(e, "%d steps", &steps)
			took, _, _ := strings.Cut(strings.SplitN(e, " in ", 3)[2], ",")
			found[j.name] = append(found[j.name], fmt.Sprintf("seed %s: %d steps, %s", j.seed, steps, took))
			if hit && steps > maxSteps {
				maxSteps, slowest = steps, j.name+" (seed "+j.seed+")"
			}
		}
	}
	var lines []string
	for _, name := range names {
		what := "found"
		if _, blind := exploreBlind[name]; blind {
			what = "blind"
		} else if b, _ := brokenServerNamed(name); name == correctServer || len(b.fails) == 0 {
			what = "breaks no rule"
		}
		lines = append(lines, fmt.Sprintf("%s (%s): %s", name, what, strings.Join(found[name], "; ")))
	}
	t.Logf("exploration alone, %d seeds x %d servers, %d steps each at most, in %s; a rule-breaking server took at most %d steps (%s):\n  %s",
		len(seeds), len(names), conformance.DefaultExploreSteps, wall.Round(time.Second), maxSteps, slowest, strings.Join(lines, "\n  "))
}

// outcome lists the full texts of the failed specs, the warnings and the
// failed restores of a run, as the summary counts them.
func outcome(r types.Report) (failed, warnings, restores []string) {
	t := conformance.TallyReport(r, true)
	return t.Failed, t.Warnings, t.Restores
}

func tail(b []byte) []byte {
	if len(b) > 4000 {
		return b[len(b)-4000:]
	}
	return b
}
