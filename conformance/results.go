package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"
)

// entryExample names the report entry a failed check adds (FailBecause):
// the exchange it shows, in parts, for the reports people read.
const entryExample = "example"

// An example is the exchange a failed check shows; its JSON is what the
// JSON report holds for tools.
type example struct {
	Want     string   `json:"want"`
	Request  string   `json:"request"`
	Got      string   `json:"got"`
	Problems []string `json:"problems"`
}

func (e example) String() string {
	return fmt.Sprintf("contract: %s\nrequest:  %s\ngot:      %s\nproblems:\n  - %s", e.Want, e.Request, e.Got, strings.Join(e.Problems, "\n  - "))
}

// lastEntry returns the value of the last entry of s named name that
// holds a T.
func lastEntry[T any](s types.SpecReport, name string) (T, bool) {
	for i := len(s.ReportEntries) - 1; i >= 0; i-- {
		if e := s.ReportEntries[i]; e.Name == name {
			if v, ok := entryValue[T](e); ok {
				return v, true
			}
		}
	}
	var zero T
	return zero, false
}

// entryValue returns the value of a report entry the suite added: the
// value itself in the run's process, or decoded from its JSON in a report
// read back.
func entryValue[T any](e types.ReportEntry) (T, bool) {
	if v, ok := e.Value.GetRawValue().(T); ok {
		return v, true
	}
	var v T
	return v, json.Unmarshal([]byte(e.Value.AsJSON), &v) == nil
}

// results is the one Run every report of a suite run and the console's
// summary are written from: gather's, with the facts of the run, the
// records it left changed and the coverage.
func (t *Target) results(r types.Report, info RunInfo, o RunOptions, left []report.Changed) report.Run {
	run, writesSkipped, leftOut := gather(r, info)
	if o.LabelFilter == "" {
		leftOut = 0
	}
	mode := "read-only"
	if info.Mutations {
		mode = "writes allowed, none made"
		if ids := t.writtenIDs(); len(ids) > 0 {
			mode = fmt.Sprintf("wrote to %s %s (%s)", t.inv.Key, examples(ids, ", "), report.Plural(len(ids), "record"))
			if len(left) > 0 {
				mode += fmt.Sprintf(", %d left changed (listed below)", len(left))
			} else {
				mode += ", each restored"
			}
		}
	}
	facts := []report.Property{{Name: "target", Value: info.Target}, {Name: "contract", Value: info.Contract}, {Name: "mode", Value: mode}}
	if o.LabelFilter != "" {
		facts = append(facts, report.Property{Name: "label filter", Value: o.LabelFilter})
	}
	run.Facts = append(facts, run.Facts...)
	run.LeftChanged = left

	cov := t.contract.Coverage(t.answers.ByStatus())
	cov.Min = o.MinCoverage
	for i, oc := range cov.Operations {
		op := t.contract.Operations[i]
		for j, rc := range oc.Responses {
			if !rc.Exercised() {
				cov.Operations[i].Responses[j].Why = t.whyNot(op, rc.Code, oc, writesSkipped, leftOut, o.LabelFilter)
			}
		}
	}
	run.Coverage = cov
	run.Observations = append(run.Observations, cov.DefaultOnly()...)
	return run
}

// RunOf is the Run of a suite run's report read back (a child run's JSON
// report), as far as gather makes it.
func RunOf(r types.Report, info RunInfo) report.Run {
	run, _, _ := gather(r, info)
	return run
}

// gather reads the report of a suite run in one pass into a report.Run:
// the cases, counts, causes, warnings, observations, notes and the
// properties JUnit reads. It counts the mutating checks skipped for want
// of writes and the checks a label filter left out: they explain the
// coverage.
func gather(r types.Report, info RunInfo) (run report.Run, writesSkipped, leftOut int) {
	run = report.Run{Name: SuiteName, Start: r.StartTime, Duration: r.RunTime}
	var passed, failed, skipped int
	var interrupted, warnings, observations, exploration, thin, reasons []string
	notJudged := map[string]int{} // why → the checks not judged for it
	cases := map[Area][]report.Case{}
	causes, rfcs := map[string]int{}, map[string]int{} // name → place in run.Causes, run.Warnings
	for _, s := range r.SpecReports {
		for _, e := range s.ReportEntries {
			v := e.StringRepresentation()
			switch e.Name {
			case entryWarning:
				w, ok := entryValue[warning](e)
				if !ok || w.RFC == "" {
					w = warning{Text: v, RFC: "warning"}
				}
				warnings = append(warnings, v)
				g := group(&run.Warnings, rfcs, report.Cause{Name: w.RFC, About: "what " + w.RFC + " requires and the contract does not: " + w.Text, Severity: spec.SeverityWarning, Unit: "check"})
				g.Count++
				g.Failures = append(g.Failures, report.Failure{Title: FullName(s), Problems: []string{w.Text}, Count: 1})
			case entryNotJudged: // added only before a Skip
				why, _ := entryValue[string](e)
				if notJudged[why] == 0 {
					reasons = append(reasons, why)
				}
				notJudged[why]++
			case entryObservation:
				observations = append(observations, v)
			case EntryExploration:
				exploration = append(exploration, v)
			case EntryExploreThin:
				thin = append(thin, v)
			}
		}
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		a := areaOf(s.Labels())
		cases[a] = append(cases[a], caseOf(s, a))
		switch {
		case s.State == types.SpecStatePassed:
			passed++
		case s.State == types.SpecStateSkipped || s.State == types.SpecStatePending:
			skipped++
			if s.State == types.SpecStateSkipped && s.Failure.Message == "" {
				leftOut++
			}
			// Skipped for want of --allow-mutations, not left out by a
			// label filter (which leaves no message).
			if Mutating.In(s.Labels()) && !info.Mutations && s.Failure.Message != "" {
				writesSkipped++
			}
		case s.State.Is(types.SpecStateInterrupted | types.SpecStateAborted):
			interrupted = append(interrupted, FullName(s))
		case s.State.Is(types.SpecStateFailureStates):
			failed++
			c, seen := causeOf(s)
			g := group(&run.Causes, causes, report.Cause{Name: string(c), About: c.Text(), Severity: spec.SeverityError, Unit: "check"})
			g.Count++
			g.Failures = append(g.Failures, failureOf(s))
			if !slices.Contains(g.Seen, seen) {
				g.Seen = append(g.Seen, seen)
			}
		}
	}
	// Most checks first; restore-failed last, below the cause that made
	// the restore fail (a check whose restore failed keeps its own cause).
	sort.SliceStable(run.Causes, func(i, j int) bool {
		ri, rj := run.Causes[i].Name == string(spec.RuleRestoreFailed), run.Causes[j].Name == string(spec.RuleRestoreFailed)
		if ri != rj {
			return rj
		}
		return run.Causes[i].Count > run.Causes[j].Count
	})
	for _, a := range areas {
		slices.SortStableFunc(cases[a], func(x, y report.Case) int { return strings.Compare(x.Name, y.Name) })
		run.Cases = append(run.Cases, cases[a]...)
	}
	if info.Stopped != "" {
		// A run that stopped short is no green run, whatever it found.
		run.Cases = append(run.Cases, report.Case{Suite: "run", Class: "conformance.run", Name: "the run finished", State: report.Errored,
			Message: "the run stopped before its checks were done: " + info.Stopped, Kind: "stopped"})
	}
	run.Counts = []report.Count{{N: int64(passed), Label: "passed"}, {N: int64(failed), Label: "failed"}, {N: int64(skipped), Label: "skipped"}}
	if n := len(interrupted); n > 0 {
		run.Counts = append(run.Counts, report.Count{N: int64(n), Label: "interrupted"})
	}
	if len(exploration) == 0 {
		info.Seed = 0 // the exploration did not run: no seed replays it
	}
	if info.Seed != 0 {
		run.Facts = append(run.Facts, report.Property{Name: "seed", Value: strconv.FormatUint(info.Seed, 10)})
	}
	if info.Strict {
		run.Facts = append(run.Facts, report.Property{Name: "strict", Value: "warnings fail"})
	}
	sort.Strings(observations)
	run.Observations = report.Dedupe(observations)

	note := func(severity, title string, lines ...string) {
		run.Notes = append(run.Notes, report.Note{Severity: severity, Title: title, Lines: lines})
	}
	if info.Stopped != "" {
		note(spec.SeverityError, "The run STOPPED before its checks were done", info.Stopped+": the failures are every one found until then")
	}
	if len(interrupted) > 0 {
		note("", "Interrupted or not run since the run stopped (not counted as failures)", interrupted...)
	}
	if len(reasons) > 0 {
		var lines []string
		for _, why := range reasons {
			lines = append(lines, report.Plural(notJudged[why], "check")+": "+why)
		}
		note("", "Not judged (the target gave these checks nothing to judge; the failure above says why)", lines...)
	}
	if info.Waited > 0 {
		note("", "Rate limits", fmt.Sprintf("Waited %s in all on 429 answers (Retry-After), of the %s --max-retry-wait allows.", info.Waited.Round(time.Millisecond), info.Allowance))
	}
	if writesSkipped > 0 {
		note("", "Writes skipped", fmt.Sprintf("%d mutating checks were skipped (no --allow-mutations). The run sent reads, and writes a conforming target refuses, each carrying the record's own values or no body at all. Pass --allow-mutations to run them.", writesSkipped))
	}
	if len(exploration) > 0 {
		if info.Seed != 0 {
			exploration = append(exploration, fmt.Sprintf("Exploration seed: %d (replay with --seed %d)", info.Seed, info.Seed))
		}
		if len(thin) > 0 {
			// Too few steps to mean much: said first, as a warning.
			note(spec.SeverityWarning, "Exploration: explored too little (an observation; it fails nothing)", append(thin, exploration...)...)
		} else {
			note("", "Exploration", exploration...)
		}
	}

	prop := func(name string, v any) {
		run.Properties = append(run.Properties, report.Property{Name: name, Value: fmt.Sprint(v)})
	}
	prop("target", info.Target)
	prop("contract", info.Contract)
	if info.Seed != 0 {
		prop("seed", info.Seed)
	}
	prop("mutations", info.Mutations)
	prop("strict", info.Strict)
	for _, c := range run.Counts[:3] {
		prop(c.Label, c.N)
	}
	prop("interrupted", len(interrupted))
	if info.Stopped != "" {
		prop("stopped", info.Stopped)
	}
	if info.Waited > 0 {
		prop("waited-on-429", info.Waited.Round(time.Millisecond))
	}
	for _, why := range reasons {
		prop("not-judged", fmt.Sprintf("%s (%d checks)", why, notJudged[why]))
	}
	for _, w := range report.Dedupe(warnings) {
		prop("warning", w)
	}
	for _, c := range run.Causes {
		prop("cause", fmt.Sprintf("%s: %s (broke %d)", c.Name, c.About, c.Count))
	}
	return run, writesSkipped, leftOut
}

// group returns the group of gs named as c, appending c where there is
// none yet; at holds each group's place in gs.
func group(gs *[]report.Cause, at map[string]int, c report.Cause) *report.Cause {
	i, ok := at[c.Name]
	if !ok {
		i = len(*gs)
		at[c.Name] = i
		*gs = append(*gs, c)
	}
	return &(*gs)[i]
}

// whyNot says what of the run could explain that it exercised no answer
// of op with code (200, 4XX, default); where several apply, each.
func (t *Target) whyNot(op *spec.Operation, code string, oc report.OperationCoverage, skippedWrites, leftOut int, filter string) string {
	class := 0
	if code != "default" {
		class = int(code[0] - '0')
	}
	var why []string
	if op.Writes() && !t.cfg.AllowMutations && skippedWrites > 0 {
		why = append(why, fmt.Sprintf("read-only run (%s that write skipped; --allow-mutations runs them)", report.Plural(skippedWrites, "check")))
	}
	if class == 2 && len(op.PathParams()) > 0 && t.petID == 0 {
		why = append(why, "no record to address (the target lists none)")
	}
	if leftOut > 0 {
		why = append(why, fmt.Sprintf("skipped by label (--label-filter %s left out %s)", exchange.Quote(filter), report.Plural(leftOut, "check")))
	}
	switch {
	case len(why) > 0:
	case oc.Answers == 0:
		why = append(why, "no check called this operation")
	case code == "default":
		why = append(why, "no answer with a status the operation gives no code for")
	case class == 5:
		why = append(why, "a conforming target sends it only when it fails")
	default:
		why = append(why, "no check made the target answer it")
	}
	return strings.Join(why, "; ")
}
