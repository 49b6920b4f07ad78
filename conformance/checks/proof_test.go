package checks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http/httptest"
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
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/report"
)

// correctServer names the unbroken mock among the children.
const correctServer = "correct"

// exploreBlind lists the broken servers exploration alone cannot find,
// and why. Every other server that breaks a rule must make the
// exploration check fail; every server that breaks none must not.
var exploreBlind = map[string]string{
	"query-key-accepted": "exploration never puts the key in a URL (the key-in-url checks do, and production runs leave them out)",
	"huge-body-crashes":  "exploration sends no body past 1 MiB; the 4 MiB check finds it",
	"list-wrapped":       "the list breaks the contract, so the exploration has no list to start from (not judged); the list check fails",
	"list-random-record": "the target does not hold a record still, so the exploration is not judged; the stability check fails",
}

// proofSteps is the exploration's step budget in TestExplorationProof:
// enough for every server it must find with each seed, and a bound on
// the runs against the servers it must pass (which spend it all).
const proofSteps = 1000

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
		if b.exactly {
			for _, f := range failed {
				if !slices.ContainsFunc(b.fails, func(want string) bool { return strings.Contains(f, want) }) {
					t.Errorf("%s: %q failed too; one defect, one failure: want only %q\n%s", b.name, f, b.fails, tail(r.output))
				}
			}
			if restores := entries(conformance.RunOf(r.report, conformance.RunInfo{}), "restore failed"); len(restores) > 0 {
				t.Errorf("%s: %d failed restores reported; want none: %q", b.name, len(restores), restores)
			}
		}
		for _, want := range b.problems {
			if !slices.ContainsFunc(r.report.SpecReports, func(s types.SpecReport) bool { return strings.Contains(s.Failure.Message, want) }) {
				t.Errorf("%s: no failure shows %q\n%s", b.name, want, tail(r.output))
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
// with proofSteps steps at most and the default workers, against every
// broken server, every deep one and the correct mock, once per seed of
// proofSeeds. For every seed, the exploration must fail against every
// server that breaks a rule, except the ones it cannot see
// (exploreBlind), naming the cause a deep server's bug is, and must pass
// against every server that breaks none. It logs, per server, how many
// steps each seed needed and how long it took. Then it runs the
// exploration in this process against each deep server, with deepRuns
// seeds at the default budget, and requires every run to find it.
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
	// The steps are the budget that counts; the time only bounds a slow
	// machine. The race detector slows every step several times (seen:
	// 151 of 1000 steps in 10 s, with other packages testing beside it),
	// so under -race the time is three times the default.
	exploreTime := conformance.DefaultExploreTime
	if raceDetector {
		exploreTime *= 3
	}
	if v := os.Getenv("CONFORMANCE_PROOF_SEEDS"); v != "" {
		seeds = strings.Split(v, ",")
	}
	names := []string{correctServer}
	for _, b := range append(slices.Clone(brokenServers), deepServers...) {
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
				exploreEnv+"="+strconv.Itoa(proofSteps), exploreTimeEnv+"="+exploreTime.String())
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
			t.Errorf("seed %s: %s: exploration alone did not find it in %d steps", j.seed, j.name, proofSteps)
		case !breaks && hit:
			t.Errorf("seed %s: %s breaks no rule, but exploration failed: %q\n%s", j.seed, j.name, failed, tail(r.output))
		case hit && b.cause != "":
			if names := failedBy(conformance.RunOf(r.report, conformance.RunInfo{})); len(names[string(b.cause)]) == 0 {
				t.Errorf("seed %s: %s: the exploration named %v; want %s\n%s", j.seed, j.name, slices.Sorted(maps.Keys(names)), b.cause, tail(r.output))
			}
		}
		for _, e := range entries(conformance.RunOf(r.report, conformance.RunInfo{}), conformance.EntryExploration) {
			var steps int
			_, _ = fmt.Sscanf(e, "%d steps", &steps)
			took, _, _ := strings.Cut(strings.SplitN(e, " in ", 3)[2], ",")
			if _, after, ok := strings.Cut(e, "found after "); ok {
				took, _, _ = strings.Cut(after, ":")
			}
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
		len(seeds), len(names), proofSteps, wall.Round(time.Second), maxSteps, slowest, strings.Join(lines, "\n  "))
	t.Run("deep", testDeepBugs)
}

// deepRuns is how many seeds TestExplorationProof's deep part runs the
// exploration with against each deep server; CONFORMANCE_DEEP_RUNS
// replaces it.
const deepRuns = 20

// testDeepBugs runs the exploration in this process, at the default
// budget (time, workers) without shrinking, against each deep server with
// deepRuns seeds (2 under -race), and requires every run to find the bug
// and name its cause. It logs how long each took to find.
func testDeepBugs(t *testing.T) {
	runs := deepRuns
	if raceDetector {
		runs = 2
	}
	if v := os.Getenv("CONFORMANCE_DEEP_RUNS"); v != "" {
		runs, _ = strconv.Atoi(v)
	}
	for _, b := range deepServers {
		t.Run(b.name, func(t *testing.T) {
			var took []time.Duration
			var steps []int
			for seed := 1; seed <= runs; seed++ {
				srv := httptest.NewServer(b.wrap(newMock(t)))
				// The deep servers' reads never lag their writes: a short
				// restore deadline bounds the wait that tells a stale read
				// from a lost write (2 s by default, per finding), which
				// would otherwise be most of this part's time.
				tg, err := conformance.Prepare(context.Background(), conformance.Config{
					BaseURL: srv.URL + "/v1", APIKey: testKey, AllowMutations: true, Stderr: io.Discard,
					RestoreDeadline: 250 * time.Millisecond,
					Explore:         conformance.ExploreConfig{Seed: uint64(seed), ShrinkTime: -1},
				})
				if err != nil {
					t.Fatal(err)
				}
				res := tg.Explore(context.Background())
				tg.Close()
				srv.Close()
				if res.Failure == nil {
					t.Errorf("seed %d: not found: %s", seed, res.Summary())
					continue
				}
				if res.Failure.Cause != b.cause {
					t.Errorf("seed %d: found %s; want %s:\n%s", seed, res.Failure.Cause, b.cause, res.Failure)
				}
				took, steps = append(took, res.Found), append(steps, res.Steps)
			}
			slices.Sort(took)
			slices.Sort(steps)
			if len(took) > 0 {
				t.Logf("%s: found in %d of %d runs; steps %d to %d (median %d); %s to %s (median %s)", b.name, len(took), runs,
					steps[0], steps[len(steps)-1], steps[len(steps)/2], took[0].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), took[len(took)/2].Round(time.Millisecond))
			}
		})
	}
}

// outcome lists the full names of the failed checks, the warnings and the
// failed restores of a run, as its Run holds them.
func outcome(r types.Report) (failed, warnings, restores []string) {
	run := conformance.RunOf(r, conformance.RunInfo{})
	for _, c := range run.Causes {
		for _, f := range c.Failures {
			failed = append(failed, f.Title)
		}
	}
	for _, w := range run.Warnings {
		for _, f := range w.Failures {
			warnings = append(warnings, f.Problems...)
		}
	}
	return failed, warnings, entries(run, "restore failed")
}

// failedBy lists the checks each cause of run broke, by cause.
func failedBy(run report.Run) map[string][]string {
	by := map[string][]string{}
	for _, c := range run.Causes {
		for _, f := range c.Failures {
			by[c.Name] = append(by[c.Name], f.Title)
		}
	}
	return by
}

// entries lists what the checks of run recorded as entries named name,
// as their cases' output shows them.
func entries(run report.Run, name string) []string {
	var out []string
	for _, c := range run.Cases {
		for _, l := range strings.Split(c.Output, "\n") {
			if v, ok := strings.CutPrefix(l, name+": "); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

func tail(b []byte) []byte {
	if len(b) > 4000 {
		return b[len(b)-4000:]
	}
	return b
}

// TestRemoteRuns measures whole runs, every check and the exploration at
// the binary's defaults (time-bounded, 8 workers), against a target far
// away: each request is delayed by CONFORMANCE_REMOTE_LATENCY (30ms if
// unset). The correct mock must pass within 20 s, and the server with the
// "rejected body after a write" bug must fail within 60 s, the exploration
// naming it, in each of CONFORMANCE_REMOTE_RUNS runs, one at a time. It is
// a measurement, skipped unless CONFORMANCE_REMOTE_RUNS is set:
//
//	CONFORMANCE_REMOTE_RUNS=5 go test -run '^TestRemoteRuns$' -v ./conformance/checks
func TestRemoteRuns(t *testing.T) {
	if os.Getenv(brokenEnv) != "" {
		t.Skip("in a child process")
	}
	runs, _ := strconv.Atoi(os.Getenv("CONFORMANCE_REMOTE_RUNS"))
	if runs <= 0 {
		t.Skip("a measurement: set CONFORMANCE_REMOTE_RUNS to run it")
	}
	latency := "30ms"
	if v := os.Getenv("CONFORMANCE_REMOTE_LATENCY"); v != "" {
		latency = v
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		pass bool
	}{
		{correctServer, true},
		{"rejected-after-write-corrupts", false},
	} {
		var took []string
		for i := 1; i <= runs; i++ {
			start := time.Now()
			r := runChildEnv(t, tt.name, filepath.Join(dir, fmt.Sprintf("%s-%d", tt.name, i)), latencyEnv+"="+latency,
				exploreEnv+"=none", exploreTimeEnv+"=default", seedEnv+"="+strconv.Itoa(1000+i))
			d := time.Since(start)
			run := conformance.RunOf(r.report, conformance.RunInfo{})
			failed, _, _ := outcome(r.report)
			explored := "exploration: " + strings.Join(entries(run, conformance.EntryExploration), "; ")
			switch {
			case tt.pass && (r.err != nil || len(failed) > 0):
				t.Errorf("%s run %d failed %q\n%s", tt.name, i, failed, tail(r.output))
			case !tt.pass && r.err == nil:
				t.Errorf("%s run %d passed; %s", tt.name, i, explored)
			case !tt.pass && !slices.Contains(failedBy(run)[string(spec.RuleRejectedChanged)], "explore: random sequences of calls keep the model: read after write, no other record changed, rejected writes change nothing, documented statuses and bodies only"):
				t.Errorf("%s run %d: the exploration did not name %s; causes %v; %s", tt.name, i, spec.RuleRejectedChanged, slices.Sorted(maps.Keys(failedBy(run))), explored)
			}
			took = append(took, fmt.Sprintf("%s (%d failed; %s)", d.Round(100*time.Millisecond), len(failed), explored))
		}
		t.Logf("%s, %s away, %d runs:\n  %s", tt.name, latency, runs, strings.Join(took, "\n  "))
	}
}
