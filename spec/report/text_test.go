package report_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/report"
)

// TestText renders the console's summary of a run: the counts, a note
// that fails the run before the causes, a few variants of what each
// cause's checks saw and every check it broke, each warning once with its
// rule and how often, the observations, the other notes (cut), the
// records left changed and the coverage.
func TestText(t *testing.T) {
	var long []string
	for i := range 22 {
		long = append(long, fmt.Sprint("check ", i))
	}
	warn := func(text string) report.Failure { return report.Failure{Title: "a check", Problems: []string{text}} }
	run := report.Run{
		Counts: []report.Count{{N: 3, Label: "passed"}, {N: 2, Label: "failed"}, {N: 0, Label: "skipped"}},
		Causes: []report.Cause{{Name: "server-error", About: "a 5xx answer", Severity: spec.SeverityError, Count: 2, Unit: "check",
			Seen: []string{"a", "b", "c", "d", "e"}, Failures: []report.Failure{{Title: "list: one"}, {Title: "update: two"}}}},
		Warnings: []report.Cause{{Name: "RFC 9110", Severity: spec.SeverityWarning, Count: 3, Unit: "check",
			Failures: []report.Failure{warn("no challenge"), warn("no challenge"), warn("no date")}}},
		Observations: []string{"list order: ascending"},
		Notes: []report.Note{
			{Title: "Interrupted", Lines: long},
			{Severity: spec.SeverityError, Title: "The run STOPPED", Lines: []string{"the target is gone"}},
			{Severity: spec.SeverityWarning, Title: "Exploration: explored too little", Lines: []string{"3 steps"}},
		},
		LeftChanged: []report.Changed{{Record: "petId 7", Found: "quantity 555", Wanted: "quantity 7"}},
		Coverage:    &report.Coverage{Min: 50},
	}
	want := `
== Conformance summary: 3 passed, 2 failed, 0 skipped ==
!!! The run STOPPED:
  - the target is gone
Failures by cause (1 cause):
  ✗ server-error: a 5xx answer
      seen: a
      seen: b
      seen: c
      seen: ... (2 more)
    broke 2 checks:
      - list: one
      - update: two
Warnings (what HTTP's RFCs require and the contract does not; --strict fails them):
  - no challenge (RFC 9110) (2 times)
  - no date (RFC 9110)
Observations (the contract is silent; what the target chose):
  - list order: ascending
Interrupted:
` + "  - " + strings.Join(long[:20], "\n  - ") + `
  - and 2 more (the reports list them)
!!! Exploration: explored too little:
  - 3 steps

!!! Left changed: set these records back by hand (1 record):
  petId 7: found quantity 555; wanted quantity 7
Coverage: 100% (0 of 0 documented responses), at least --min-coverage 50%
`
	if got := run.Text(); got != want {
		t.Errorf("Text() = %s; want %s", got, want)
	}
}
