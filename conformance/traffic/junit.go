package traffic

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// noOperation is the class of the JUnit test case for requests that match
// no operation of the contract.
const noOperation = "(no operation)"

// The JUnit XML shapes, as CI systems read them.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Timestamp  string          `xml:"timestamp,attr"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Classname string        `xml:"classname,attr"`
		Name      string        `xml:"name,attr"`
		Failure   *junitFailure `xml:"failure"`
		Skipped   *junitSkipped `xml:"skipped"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	junitSkipped struct {
		Message string `xml:"message,attr"`
	}
)

// WriteJUnit writes the findings as a JUnit XML report named suite: one
// test case per operation of the contract and rule (the class is the
// operation, the name the rule), failed where the operation had violations
// of error severity of the rule, skipped where the operation saw no
// traffic, passed otherwise; warnings are the case's output. Requests to
// no operation are one more case.
func (f *Findings) WriteJUnit(w io.Writer, suite string) error {
	findings := f.List()
	byOp, unknown := f.Traffic()
	s := junitSuite{Name: suite, Timestamp: time.Now().UTC().Format(time.RFC3339)}
	var exchanges int64
	for _, n := range byOp {
		exchanges += n
	}
	s.Properties = []junitProperty{
		{"exchanges", fmt.Sprint(exchanges + unknown)},
		{"exchanges without an operation", fmt.Sprint(unknown)},
		{"groups", fmt.Sprint(len(findings))},
	}
	if d := f.Dropped(); d > 0 {
		s.Properties = append(s.Properties, junitProperty{"violations not grouped (too many groups)", fmt.Sprint(d)})
	}
	classOf := func(g Finding) string {
		if _, ok := byOp[g.Operation]; ok {
			return g.Operation
		}
		return noOperation
	}
	addCase := func(class, rule string, seen bool) {
		c := junitCase{Classname: class, Name: rule}
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
			c.Failure = &junitFailure{Message: summary(errs), Type: rule, Text: describeAll(errs)}
		case !seen:
			c.Skipped = &junitSkipped{Message: "no traffic to this operation"}
		}
		if len(warns) > 0 {
			c.SystemOut = describeAll(warns)
		}
		s.Cases = append(s.Cases, c)
	}
	for _, op := range f.contract.Operations {
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
	for _, c := range s.Cases {
		s.Tests++
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	doc := junitSuites{Name: suite, Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// summary says how many violations a list of groups holds.
func summary(gs []Finding) string {
	var n int64
	for _, g := range gs {
		n += g.Count
	}
	return fmt.Sprintf("%d violations in %d groups: %s", n, len(gs), gs[0].Message)
}

// describeAll renders groups for a report, one block each.
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

// oneLine shows the start of a body on one line.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// WriteText writes the findings as text for a person: a count, then each
// group with its example.
func (f *Findings) WriteText(w io.Writer) error {
	gs := f.List()
	var errs, warns int64
	for _, g := range gs {
		if g.Severity == SeverityError {
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
