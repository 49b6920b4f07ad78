package conformance

import (
	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"

	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// A Tally is what a run's report says, read in one pass over Ginkgo's
// report: the counts, the failed checks grouped by cause, the entries
// the suite added, and the parts of report.Run made of them (results).
type Tally struct {
	Passed, Skipped, SkippedMutating int
	Failed                           []string           // full names of the failed checks, in run order
	Interrupted                      []string           // checks an interrupt stopped: not contract failures
	Causes                           []Cause            // distinct causes, most checks first
	ByCause                          map[Cause][]string // cause → the checks it broke
	Details                          map[Cause][]string // cause → what the checks saw, each once
	Warnings, Observations, Restores []string
	Exploration                      []string
	ExploreThin                      []string // the exploration made too few steps to mean much (an observation)
	// NotJudged holds the checks skipped because the target gave them
	// nothing to judge (a list that breaks the contract, records that do
	// not hold still), by reason.
	NotJudged map[string][]string
	// NotJudgedOrder lists NotJudged's reasons in the order first met.
	NotJudgedOrder []string

	cases    map[Area][]report.Case      // one per check, by area
	failures map[Cause][]report.Failure  // the failed checks with their exchanges
	warned   map[string][]report.Failure // RFC → the checks that warned, and what they saw
	rfcs     []string                    // warned's keys, in the order first met
	leftOut  int                         // checks skipped with no message: left out by a label filter
}

// runFacts are what the summary says of a run beside its checks.
type runFacts struct {
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

// TallyReport counts the checks of r and gathers their entries.
// mutations says whether the run allowed writes: a mutating check skipped
// without them is counted apart.
func TallyReport(r types.Report, mutations bool) Tally {
	t := Tally{ByCause: map[Cause][]string{}, Details: map[Cause][]string{}, NotJudged: map[string][]string{},
		cases: map[Area][]report.Case{}, failures: map[Cause][]report.Failure{}, warned: map[string][]report.Failure{}}
	for _, s := range r.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt {
			a := areaOf(s.Labels())
			t.cases[a] = append(t.cases[a], caseOf(s, a))
			t.warnings(s)
			switch {
			case s.State == types.SpecStatePassed:
				t.Passed++
			case s.State == types.SpecStateSkipped || s.State == types.SpecStatePending:
				t.Skipped++
				if s.State == types.SpecStateSkipped && s.Failure.Message == "" {
					t.leftOut++
				}
				// Skipped for want of --allow-mutations, not left out by a
				// label filter (which leaves no message).
				if Mutating.In(s.Labels()) && !mutations && s.Failure.Message != "" {
					t.SkippedMutating++
				}
				if why, ok := strings.CutPrefix(s.Failure.Message, NotJudged); ok {
					if _, seen := t.NotJudged[why]; !seen {
						t.NotJudgedOrder = append(t.NotJudgedOrder, why)
					}
					t.NotJudged[why] = append(t.NotJudged[why], FullName(s))
				}
			case s.State.Is(types.SpecStateInterrupted | types.SpecStateAborted):
				t.Interrupted = append(t.Interrupted, FullName(s))
			case s.State.Is(types.SpecStateFailureStates):
				name := FullName(s)
				t.Failed = append(t.Failed, name)
				c, detail := causeOf(s)
				if _, ok := t.ByCause[c]; !ok {
					t.Causes = append(t.Causes, c)
				}
				t.ByCause[c] = append(t.ByCause[c], name)
				if !slices.Contains(t.Details[c], detail) {
					t.Details[c] = append(t.Details[c], detail)
				}
				t.failures[c] = append(t.failures[c], failureOf(s))
			}
		}
		for _, e := range s.ReportEntries {
			switch e.Name {
			case entryWarning:
				t.Warnings = append(t.Warnings, e.StringRepresentation())
			case entryObservation:
				t.Observations = append(t.Observations, e.StringRepresentation())
			case entryRestoreFailed:
				t.Restores = append(t.Restores, e.StringRepresentation())
			case EntryExploration:
				t.Exploration = append(t.Exploration, e.StringRepresentation())
			case EntryExploreThin:
				t.ExploreThin = append(t.ExploreThin, e.StringRepresentation())
			}
		}
	}
	// Most checks first; restore-failed last, below the cause that made
	// the restore fail (a check whose restore failed keeps its own cause).
	sort.SliceStable(t.Causes, func(i, j int) bool {
		ri, rj := t.Causes[i] == CauseRestoreFailed, t.Causes[j] == CauseRestoreFailed
		if ri != rj {
			return rj
		}
		return len(t.ByCause[t.Causes[i]]) > len(t.ByCause[t.Causes[j]])
	})
	return t
}

// warnings gathers the warnings check s recorded, by RFC.
func (t *Tally) warnings(s types.SpecReport) {
	for _, e := range s.ReportEntries {
		if e.Name != entryWarning {
			continue
		}
		w, ok := entryValue[warning](e)
		if !ok || w.RFC == "" {
			w = warning{Text: e.StringRepresentation(), RFC: "warning"}
		}
		if _, ok := t.warned[w.RFC]; !ok {
			t.rfcs = append(t.rfcs, w.RFC)
		}
		t.warned[w.RFC] = append(t.warned[w.RFC], report.Failure{Title: FullName(s), Problems: []string{w.Text}, Count: 1})
	}
}

// failureOf is the failed check s as the reports show it: with the
// exchange it recorded, else the first line of its message.
func failureOf(s types.SpecReport) report.Failure {
	f := report.Failure{Title: FullName(s), Detail: s.Failure.Message, Count: 1}
	if ex, ok := exampleOf(s); ok {
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
	for i := len(s.ReportEntries) - 1; i >= 0; i-- {
		if e := s.ReportEntries[i]; e.Name == entryCause {
			c, _ := entryValue[causeEntry](e)
			return c.Cause, exchange.Printable([]byte(c.Detail))
		}
	}
	first, _, _ := strings.Cut(s.Failure.Message, "\n")
	return Cause(s.State.String()), exchange.Printable([]byte(first))
}

// summarize writes the end-of-run summary: counts, failures grouped by
// cause, skipped mutating checks, warnings, observations, exploration and
// the records left changed (Settle).
func summarize(w io.Writer, t Tally, f runFacts, left []report.Changed) {
	fmt.Fprintf(w, "\n== Conformance summary: %d passed, %d failed, %d skipped ==\n", t.Passed, len(t.Failed), t.Skipped)
	if f.Stopped != "" {
		fmt.Fprintf(w, "The run STOPPED before its checks were done: %s. The failures below are every one found until then.\n", f.Stopped)
	}
	if len(t.Causes) > 0 {
		fmt.Fprintf(w, "Failures by cause (%s):\n", report.Plural(len(t.Causes), "cause"))
		for _, c := range t.Causes {
			checks := t.ByCause[c]
			fmt.Fprintf(w, "  ✗ %s: %s\n", c, c.Text())
			details := t.Details[c]
			for i, d := range details {
				if i == maxDetails {
					fmt.Fprintf(w, "      seen: ... (%d more)\n", len(details)-maxDetails)
					break
				}
				fmt.Fprintf(w, "      seen: %s\n", d)
			}
			fmt.Fprintf(w, "    broke %s:\n", report.Plural(len(checks), "check"))
			for _, n := range checks {
				fmt.Fprintf(w, "      - %s\n", n)
			}
		}
	}
	if len(t.Interrupted) > 0 {
		fmt.Fprintf(w, "Interrupted or not run since the run stopped (not counted as failures): %s\n", report.Plural(len(t.Interrupted), "check"))
	}
	if len(t.NotJudgedOrder) > 0 {
		fmt.Fprintf(w, "Not judged (the target gave these checks nothing to judge; the failure above says why):\n")
		for _, why := range t.NotJudgedOrder {
			n := len(t.NotJudged[why])
			fmt.Fprintf(w, "  - %s: %s\n", report.Plural(n, "check"), why)
		}
	}
	if f.Waited > 0 {
		fmt.Fprintf(w, "Waited %s in all on 429 answers (Retry-After), of the %s --max-retry-wait allows.\n", f.Waited.Round(time.Millisecond), f.Allowance)
	}
	if t.SkippedMutating > 0 {
		fmt.Fprintf(w, "%d mutating checks were skipped (no --allow-mutations). The run sent reads, and writes a conforming target refuses, each carrying the record's own values or no body at all. Pass --allow-mutations to run them.\n", t.SkippedMutating)
	}
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(w, "%s\n", title)
		for _, l := range dedupe(lines) {
			fmt.Fprintf(w, "  - %s\n", l)
		}
	}
	section("Warnings (what HTTP's RFCs require and the contract does not; --strict fails them):", t.Warnings)
	obs := slices.Clone(t.Observations)
	sort.Strings(obs)
	section("Observations (the contract is silent; what the target chose):", obs)
	section("Exploration:", t.Exploration)
	section("!!! Explored too little (an observation; it fails nothing):", t.ExploreThin)
	WriteLeftChanged(w, left)
}

// maxDetails is how many different details the summary shows per cause.
const maxDetails = 3

// dedupe drops repeated lines, keeping the first, and counts the repeats.
func dedupe(lines []string) []string {
	n := map[string]int{}
	var out []string
	for _, l := range lines {
		if n[l] == 0 {
			out = append(out, l)
		}
		n[l]++
	}
	for i, l := range out {
		if n[l] > 1 {
			out[i] = fmt.Sprintf("%s (%d times)", l, n[l])
		}
	}
	return out
}

// jsonReport renders r as Ginkgo's JSON report does, an array of one
// report, with the key replaced in every string value (before encoding,
// so no key can break the document) and without the working directory:
// SuitePath is empty and paths under it are relative.
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
