package report

import (
	"slices"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// redacted returns a copy of r with every secret rd knows hidden in every
// text people read: the renderers escape that copy for their format, so
// no escaping can keep a key from being found, and no key, once hidden,
// can break a document.
func (r Run) redacted(rd *exchange.Redactor) Run {
	s := rd.String
	all := func(ss []string) []string {
		out := make([]string, len(ss))
		for i, v := range ss {
			out[i] = s(v)
		}
		return out
	}
	props := func(ps []Property) []Property {
		out := make([]Property, len(ps))
		for i, p := range ps {
			out[i] = Property{s(p.Name), s(p.Value)}
		}
		return out
	}
	causes := func(cs []Cause) []Cause {
		out := make([]Cause, len(cs))
		for i, c := range cs {
			c.Name, c.About, c.Unit = s(c.Name), s(c.About), s(c.Unit)
			c.Failures = slices.Clone(c.Failures)
			for j, f := range c.Failures {
				c.Failures[j] = Failure{Title: s(f.Title), Want: s(f.Want), Request: s(f.Request), Got: s(f.Got),
					Problems: all(f.Problems), Detail: s(f.Detail), Count: f.Count}
			}
			out[i] = c
		}
		return out
	}
	out := r
	out.Name, out.Summary, out.CannotRun = s(r.Name), s(r.Summary), s(r.CannotRun)
	out.Facts = props(r.Facts)
	out.Properties = props(r.Properties)
	out.Counts = slices.Clone(r.Counts)
	for i, c := range out.Counts {
		out.Counts[i].Label = s(c.Label)
	}
	out.Causes, out.Warnings = causes(r.Causes), causes(r.Warnings)
	out.Observations = all(r.Observations)
	out.LeftChanged = make([]Changed, len(r.LeftChanged))
	for i, c := range r.LeftChanged {
		out.LeftChanged[i] = Changed{Record: s(c.Record), Found: s(c.Found), Wanted: s(c.Wanted), Why: s(c.Why)}
	}
	out.Notes = make([]Note, len(r.Notes))
	for i, n := range r.Notes {
		out.Notes[i] = Note{Severity: n.Severity, Title: s(n.Title), Lines: all(n.Lines)}
	}
	if r.Coverage != nil {
		c := *r.Coverage
		c.Operations = slices.Clone(c.Operations)
		for i, op := range c.Operations {
			op.Name, op.Method, op.Path = s(op.Name), s(op.Method), s(op.Path)
			op.Responses = slices.Clone(op.Responses)
			for j, rc := range op.Responses {
				op.Responses[j].Code, op.Responses[j].Why = s(rc.Code), s(rc.Why)
			}
			c.Operations[i] = op
		}
		out.Coverage = &c
	}
	return out
}
