package report_test

import (
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"
	"github.com/petstore/inventory-kit/spec/report/reporttest"
)

// FuzzReports puts any text a target could send in every field of a run
// and reads each report as its reader does: the Markdown keeps its tables
// and fences and shows the text as sent (the key hidden, control
// characters as ·), the HTML stays inert, each annotation stays one line.
func FuzzReports(f *testing.F) {
	for _, s := range []string{hostileText, "```", "````\n```", "|", "\\|", "<br>", "&lt;", "\\", "%0A", "a:b,c", "\r", "\u2028", "\xff", key, "$INVENTORY_API_KEY", "<!--", "</pre><script>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		failure := report.Failure{Title: s, Want: s, Request: s, Got: s, Problems: []string{s}, Detail: s, Count: 1}
		run := report.Run{Name: s, Facts: []report.Property{{Name: s, Value: s}}, Counts: []report.Count{{N: 1, Label: s}},
			Causes:       []report.Cause{{Name: s, About: s, Severity: spec.SeverityError, Count: 2, Unit: "check", Failures: []report.Failure{failure, failure}}},
			Warnings:     []report.Cause{{Name: s, About: s, Severity: spec.SeverityWarning, Count: 1, Unit: "check", Failures: []report.Failure{failure}}},
			Observations: []string{s}, Notes: []report.Note{{Title: s, Lines: []string{s}}},
			Coverage: &report.Coverage{Min: 60, Operations: []report.OperationCoverage{{Name: s, Method: s, Path: s,
				Responses: []report.ResponseCoverage{{Code: s, Why: s}, {Code: "200", Statuses: []report.StatusCount{{Status: 200, Count: 1}}}}}}}}
		md := reporttest.ReadMarkdown(t, run.Markdown(rd), key)
		shown := exchange.Printable([]byte(rd.String(s)))
		if !strings.Contains(md.Text, shown) {
			t.Errorf("the Markdown does not show %q as %q", s, shown)
		}
		reporttest.ReadHTML(t, run.HTML(rd), key)
		if as := reporttest.ReadAnnotations(t, run.Annotations(rd), key); len(as) != 3 {
			t.Errorf("%d annotations; want 3 (the cause, the warning, the coverage)", len(as))
		}
	})
}
