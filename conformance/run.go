package conformance

import (
	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"

	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
)

// SuiteName is the description the suite runs under, in reports.
const SuiteName = "Pet Store Inventory conformance"

// RunOptions says how to run the checks.
type RunOptions struct {
	T           ginkgo.GinkgoTestingT // receives Ginkgo's failure signal; nil: a stand-in (a binary)
	LabelFilter string                // selects checks, as Ginkgo's --label-filter
	Verbose     bool                  // shows every check as it runs
	DryRun      bool                  // lists the checks without running them (--list)
	Stdout      io.Writer             // Ginkgo's progress and the summary; nil: os.Stdout through the target's redactor

	// The reports' paths; empty: none. StepSummary is appended to
	// ($GITHUB_STEP_SUMMARY).
	JUnitReport, JSONReport, MarkdownReport, HTMLReport, StepSummary string

	Annotations io.Writer // GitHub workflow commands of the failures; nil: none
	MinCoverage float64   // the coverage of the documented responses the run must reach, in percent; 0: none
	Info        RunInfo   // what the reports say about the run
}

// An Outcome is what a run found.
type Outcome struct {
	Report  types.Report
	Run     report.Run // what every report and the console's summary are written from
	Passed  bool       // every check passed, no record was left changed, and the coverage reaches MinCoverage
	Stopped string     // why the run stopped before its checks were done; "" if it did not
}

// standIn is the testing.T stand-in RunSpecs reports to in a binary.
type standIn struct{ failed bool }

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
	// A check the filter leaves out (Ginkgo's own -ginkgo.label-filter
	// included) sends nothing ahead.
	if suite.LabelFilter != "" {
		f, err := types.ParseLabelFilter(suite.LabelFilter)
		if err != nil {
			return Outcome{}, err
		}
		t.ahead.filter = f
	}
	// Once the run has stopped, no check starts: each is aborted, which
	// the summary counts apart from failures.
	ginkgo.BeforeEach(func() {
		if why, _ := t.stop.reason(); why != "" {
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
	// --verbose is Ginkgo's -vv: every check as it runs, and each
	// failure in full, additional ones too.
	reporter.VeryVerbose = reporter.VeryVerbose || o.Verbose
	if _, isTest := o.T.(*standIn); isTest {
		reporter.NoColor = true
	}
	passed := ginkgo.RunSpecs(o.T, SuiteName, suite, reporter)
	out := Outcome{Report: captured, Passed: passed}
	out.Stopped, _ = t.stop.reason()
	if o.DryRun {
		return out, nil
	}
	o.Info.Seed = t.cfg.Explore.Seed
	o.Info.Mutations = t.cfg.AllowMutations
	o.Info.Strict = t.cfg.Strict
	o.Info.Stopped, o.Info.Waited, o.Info.Allowance = out.Stopped, t.waited(), t.cfg.MaxRetryWait
	left := t.Settle()
	if out.Stopped != "" {
		captured.SpecialSuiteFailureReasons = append(captured.SpecialSuiteFailureReasons, "the run stopped before its checks were done: "+out.Stopped)
	}
	out.Run = t.results(captured, o.Info, o, left)
	out.Run.Summary = out.Run.Text()
	_, _ = io.WriteString(o.Stdout, out.Run.Summary)
	if f, ok := o.Stdout.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
	out.Passed = passed && out.Run.Passed()
	report.WriteLeftChanged(t.cfg.Stderr, left)
	outputs := report.Outputs{JUnit: o.JUnitReport, Markdown: o.MarkdownReport, HTML: o.HTMLReport, StepSummary: o.StepSummary, Annotations: o.Annotations}
	err := outputs.Write(out.Run, t.secrets.Redactor())
	if o.JSONReport != "" {
		if len(left) > 0 {
			// Ginkgo's report has no place for it but the suite's own
			// failure reasons: one a record, as every report lists them.
			captured.SuiteSucceeded = false
			for _, c := range left {
				captured.SpecialSuiteFailureReasons = append(captured.SpecialSuiteFailureReasons, report.LeftChangedTitle+": "+c.String())
			}
		}
		b, jerr := jsonReport(captured, t.secrets.Redactor())
		if jerr == nil {
			jerr = report.WriteFile(o.JSONReport, b)
		}
		if jerr != nil {
			err = errors.Join(err, fmt.Errorf("--json-report: %w", jerr))
		}
	}
	return out, err
}

// WriteCannotRun writes the reports of a run that could not be made,
// saying why, to out and to the JSON report at jsonPath: as soon as the
// report paths are known (with out.Files(), so that no stale report
// survives) and again when the run stops short.
func WriteCannotRun(out report.Outputs, jsonPath, reason string, rd *exchange.Redactor) error {
	err := out.Write(report.CannotRun(SuiteName, "conformance.run", reason, time.Now()), rd)
	if jsonPath != "" {
		if jerr := report.WriteFile(jsonPath, cannotRunJSON(reason, rd)); jerr != nil {
			err = errors.Join(err, fmt.Errorf("--json-report: %v", jerr))
		}
	}
	return err
}

// hideCwd returns w writing without the directory Ginkgo names the suite
// by ("Running Suite: NAME - /home/me/src") and with the working
// directory read as ".": a report says nothing of the machine it ran on.
func hideCwd(w io.Writer) io.Writer {
	cwd, err := os.Getwd()
	if err != nil || cwd == "/" {
		cwd = ""
	}
	return cwdHider{w: w, cwd: []byte(cwd)}
}

type cwdHider struct {
	w   io.Writer
	cwd []byte // "": none to hide
}

// suitePath is what Ginkgo writes after the suite's name in its banner.
var suitePath = regexp.MustCompile(regexp.QuoteMeta(SuiteName) + ` - [^\n\x1b]*`)

// ginkgoVV is the command Ginkgo names to show a check's additional failures.
var ginkgoVV = []byte("ginkgo -vv")

func (h cwdHider) Write(p []byte) (int, error) {
	out := p
	if bytes.Contains(out, []byte(SuiteName+" - ")) {
		out = suitePath.ReplaceAllLiteral(out, []byte(SuiteName))
	}
	if bytes.Contains(out, ginkgoVV) {
		// Ginkgo's advice names its own command, which a binary run
		// has not; --verbose shows what -vv would.
		out = bytes.ReplaceAll(out, ginkgoVV, []byte("inventory-conformance with --verbose"))
	}
	if len(h.cwd) > 0 && bytes.Contains(out, h.cwd) {
		out = bytes.ReplaceAll(out, h.cwd, []byte("."))
	}
	if _, err := h.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
