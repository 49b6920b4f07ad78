package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"
)

// entryExample names the report entry a failed check adds (FailBecause):
// the exchange it shows, in parts, for the reports people read.
const entryExample = "example"

// An example is the exchange a failed check shows: what the contract
// wanted, the request as a curl line (the key as $INVENTORY_API_KEY),
// what came back and the problems seen. Its JSON is what the JSON report
// holds for tools.
type example struct {
	Want     string   `json:"want"`
	Request  string   `json:"request"`
	Got      string   `json:"got"`
	Problems []string `json:"problems"`
}

// String renders the example as the failure message does.
func (e example) String() string {
	return fmt.Sprintf("contract: %s\nrequest:  %s\ngot:      %s\nproblems:\n  - %s", e.Want, e.Request, e.Got, strings.Join(e.Problems, "\n  - "))
}

// recordExample adds the example entry of a failure of x.
func (t *Target) recordExample(x *Exchange, want string, problems []string) {
	ginkgo.AddReportEntry(entryExample, example{Want: want, Request: x.Curl(), Got: x.Got(), Problems: problems}, ginkgo.ReportEntryVisibilityNever)
}

// exampleOf returns the last example entry of a check.
func exampleOf(s types.SpecReport) (example, bool) {
	for i := len(s.ReportEntries) - 1; i >= 0; i-- {
		if e := s.ReportEntries[i]; e.Name == entryExample {
			if ex, ok := entryValue[example](e); ok {
				return ex, true
			}
		}
	}
	return example{}, false
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

// results is the one Run every report of a suite run is written from:
// the cases and properties JUnit reads (suiteRun), and for people the
// counts, the failures by cause with their exchanges, the warnings, the
// observations, the notes and the coverage of the contract's documented
// responses.
func (t *Target) results(r types.Report, info RunInfo, o RunOptions, left []report.Changed) report.Run {
	tally := TallyReport(r, info.Mutations)
	run := suiteRun(r, info, tally)
	leftOut := 0
	if o.LabelFilter != "" {
		leftOut = tally.leftOut
	}
	run.Facts = []report.Property{{Name: "target", Value: info.Target}, {Name: "contract", Value: info.Contract}}
	mode := "read-only"
	if info.Mutations {
		mode = "writes allowed, none made"
		if ids := t.writtenIDs(); len(ids) > 0 {
			mode = fmt.Sprintf("wrote to %s %s (%s)", t.inv.Key, examples(ids), report.Plural(len(ids), "record"))
			if len(left) > 0 {
				mode += fmt.Sprintf(", %d left changed (listed below)", len(left))
			} else {
				mode += ", each restored"
			}
		}
	}
	run.Facts = append(run.Facts, report.Property{Name: "mode", Value: mode})
	if o.LabelFilter != "" {
		run.Facts = append(run.Facts, report.Property{Name: "label filter", Value: o.LabelFilter})
	}
	if info.Seed != 0 {
		run.Facts = append(run.Facts, report.Property{Name: "seed", Value: strconv.FormatUint(info.Seed, 10)})
	}
	if info.Strict {
		run.Facts = append(run.Facts, report.Property{Name: "strict", Value: "warnings fail"})
	}
	run.Counts = []report.Count{{N: int64(tally.Passed), Label: "passed"}, {N: int64(len(tally.Failed)), Label: "failed"}, {N: int64(tally.Skipped), Label: "skipped"}}
	if n := len(tally.Interrupted); n > 0 {
		run.Counts = append(run.Counts, report.Count{N: int64(n), Label: "interrupted"})
	}

	for _, c := range tally.Causes {
		run.Causes = append(run.Causes, report.Cause{Name: string(c), About: c.Text(), Severity: spec.SeverityError,
			Count: int64(len(tally.ByCause[c])), Unit: "check", Failures: tally.failures[c]})
	}
	for _, rfc := range tally.rfcs {
		fs := tally.warned[rfc]
		run.Warnings = append(run.Warnings, report.Cause{Name: rfc, About: "what " + rfc + " requires and the contract does not: " + fs[0].Problems[0],
			Severity: spec.SeverityWarning, Count: int64(len(fs)), Unit: "check", Failures: fs})
	}

	run.LeftChanged = left
	if len(tally.Interrupted) > 0 {
		run.Notes = append(run.Notes, report.Note{Title: "Interrupted (not counted as failures)", Lines: tally.Interrupted})
	}
	if tally.SkippedMutating > 0 {
		run.Notes = append(run.Notes, report.Note{Title: "Writes skipped", Lines: []string{fmt.Sprintf(
			"%d mutating checks were skipped (no --allow-mutations): the run sent reads, and writes a conforming target refuses.", tally.SkippedMutating)}})
	}
	if len(tally.Exploration) > 0 {
		lines := slices.Clone(tally.Exploration)
		if info.Seed != 0 {
			lines = append(lines, fmt.Sprintf("replay with --seed %d", info.Seed))
		}
		note := report.Note{Title: "Exploration", Lines: lines}
		if len(tally.ExploreThin) > 0 {
			// Too few steps to mean much: said first, as a warning.
			note = report.Note{Severity: spec.SeverityWarning, Title: "Exploration: explored too little", Lines: append(slices.Clone(tally.ExploreThin), lines...)}
		}
		run.Notes = append(run.Notes, note)
	}

	cov := t.contract.Coverage(t.answers.ByStatus())
	cov.Min = o.MinCoverage
	for i, oc := range cov.Operations {
		op := t.contract.Operations[i]
		for j, rc := range oc.Responses {
			if !rc.Exercised() {
				cov.Operations[i].Responses[j].Why = t.whyNot(op, rc.Code, oc, tally.SkippedMutating, leftOut, o.LabelFilter)
			}
		}
	}
	run.Coverage = cov
	obs := slices.Clone(tally.Observations)
	sort.Strings(obs)
	run.Observations = append(dedupe(obs), cov.DefaultOnly()...)
	return run
}

// whyNot says what of the run could explain that it exercised no answer
// of op with code (200, 4XX, default): the writes it skipped, the record
// it lacked, the checks a label filter left out; else what no check asks
// for. Where several apply, it names each.
func (t *Target) whyNot(op *spec.Operation, code string, oc report.OperationCoverage, skippedWrites, leftOut int, filter string) string {
	class := 0
	if code != "default" {
		class = int(code[0] - '0')
	}
	safe := op.Method == http.MethodGet || op.Method == http.MethodHead || op.Method == http.MethodOptions
	var why []string
	if !safe && !t.cfg.AllowMutations && skippedWrites > 0 {
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

// coverageLine is the coverage in the console's summary, and the gate's
// verdict where the run has a minimum.
func coverageLine(c *report.Coverage) string {
	s := "Coverage: " + c.Headline()
	if c.Min > 0 && c.Met() {
		s += fmt.Sprintf(", at least --min-coverage %g%%", c.Min)
	}
	s += "\n"
	if g := c.Gate(); g != "" {
		s += "!!! " + g + "\n"
	}
	return s
}
