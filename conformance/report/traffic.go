package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/spec"
)

// noOperation is the class of the cases for requests that match no
// operation of the contract.
const noOperation = "(no operation)"

// Traffic is the Run of checked traffic, the validating proxy's or a HAR
// file's: one case per operation of the contract and rule of the Judge
// (the class is the operation, the name the rule), failed where the
// operation had violations of error severity of the rule, skipped where
// the operation saw no traffic, passed otherwise; warnings are the case's
// output. Requests to no operation are cases of their own.
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
	return run
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
