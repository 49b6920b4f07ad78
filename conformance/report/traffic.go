package report

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// noOperation is the class of the cases for requests that match no
// operation of the contract.
const noOperation = "(no operation)"

// Traffic is the Run of checked traffic, the validating proxy's or a HAR
// file's: one case per operation of the contract and rule of the Judge
// (the class is the operation, the name the rule), failed where the
// operation had violations of error severity of the rule, skipped where
// the operation saw no traffic, passed otherwise; warnings are the case's
// output. Requests to no operation are cases of their own. For people,
// the violations are grouped by rule (Causes, Warnings), each group with
// its example exchange, and the coverage is what the traffic's answers
// exercised.
func Traffic(name string, c *spec.Contract, f *spec.Findings) Run {
	findings := f.List()
	byOp, unknown := f.Traffic()
	var exchanges int64
	for _, n := range byOp {
		exchanges += n
	}
	run := Run{Name: name, Start: time.Now(), Properties: []Property{
		{"exchanges", fmt.Sprint(exchanges + unknown)},
		{"exchanges without an operation", fmt.Sprint(unknown)},
		{"groups", fmt.Sprint(len(findings))},
	}}
	if d := f.Dropped(); d > 0 {
		run.Properties = append(run.Properties, Property{"violations not grouped (too many groups)", fmt.Sprint(d)})
	}
	classOf := func(g spec.Finding) string {
		if _, ok := byOp[g.Operation]; ok {
			return g.Operation
		}
		return noOperation
	}
	addCase := func(class, rule string, seen bool) {
		cs := Case{Suite: name, Class: class, Name: rule}
		var errs, warns []spec.Finding
		for _, g := range findings {
			if g.Rule != rule || classOf(g) != class {
				continue
			}
			if g.Severity == spec.SeverityError {
				errs = append(errs, g)
			} else {
				warns = append(warns, g)
			}
		}
		switch {
		case len(errs) > 0:
			cs.State, cs.Message, cs.Kind, cs.Detail = Failed, count(errs), rule, describeAll(errs)
		case !seen:
			cs.State, cs.Message = Skipped, "no traffic to this operation"
		}
		if len(warns) > 0 {
			cs.Output = describeAll(warns)
		}
		run.Cases = append(run.Cases, cs)
	}
	for _, op := range c.Operations {
		for _, r := range spec.Rules {
			if r.Name != spec.RuleOperationUnknown {
				addCase(op.Name(), r.Name, byOp[op.Name()] > 0)
			}
		}
	}
	for _, r := range spec.Rules {
		if r.Name == spec.RuleOperationUnknown || slices.ContainsFunc(findings, func(g spec.Finding) bool { return g.Rule == r.Name && classOf(g) == noOperation }) {
			addCase(noOperation, r.Name, true)
		}
	}
	var b strings.Builder
	_ = Findings(&b, f)
	run.Summary = b.String()

	var errs, warns, requests int64
	for _, g := range findings {
		switch {
		case g.Severity != spec.SeverityError:
			warns += g.Count
		case g.Where == spec.WhereRequest:
			requests += g.Count
			errs += g.Count
		default:
			errs += g.Count
		}
	}
	run.Counts = []Count{{exchanges + unknown, "exchanges"}, {errs, "violations"}}
	if requests > 0 {
		// A request that breaks the contract is what a client sent, on
		// purpose where a conformance suite sent it; the backend is
		// judged by its answers.
		run.Counts = append(run.Counts, Count{requests, "of them in requests (what clients sent)"}, Count{errs - requests, "in answers"})
		run.Summary = RequestFindings(requests, errs-requests) + "\n\n" + run.Summary
	}
	run.Counts = append(run.Counts, Count{warns, "warnings"}, Count{int64(len(findings)), "groups"})
	if unknown > 0 {
		run.Counts = append(run.Counts, Count{unknown, "to no operation"})
	}
	run.Causes = causesOf(findings, spec.SeverityError, f.Redactor())
	run.Warnings = causesOf(findings, spec.SeverityWarning, f.Redactor())
	if d := f.Dropped(); d > 0 {
		run.Causes = append(run.Causes, Cause{Name: "not-grouped", About: "violations past the limit of groups, counted only", Severity: spec.SeverityError, Count: d, Unit: "violation"})
	}
	run.Coverage = NewCoverage(c, f.Answers())
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
// first, each group a Failure with its example as a curl line.
func causesOf(findings []spec.Finding, severity string, rd *exchange.Redactor) []Cause {
	var out []Cause
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
			if r, ok := spec.RuleNamed(g.Rule); ok {
				about = r.About
			}
			out = append(out, Cause{Name: g.Rule, About: about, Severity: severity, Unit: "violation"})
		}
		out[i].Count += g.Count
		out[i].Failures = append(out[i].Failures, failureOf(g, rd))
	}
	slices.SortStableFunc(out, func(a, b Cause) int { return cmp.Compare(b.Count, a.Count) })
	return out
}

// failureOf renders a group of violations as a Failure: where, its
// message, its example as a curl line and what came back, and the whole
// group as the console shows it.
func failureOf(g spec.Finding, rd *exchange.Redactor) Failure {
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
		got = fmt.Sprintf("%d %s, Content-Type %s", e.Status, http.StatusText(e.Status), exchange.Quote(http.Header(e.Response.Headers).Get("Content-Type")))
		switch {
		case e.Response.Bytes == 0 && e.Response.Body == "":
			got += "\n(empty body)"
		case e.Response.Truncated || len(e.Response.Body) > 600:
			got += fmt.Sprintf("\n%s ... (%d bytes in all)", exchange.Printable(rd.Cut([]byte(e.Response.Body), 600)), e.Response.Bytes)
		default:
			got += "\n" + exchange.Printable([]byte(e.Response.Body))
		}
	}
	var b strings.Builder
	describe(&b, g, "")
	return Failure{Title: title, Request: exchange.Curl(x, rd), Got: got, Problems: []string{g.Message}, Detail: b.String(), Count: g.Count}
}

// count says how many violations a list of groups holds.
func count(gs []spec.Finding) string {
	var n int64
	for _, g := range gs {
		n += g.Count
	}
	return fmt.Sprintf("%d violations in %d groups: %s", n, len(gs), gs[0].Message)
}

// describeAll renders groups, one block each.
func describeAll(gs []spec.Finding) string {
	var b strings.Builder
	for _, g := range gs {
		describe(&b, g, "")
	}
	return b.String()
}

// describe renders one group: what, where, how often, and its example.
func describe(b *strings.Builder, g spec.Finding, indent string) {
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

// oneLine shows the start of a body on one line.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// Findings writes findings as text for a person: a count, then each
// group with its example.
func Findings(w io.Writer, f *spec.Findings) error {
	gs := f.List()
	var errs, warns int64
	for _, g := range gs {
		if g.Severity == spec.SeverityError {
			errs += g.Count
		} else {
			warns += g.Count
		}
	}
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

// RequestFindings says how many violations are in requests, what clients
// sent, and how many in answers: a conformance suite run through the
// proxy sends requests that break the contract on purpose, and a backend
// that answers them as the contract says has broken nothing.
func RequestFindings(requests, answers int64) string {
	are := func(n int64) string {
		if n == 1 {
			return "1 violation is"
		}
		return fmt.Sprintf("%d violations are", n)
	}
	return fmt.Sprintf("%s in requests: what the clients sent breaks the contract (a conformance suite sends such requests on purpose, to see them refused); %s in the answers, by which the backend is judged.",
		are(requests), are(answers))
}
