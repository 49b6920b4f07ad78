package checks

import (
	"fmt"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/spec"
)

func registerUpdate(t *conformance.Target) {
	s := t.Inventory()
	name := s.Update.Name()
	ginkgo.Describe(string(conformance.AreaUpdate), conformance.Labels(conformance.AreaUpdate, conformance.Mutating), func() {
		var id int64
		ginkgo.BeforeEach(func() { id = t.RequireMutations() })

		ginkgo.It(name+": the answer has the same identifier and the values sent", func(ctx ginkgo.SpecContext) {
			orig := t.Protect(ctx, id)
			b := t.Write(orig, 0)
			x := t.Do(ctx, t.Update(id, b.Raw))
			t.ExpectWritten(x, id, b)
		})

		ginkgo.It(name+": a following list shows the values written", func(ctx ginkgo.SpecContext) {
			orig := t.Protect(ctx, id)
			b := t.Write(orig, 1)
			x := t.Do(ctx, t.Update(id, b.Raw))
			written := t.ExpectWritten(x, id, b)
			t.ExpectStored(ctx, x.Time.Add(x.Elapsed), id, nil, written)
		})

		ginkgo.It(name+": the same update twice gives the same result", func(ctx ginkgo.SpecContext) {
			orig := t.Protect(ctx, id)
			b := t.Write(orig, 2)
			first := t.ExpectWritten(t.Do(ctx, t.Update(id, b.Raw)), id, b)
			x := t.Do(ctx, t.Update(id, b.Raw))
			second := t.ExpectWritten(x, id, b)
			skip := t.Timestamps()
			if first.EqualExcept(second, skip) {
				// The answers agree: the list shows the record as both
				// answered it.
				t.ExpectStored(ctx, x.Time.Add(x.Elapsed), id, skip, second)
			} else {
				t.List(ctx) // read and judged all the same
			}
			t.ExpectNone(x, conformance.IdempotentProblems(first, second, skip))
		})

		ginkgo.It(name+": no other record changes", func(ctx ginkgo.SpecContext) {
			before, _ := t.List(ctx)
			orig := t.Protect(ctx, id)
			b := t.Write(orig, 3)
			x := t.Do(ctx, t.Update(id, b.Raw))
			t.ExpectWritten(x, id, b)
			after, _ := t.List(ctx)
			var ps []string
			for _, other := range before.Order {
				if ctx.Err() != nil {
					return
				}
				if other == id {
					continue
				}
				if a, ok := after.ByID[other]; !ok || !a.Equal(before.ByID[other]) {
					ps = append(ps, fmt.Sprintf("%s %d was %s, now %s", s.Key, other, before.ByID[other], a))
				}
			}
			if len(ps) > 0 {
				t.FailBecause(spec.RuleOtherChanged, x, fmt.Sprintf("only %s %d changes", s.Key, id), ps)
			}
		})

		ginkgo.It(name+": an unknown but valid identifier gives 404 with an Error body", func(ctx ginkgo.SpecContext) {
			unknown := t.UnknownID(ctx)
			x := t.Do(ctx, t.Update(unknown, t.Harmless(t.Current(ctx))))
			t.Expect(x, conformance.ExpectUnknown)
		})

		for _, proto := range t.AtBounds(t.Prototype()) {
			ginkgo.It(name+": "+proto.Name+" is accepted and stored", func(ctx ginkgo.SpecContext) {
				orig := t.Protect(ctx, id)
				body, ok := conformance.Named(t.AtBounds(orig), proto.Name)
				if !ok {
					ginkgo.Skip("not applicable: the record lacks the field, and an update cannot take a field away again")
				}
				x := t.Do(ctx, t.Update(id, body.Raw))
				written := t.ExpectWritten(x, id, body)
				t.ExpectStored(ctx, x.Time.Add(x.Elapsed), id, nil, written)
			})
		}
	})
}
