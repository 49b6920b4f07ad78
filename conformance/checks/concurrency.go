package checks

import (
	"fmt"
	"sync"
	"time"

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
			xs := make([]*conformance.Exchange, clients)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range xs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					r := t.Update(id, bodies[i].Raw)
					r.MaxBytes = conformance.ItemMaxBytes // one record each
					xs[i] = t.Send(ctx, r)
				}()
			}
			close(start)
			wg.Wait()
			var written []conformance.Record
			for i, x := range xs {
				if ps, _ := t.Split(t.ResponseProblems(x)); len(ps) > 0 {
					t.FailWith(x, "every response keeps the contract", ps)
				}
				written = append(written, t.ExpectWritten(x, id, bodies[i]))
			}
			ix, lx := t.List(ctx)
			var acked time.Time
			for _, x := range xs {
				if end := x.Time.Add(x.Elapsed); end.After(acked) {
					acked = end
				}
			}
			t.ExpectNone(lx, t.StoredProblems(ctx, acked, lx, ix, id, t.Timestamps(), written...))
		})
	})
}
