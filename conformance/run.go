package conformance

import (
	"github.com/petstore/inventory-kit/spec/exchange"

	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
)

// SuiteName is the description the suite runs under, in reports.
const SuiteName = "Pet Store Inventory conformance"

// RunOptions says how to run the checks.
type RunOptions struct {
	// T receives Ginkgo's failure signal; nil: a stand-in (a binary).
	T ginkgo.GinkgoTestingT
	// LabelFilter selects checks, as Ginkgo's --label-filter.
	LabelFilter string
	// Verbose shows every check as it runs.
	Verbose bool
	// DryRun lists the checks without running them (--list).
	DryRun bool
	// Stdout receives Ginkgo's progress and the summary. It should be a
	// RedactingWriter; nil: os.Stdout through the target's redactor.
	Stdout io.Writer
	// JUnitReport and JSONReport are report paths; empty: none.
	JUnitReport, JSONReport string
	// Info is what the reports say about the run.
	Info RunInfo
}

// An Outcome is what a run found.
type Outcome struct {
	Report types.Report
	Tally  Tally
	Passed bool
	// Stopped says why the run stopped before its checks were done (the
	// target gone, --max-run-time, an interrupt); "" if it did not.
	Stopped string
}

// standIn is the testing.T stand-in RunSpecs reports to in a binary.
type standIn struct{ failed bool }

// Fail records that a check failed.
func (s *standIn) Fail() { s.failed = true }

// Run registers the checks with register and runs them against t with
// Ginkgo, in a stable order (Ginkgo's seed is fixed), then writes the
// summary and the reports. It can run once per process, as Ginkgo can.
func Run(t *Target, register func(*Target), o RunOptions) (Outcome, error) {
	if o.Stdout == nil {
		o.Stdout = t.secrets.Writer(os.Stdout)
	}
	if o.T == nil {
		o.T = &standIn{}
	}
	// Ginkgo writes its progress to formatter.ColorableStdOut; send it
	// through the caller's (redacting) writer, without the working
	// directory Ginkgo names the suite by.
	formatter.ColorableStdOut = hideCwd(o.Stdout)
	suite, reporter := ginkgo.GinkgoConfiguration()
	if o.LabelFilter != "" {
		suite.LabelFilter = o.LabelFilter
	}
	// The requests sent ahead are those of the checks the filter selects
	// (Ginkgo's own -ginkgo.label-filter included): a check left out, such
	// as one that puts the key in a URL, sends nothing.
	if suite.LabelFilter != "" {
		f, err := types.ParseLabelFilter(suite.LabelFilter)
		if err != nil {
			return Outcome{}, err
		}
		t.ahead.filter = f
	}
	// Once the run has stopped (the target gone, --max-run-time), no
	// check starts: each is aborted, which the summary counts apart from
	// failures.
	ginkgo.BeforeEach(func() {
		if why, _ := t.Stopped(); why != "" {
			ginkgo.AbortSuite("the run stopped: " + why)
		}
	})
	// The checks register what they send ahead while Ginkgo builds its
	// tree, in RunSpecs; the suite's first node sends it.
	ginkgo.BeforeSuite(func() { t.sendAhead(t.stop.ctx) })
	register(t)
	var captured types.Report
	ginkgo.ReportAfterSuite("conformance report", func(r ginkgo.Report) { captured = r })

	suite.RandomSeed = 1 // a stable order; exploration has its own --seed
	suite.RandomizeAllSpecs = false
	suite.DryRun = o.DryRun
	reporter.Verbose = reporter.Verbose || o.Verbose
	if _, isTest := o.T.(*standIn); isTest {
		reporter.NoColor = true
	}
	passed := ginkgo.RunSpecs(o.T, SuiteName, suite, reporter)
	out := Outcome{Report: captured, Passed: passed}
	out.Tally = TallyReport(captured, t.cfg.AllowMutations)
	out.Stopped, _ = t.Stopped()
	if o.DryRun {
		return out, nil
	}
	var summary bytes.Buffer
	facts := runFacts{Stopped: out.Stopped, Waited: t.Waited(), Allowance: t.cfg.MaxRetryWait}
	summarize(&summary, out.Tally, facts)
	if len(out.Tally.Exploration) > 0 { // the exploration ran: its seed replays it
		fmt.Fprintf(&summary, "Exploration seed: %d (replay with --seed %d)\n", t.cfg.Explore.Seed, t.cfg.Explore.Seed)
	}
	_, _ = o.Stdout.Write(summary.Bytes())
	if f, ok := o.Stdout.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
	o.Info.Summary = summary.String()
	if len(out.Tally.Exploration) > 0 {
		o.Info.Seed = t.cfg.Explore.Seed
	}
	o.Info.Mutations = t.cfg.AllowMutations
	o.Info.Strict = t.cfg.Strict
	o.Info.runFacts = facts
	if out.Stopped != "" {
		captured.SpecialSuiteFailureReasons = append(captured.SpecialSuiteFailureReasons, "the run stopped before its checks were done: "+out.Stopped)
	}
	var err error
	if o.JUnitReport != "" {
		err = WriteReport(o.JUnitReport, junitReport(captured, o.Info, t.Redactor()))
	}
	if o.JSONReport != "" && err == nil {
		var b []byte
		if b, err = jsonReport(captured, t.Redactor()); err == nil {
			err = WriteReport(o.JSONReport, b)
		}
	}
	return out, err
}

// WriteReport writes a report file, creating its directory. The report's
// values have the key replaced already (junitReport, jsonReport).
func WriteReport(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// WriteCannotRun writes the reports of a run that could not be made,
// saying why. Called as soon as the report paths are known (so no stale
// report survives) and again with the reason when the run stops short.
func WriteCannotRun(junitPath, jsonPath, reason string, rd *exchange.Redactor) error {
	if junitPath != "" {
		if err := WriteReport(junitPath, cannotRunJUnit(reason, rd)); err != nil {
			return fmt.Errorf("--junit-report: %v", err)
		}
	}
	if jsonPath != "" {
		if err := WriteReport(jsonPath, cannotRunJSON(reason, rd)); err != nil {
			return fmt.Errorf("--json-report: %v", err)
		}
	}
	return nil
}

// hideCwd returns w writing with the working directory replaced by ".":
// Ginkgo names the suite by it ("Running Suite: ... - /home/me/src"), and
// a report of a run says nothing of the machine it ran on.
func hideCwd(w io.Writer) io.Writer {
	cwd, err := os.Getwd()
	if err != nil || cwd == "/" {
		return w
	}
	return cwdHider{w: w, cwd: []byte(cwd)}
}

type cwdHider struct {
	w   io.Writer
	cwd []byte
}

func (h cwdHider) Write(p []byte) (int, error) {
	if !bytes.Contains(p, h.cwd) {
		return h.w.Write(p)
	}
	if _, err := h.w.Write(bytes.ReplaceAll(p, h.cwd, []byte("."))); err != nil {
		return 0, err
	}
	return len(p), nil
}
