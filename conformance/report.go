package conformance

import (
	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"

	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// RunInfo is what the reports say about the run beside its checks.
type RunInfo struct {
	Target    string // the base URL, redacted
	Contract  string // where the contract came from
	Seed      uint64 // the exploration seed, reported where the exploration ran
	Mutations bool
	Strict    bool
	Stopped   string        // why the run stopped before its checks were done; "" if it did not
	Waited    time.Duration // waited on 429 answers
	Allowance time.Duration // --max-retry-wait
}

// checkName is a check's name without Ginkgo's prefixes: its containers'
// texts after the area and its own text.
func checkName(s types.SpecReport) string {
	parts := slices.Clone(s.ContainerHierarchyTexts)
	if len(parts) > 0 {
		parts = parts[1:]
	}
	return strings.Join(append(parts, s.LeafNodeText), " ")
}

// FullName is the area and the check's name, as --list shows it.
func FullName(s types.SpecReport) string {
	return string(areaOf(s.Labels())) + ": " + checkName(s)
}

// failureOf is the failed check s as the reports show it.
func failureOf(s types.SpecReport) report.Failure {
	f := report.Failure{Title: FullName(s), Detail: s.Failure.Message, Count: 1}
	if ex, ok := lastEntry[example](s, entryExample); ok {
		// The console indents the body under the status line; a report
		// shows it on a line of its own.
		f.Want, f.Request, f.Got, f.Problems = ex.Want, ex.Request, strings.ReplaceAll(ex.Got, "\n          ", "\n"), ex.Problems
	} else {
		f.Problems = []string{exchange.FirstLine(s.Failure.Message)}
	}
	return f
}

// causeOf returns what a failure is about, as the check recorded it (the
// last cause entry), and the detail it saw; a failure without one (a
// panic, a timeout) is its own cause.
func causeOf(s types.SpecReport) (Cause, string) {
	if c, ok := lastEntry[causeEntry](s, entryCause); ok {
		return c.Cause, exchange.Printable([]byte(c.Detail))
	}
	first, _, _ := strings.Cut(s.Failure.Message, "\n")
	return Cause(s.State.String()), exchange.Printable([]byte(first))
}

// jsonReport renders r as Ginkgo's JSON report does, with every secret
// hidden in every string value (before encoding, so no key can break the
// document) and paths relative to the working directory.
func jsonReport(r types.Report, rd *exchange.Redactor) ([]byte, error) {
	r.SuitePath = ""
	b, err := json.Marshal([]types.Report{r})
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	cwd, _ := os.Getwd()
	v = exchange.MapJSON(v, func(s string) string {
		if cwd != "" && cwd != "/" {
			if rest, ok := strings.CutPrefix(s, cwd+string(filepath.Separator)); ok {
				s = rest
			}
		}
		return rd.String(s)
	})
	return json.MarshalIndent(v, "", "  ")
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
		c.State, c.Message = report.Skipped, cmp.Or(s.Failure.Message, "not selected by --label-filter")
	case s.State.Is(types.SpecStateFailed):
		c.State, c.Message, c.Kind, c.Detail = report.Failed, exchange.FirstLine(s.Failure.Message), "contract", s.Failure.Message
	default: // panicked, interrupted, aborted, timed out
		c.State, c.Message, c.Kind, c.Detail = report.Errored, s.State.String()+": "+exchange.FirstLine(s.Failure.Message), s.State.String(), s.Failure.Message
	}
	return c
}

// cannotRunJSON is the JSON report of a run that could not be made.
func cannotRunJSON(reason string, rd *exchange.Redactor) []byte {
	b, _ := jsonReport(types.Report{SuiteDescription: SuiteName, SpecialSuiteFailureReasons: []string{"the run could not be made: " + reason},
		StartTime: time.Now(), EndTime: time.Now()}, rd)
	return b
}
