package conformance

import (
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// A Cause names what a failure is about, so that the summary groups the
// checks one defect breaks under one line: the name of the rule the
// failure breaks in spec's rule registry (spec.Rules, spec.SuiteRules).
// The checks record it; the summary never reads it out of a message.
type Cause string

// Text says what the cause means.
func (c Cause) Text() string {
	if r, ok := spec.RuleNamed(string(c)); ok {
		return r.About
	}
	return string(c)
}

// A causeEntry is the report entry a failed check adds: the cause it
// breaks and the detail it saw.
type causeEntry struct {
	Cause  Cause  `json:"cause"`
	Detail string `json:"detail"`
}

func (e causeEntry) String() string { return string(e.Cause) + " | " + e.Detail }

// Because records why the check fails: the cause and the detail seen
// (FailBecause, FailWith and Expect record it themselves).
func (t *Target) Because(c Cause, detail string) {
	ginkgo.AddReportEntry(entryCause, causeEntry{Cause: c, Detail: detail}, ginkgo.ReportEntryVisibilityNever)
}

// FailBecause fails the check with the exchange and the problems found,
// recording the cause.
func (t *Target) FailBecause(c Cause, x *Exchange, want string, problems []string) {
	ginkgo.GinkgoHelper()
	if why, _ := t.stop.reason(); why != "" && (x == nil || x.Failure == exchange.FailureNoAnswer) {
		// Not the target's answer: the run stopped under the check.
		ginkgo.AbortSuite("the run stopped: " + why)
	}
	if len(problems) > maxExamples {
		problems = append(problems[:maxExamples:maxExamples], fmt.Sprintf("and %d more problems", len(problems)-maxExamples))
	}
	detail := want + " — got " + gotLine(x)
	if len(problems) > 0 {
		p := problems[0]
		if !strings.HasPrefix(p, "status ") {
			p = digits.ReplaceAllString(p, "N")
		}
		detail = want + " — " + p
	}
	t.Because(c, detail)
	ex := example{Want: want, Request: x.Curl(), Got: x.Got(), Problems: problems}
	ginkgo.AddReportEntry(entryExample, ex, ginkgo.ReportEntryVisibilityNever)
	ginkgo.Fail(ex.String())
}
