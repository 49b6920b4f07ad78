package checks

import (
	"github.com/petstore/inventory-kit/spec/exchange"

	"fmt"
	"net/http"
	"slices"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/conformance"
)

// maxSafeInteger is 2^53-1, the largest integer an IEEE 754 double (a
// JavaScript number) holds exactly.
const maxSafeInteger = 1<<53 - 1

func registerList(t *conformance.Target) {
	s := t.Inventory()
	name := s.List.Name()
	ginkgo.Describe(string(conformance.AreaList), conformance.Labels(conformance.AreaList), func() {
		ginkgo.It(name+": 200 with an array of records valid against the contract", func(ctx ginkgo.SpecContext) {
			x := t.Do(ctx, conformance.Request{Method: s.List.Method, Path: s.List.Path})
			t.ExpectStatus(x, "200 and the list", http.StatusOK)
			rs, err := conformance.DecodeRecordsContext(ctx, x.RespBody)
			if err != nil {
				t.FailBecause(conformance.CauseResponseSchema, x, "a JSON array of records", []string{err.Error()})
			}
			extra := map[string]bool{}
			for i, r := range rs {
				if i%4096 == 0 && ctx.Err() != nil {
					return
				}
				for f := range r {
					if s.Record.Field(f) == nil {
						extra[f] = true
					}
				}
			}
			if len(extra) > 0 {
				names := make([]string, 0, len(extra))
				for f := range extra {
					names = append(names, exchange.Quote(f))
				}
				slices.Sort(names)
				t.Observe("fields of a record beyond the contract's", "%v", names)
			}
		})

		ginkgo.It(name+": identifiers are unique", func(ctx ginkgo.SpecContext) {
			ix, _, x := t.List(ctx)
			var ps []string
			for _, id := range ix.Dups {
				ps = append(ps, fmt.Sprintf("%s %d is listed more than once", s.Key, id))
			}
			ps = append(ps, ix.Bad...)
			if len(ps) > 0 {
				t.FailBecause(conformance.CauseDuplicateIDs, x, "one record per "+s.Key, ps)
			}
		})

		ginkgo.It(name+": identifiers fit a JavaScript number (warning only)", conformance.Labels(conformance.AreaList, conformance.RFC), func(ctx ginkgo.SpecContext) {
			ix, _, _ := t.List(ctx)
			for _, id := range ix.Order {
				if id > maxSafeInteger || id < -maxSafeInteger {
					t.Warn("RFC 8259 section 6", "%s %d exceeds 2^53-1: JavaScript clients lose its last digits", s.Key, id)
				}
				if ctx.Err() != nil {
					return
				}
			}
		})
	})
}
