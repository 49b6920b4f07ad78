package checks

import (
	"fmt"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/conformance"
)

// clients is how many writers the concurrency check starts at once.
const clients = 20

func registerConcurrency(t *conformance.Target) {
	s := t.Inventory()
	ginkgo.Describe(string(conformance.AreaConcurrency), conformance.Labels(conformance.AreaConcurrency, conformance.Mutating), func() {
		ginkgo.It(fmt.Sprintf("%s: %d concurrent writes each echo their own values and one of them wins", s.Update.Name(), clients), func(ctx ginkgo.SpecContext) {
			id := t.RequireMutations()
			orig := t.Protect(ctx, id)
			bodies := make([]conformance.Body, clients)
			for i := range bodies {
				bodies[i] = t.Write(orig, 10+i)
			}
			xs, acked := t.UpdateAtOnce(ctx, id, bodies)
			var written []conformance.Record
			for i, x := range xs {
				if ps, _ := t.Split(t.ResponseProblems(x)); len(ps) > 0 {
					t.FailWith(x, "every response keeps the contract", ps)
				}
				written = append(written, t.ExpectWritten(x, id, bodies[i]))
			}
			t.ExpectStored(ctx, acked, id, t.Timestamps(), written...)
		})
	})
}
