package conformance

import (
	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"

	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// RunInfo is what the reports say about the run beside its checks.
type RunInfo struct {
	Target    string // the base URL, redacted
	Contract  string // where the contract came from
	Seed      uint64 // the exploration seed; 0 where it did not run
	Mutations bool
	Strict    bool
	runFacts
}

// suiteRun is the part of a suite run's report.Run that JUnit reads: one
// case per check, its suite the area, its class "conformance.<area>", its
// name without Ginkgo's prefixes, warnings and observations as each
// check's output, and the run's facts and summary as properties (the
// last testsuite). The key is hidden in every value when it is rendered.
func suiteRun(r types.Report, info RunInfo, t Tally) report.Run {
	run := report.Run{Name: SuiteName, Start: r.StartTime, Duration: r.RunTime, Properties: info.properties(t)}
	for _, a := range areas {
		cs := t.cases[a]
		slices.SortStableFunc(cs, func(x, y report.Case) int { return strings.Compare(x.Name, y.Name) })
		run.Cases = append(run.Cases, cs...)
	}
	if info.Stopped != "" {
		// A run that stopped short is no green run, whatever it found.
		run.Cases = append(run.Cases, report.Case{Suite: "run", Class: "conformance.run", Name: "the run finished", State: report.Errored,
			Message: "the run stopped before its checks were done: " + info.Stopped, Kind: "stopped"})
	}
	return run
}

// caseOf is check s of area a as JUnit shows it.
func caseOf(s types.SpecReport, a Area) report.Case {
	c := report.Case{Suite: string(a), Class: "conformance." + string(a), Name: checkName(s), Duration: s.RunTime}
	var out []string
	for _, e := range s.ReportEntries {
		switch e.Name {
		case entryWarning, entryObservation, entryRestoreFailed, EntryExploration, EntryExploreThin:
			out = append(out, e.Name+": "+e.StringRepresentation())
		}
	}
	c.Output = strings.Join(out, "\n")
	switch {
	case s.State == types.SpecStatePassed:
	case s.State == types.SpecStateSkipped || s.State == types.SpecStatePending:
		c.State, c.Message = report.Skipped, s.Failure.Message
		if c.Message == "" {
			c.Message = "not selected by --label-filter"
		}
	case s.State.Is(types.SpecStateFailed):
		c.State, c.Message, c.Kind, c.Detail = report.Failed, exchange.FirstLine(s.Failure.Message), "contract", s.Failure.Message
	default: // panicked, interrupted, aborted, timed out
		c.State, c.Message, c.Kind, c.Detail = report.Errored, s.State.String()+": "+exchange.FirstLine(s.Failure.Message), s.State.String(), s.Failure.Message
	}
	return c
}

func (info RunInfo) properties(t Tally) []report.Property {
	ps := []report.Property{
		{Name: "target", Value: info.Target},
		{Name: "contract", Value: info.Contract},
	}
	if info.Seed != 0 { // 0: the exploration did not run
		ps = append(ps, report.Property{Name: "seed", Value: fmt.Sprint(info.Seed)})
	}
	ps = append(ps, []report.Property{
		{Name: "mutations", Value: fmt.Sprint(info.Mutations)},
		{Name: "strict", Value: fmt.Sprint(info.Strict)},
		{Name: "passed", Value: fmt.Sprint(t.Passed)},
		{Name: "failed", Value: fmt.Sprint(len(t.Failed))},
		{Name: "skipped", Value: fmt.Sprint(t.Skipped)},
		{Name: "interrupted", Value: fmt.Sprint(len(t.Interrupted))},
	}...)
	if info.Stopped != "" {
		ps = append(ps, report.Property{Name: "stopped", Value: info.Stopped})
	}
	if info.Waited > 0 {
		ps = append(ps, report.Property{Name: "waited-on-429", Value: info.Waited.Round(time.Millisecond).String()})
	}
	for _, why := range t.NotJudgedOrder {
		ps = append(ps, report.Property{Name: "not-judged", Value: fmt.Sprintf("%s (%d checks)", why, len(t.NotJudged[why]))})
	}
	for _, w := range dedupe(t.Warnings) {
		ps = append(ps, report.Property{Name: "warning", Value: w})
	}
	for _, c := range t.Causes {
		ps = append(ps, report.Property{Name: "cause", Value: fmt.Sprintf("%s: %s (broke %d)", c, c.Text(), len(t.ByCause[c]))})
	}
	return ps
}

// cannotRunJSON is the JSON report of a run that could not be made.
func cannotRunJSON(reason string, rd *exchange.Redactor) []byte {
	b, _ := jsonReport(types.Report{
		SuiteDescription: SuiteName,
		SuiteSucceeded:   false,
		SpecialSuiteFailureReasons: []string{
			"the run could not be made: " + reason,
		},
		StartTime: time.Now(),
		EndTime:   time.Now(),
	}, rd)
	return b
}
