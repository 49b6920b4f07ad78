package spec

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"
)

// noOperation is the class of the cases for requests that match no
// operation of the contract.
const noOperation = "(no operation)"

// Traffic is the Run of checked traffic, the validating proxy's or a HAR
// file's: one case per operation and rule of the Judge, failed where the
// operation had violations of error severity of the rule, skipped where it
// saw no traffic, passed otherwise; warnings are the case's output.
// Requests to no operation are cases of their own. The violations are
// grouped by rule (Causes, Warnings), each with its example exchange.
func Traffic(name string, c *Contract, f *Findings) report.Run {
	findings := f.List()
	byOp, unknown := f.Traffic()
	var exchanges int64
	for _, n := range byOp {
		exchanges += n
	}
	run := report.Run{Name: name, Start: time.Now(), Properties: []report.Property{
		{Name: "exchanges", Value: fmt.Sprint(exchanges + unknown)},
		{Name: "exchanges without an operation", Value: fmt.Sprint(unknown)},
		{Name: "groups", Value: fmt.Sprint(len(findings))},
	}}
	if d := f.Dropped(); d > 0 {
		run.Properties = append(run.Properties, report.Property{Name: "violations not grouped (too many groups)", Value: fmt.Sprint(d)})
	}
	classOf := func(g Finding) string {
		if _, ok := byOp[g.Operation]; ok {
			return g.Operation
		}
		return noOperation
	}
	addCase := func(class, rule string, seen bool) {
		cs := report.Case{Suite: name, Class: class, Name: rule}
		var errs, warns []Finding
		for _, g := range findings {
			if g.Rule != rule || classOf(g) != class {
				continue
			}
			if g.Severity == SeverityError {
				errs = append(errs, g)
			} else {
				warns = append(warns, g)
			}
		}
		switch {
		case len(errs) > 0:
			cs.State, cs.Message, cs.Kind, cs.Detail = report.Failed, count(errs), rule, describeAll(errs)
		case !seen:
			cs.State, cs.Message = report.Skipped, "no traffic to this operation"
		}
		cs.Output = describeAll(warns)
		run.Cases = append(run.Cases, cs)
	}
	for _, op := range c.Operations {
		for _, r := range Rules {
			if r.Name != RuleOperationUnknown {
				addCase(op.Name(), r.Name, byOp[op.Name()] > 0)
			}
		}
	}
	for _, r := range Rules {
		if r.Name == RuleOperationUnknown || slices.ContainsFunc(findings, func(g Finding) bool { return g.Rule == r.Name && classOf(g) == noOperation }) {
			addCase(noOperation, r.Name, true)
		}
	}
	var b strings.Builder
	_ = WriteFindings(&b, f)
	run.Summary = b.String()

	errs, warns, requests := tally(findings)
	run.Counts = []report.Count{{N: exchanges + unknown, Label: "exchanges"}, {N: errs, Label: "violations"}}
	if requests > 0 {
		// A request that breaks the contract is what a client sent, on
		// purpose where a conformance suite sent it; the backend is
		// judged by its answers.
		run.Counts = append(run.Counts, report.Count{N: requests, Label: "of them in requests (what clients sent)"}, report.Count{N: errs - requests, Label: "in answers"})
		run.Summary = report.RequestFindings(requests, errs-requests) + "\n\n" + run.Summary
	}
	run.Counts = append(run.Counts, report.Count{N: warns, Label: "warnings"}, report.Count{N: int64(len(findings)), Label: "groups"})
	if unknown > 0 {
		run.Counts = append(run.Counts, report.Count{N: unknown, Label: "to no operation"})
	}
	run.Causes = causesOf(findings, SeverityError, f.Redactor())
	run.Warnings = causesOf(findings, SeverityWarning, f.Redactor())
	if d := f.Dropped(); d > 0 {
		run.Causes = append(run.Causes, report.Cause{Name: "not-grouped", About: "violations past the limit of groups, counted only", Severity: SeverityError, Count: d, Unit: "violation"})
	}
	run.Coverage = c.Coverage(f.Answers())
	for i, op := range run.Coverage.Operations {
		for j, r := range op.Responses {
			switch {
			case r.Exercised():
			case op.Answers == 0:
				run.Coverage.Operations[i].Responses[j].Why = "no traffic to this operation"
			default:
				run.Coverage.Operations[i].Responses[j].Why = "no answer with this status in the traffic"
			}
		}
	}
	run.Observations = run.Coverage.DefaultOnly()
	return run
}

// causesOf groups the findings of a severity by rule, most violations
// first, each group a report.Failure with its example as a curl line.
func causesOf(findings []Finding, severity string, rd *exchange.Redactor) []report.Cause {
	var out []report.Cause
	index := map[string]int{}
	for _, g := range findings {
		if g.Severity != severity {
			continue
		}
		i, ok := index[g.Rule]
		if !ok {
			i = len(out)
			index[g.Rule] = i
			about := g.Rule
			if r, ok := RuleNamed(g.Rule); ok {
				about = r.About
			}
			out = append(out, report.Cause{Name: g.Rule, About: about, Severity: severity, Unit: "violation"})
		}
		out[i].Count += g.Count
		out[i].Failures = append(out[i].Failures, failureOf(g, rd))
	}
	slices.SortStableFunc(out, func(a, b report.Cause) int { return cmp.Compare(b.Count, a.Count) })
	return out
}

// failureOf renders a group of violations as a Failure: where, its
// message, its example as a curl line and what came back, and the whole
// group as the console shows it.
func failureOf(g Finding, rd *exchange.Redactor) report.Failure {
	e := g.Example
	title := g.Operation + ": " + g.Where
	if g.Path != "" {
		title += " " + g.Path
	}
	if g.Status != 0 {
		title += fmt.Sprintf(" (answer %d)", g.Status)
	}
	x := &exchange.Exchange{Method: e.Method, URL: e.URL, Header: http.Header(e.Request.Headers), Body: []byte(e.Request.Body), BodySize: e.Request.Bytes}
	if e.Request.Body == "" && e.Request.Bytes == 0 {
		x.Body = nil
	}
	got := "no answer"
	if e.Status != 0 {
		got = fmt.Sprintf("%d %s, Content-Type %s\n%s", e.Status, http.StatusText(e.Status), exchange.Quote(http.Header(e.Response.Headers).Get("Content-Type")),
			exchange.Shown(rd, []byte(e.Response.Body), e.Response.Bytes, e.Response.Truncated))
	}
	return report.Failure{Title: title, Request: exchange.Curl(x, rd), Got: got, Problems: []string{g.Message}, Detail: describeAll([]Finding{g}), Count: g.Count}
}

// tally counts the violations of groups: of error severity, of warning
// severity, and of the errors those in requests.
func tally(gs []Finding) (errs, warns, requests int64) {
	for _, g := range gs {
		switch {
		case g.Severity != SeverityError:
			warns += g.Count
		case g.Where == WhereRequest:
			requests += g.Count
			errs += g.Count
		default:
			errs += g.Count
		}
	}
	return errs, warns, requests
}

// count says how many violations a list of groups of errors holds.
func count(gs []Finding) string {
	n, _, _ := tally(gs)
	return fmt.Sprintf("%d violations in %d groups: %s", n, len(gs), gs[0].Message)
}

func describeAll(gs []Finding) string {
	var b strings.Builder
	for _, g := range gs {
		describe(&b, g, "")
	}
	return b.String()
}

// describe renders one group: what, where, how often, and its example.
func describe(b *strings.Builder, g Finding, indent string) {
	where := g.Where + " " + g.Path
	if g.Status != 0 {
		where += fmt.Sprintf(" (answer %d)", g.Status)
	}
	fmt.Fprintf(b, "%s%s %s %s, %d× [id %s]\n", indent, g.Severity, g.Rule, where, g.Count, g.ID)
	fmt.Fprintf(b, "%s  %s\n", indent, g.Message)
	fmt.Fprintf(b, "%s  first %s, last %s\n", indent, g.FirstSeen.UTC().Format(time.RFC3339), g.LastSeen.UTC().Format(time.RFC3339))
	e := g.Example
	fmt.Fprintf(b, "%s  e.g. %s %s -> %d\n", indent, e.Method, e.URL, e.Status)
	if e.Request.Body != "" {
		fmt.Fprintf(b, "%s    sent:     %s\n", indent, oneLine(e.Request.Body, 300))
	}
	if e.Response.Body != "" {
		fmt.Fprintf(b, "%s    received: %s\n", indent, oneLine(e.Response.Body, 300))
	}
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// WriteFindings writes findings as text for a person: a count, then each
// group with its example.
func WriteFindings(w io.Writer, f *Findings) error {
	gs := f.List()
	errs, warns, _ := tally(gs)
	var b strings.Builder
	fmt.Fprintf(&b, "%d violations and %d warnings in %d groups\n", errs, warns, len(gs))
	if d := f.Dropped(); d > 0 {
		fmt.Fprintf(&b, "(%d more violations not grouped: too many groups)\n", d)
	}
	for _, g := range gs {
		fmt.Fprintf(&b, "\n%s\n", g.Operation)
		describe(&b, g, "  ")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Coverage measures the coverage of c by answers, counted by operation
// name and status (Answers.ByStatus, Findings.Answers).
func (c *Contract) Coverage(answers map[string]map[int]int64) *report.Coverage {
	cov := &report.Coverage{}
	for _, op := range c.Operations {
		oc := report.OperationCoverage{Name: op.Name(), Method: op.Method, Path: c.BasePath + op.Path}
		for _, r := range op.Responses {
			oc.Responses = append(oc.Responses, report.ResponseCoverage{Code: r.Code})
		}
		seen := answers[op.Name()]
		for _, s := range slices.Sorted(maps.Keys(seen)) {
			n := seen[s]
			oc.Answers += n
			r := op.Response(s)
			if r == nil {
				oc.Undocumented = append(oc.Undocumented, report.StatusCount{Status: s, Count: n})
				continue
			}
			i := slices.IndexFunc(oc.Responses, func(rc report.ResponseCoverage) bool { return rc.Code == r.Code })
			oc.Responses[i].Statuses = append(oc.Responses[i].Statuses, report.StatusCount{Status: s, Count: n})
		}
		cov.Operations = append(cov.Operations, oc)
	}
	return cov
}
