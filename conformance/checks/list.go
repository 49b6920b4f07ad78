package checks

import (
	"github.com/petstore/inventory-kit/spec/exchange"

	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/spec"
)

// maxSafeInteger is 2^53-1, the largest integer an IEEE 754 double (a
// JavaScript number) holds exactly.
const maxSafeInteger = 1<<53 - 1

// maxExamples is how many examples a message gives of one thing seen in
// many records; the rest are counted.
const maxExamples = 5

func registerList(t *conformance.Target) {
	s := t.Inventory()
	name := s.List.Name()
	ginkgo.Describe(string(conformance.AreaList), conformance.Labels(conformance.AreaList), func() {
		ginkgo.It(name+": 200 with an array of records valid against the contract", func(ctx ginkgo.SpecContext) {
			x := t.DoShape(ctx, conformance.Request{Method: s.List.Method, Path: s.List.Path})
			t.Expect(x, conformance.ExpectList)
			ix, ps := conformance.ListProblems(ctx, x, s.Key)
			t.ExpectNone(x, ps)
			extra := map[string]bool{}
			for i, id := range ix.Order {
				if i%4096 == 0 && ctx.Err() != nil {
					return
				}
				_ = spec.Members(ix.ByID[id].JSON, func(f, _ []byte) bool {
					if s.Record.Field(string(f)) == nil && len(extra) < 100 {
						extra[string(f)] = true
					}
					return true
				})
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
			ix, x := t.List(ctx)
			t.ExpectNone(x, conformance.UniqueProblems(ix, s.Key))
		})

		ginkgo.It(name+": two lists with no write between them show the same records", func(ctx ginkgo.SpecContext) {
			if why := t.ListBroken(); why != "" {
				conformance.NotJudged(why)
			}
			if why, x := t.Unstable(); why != "" {
				t.FailBecause(spec.RuleUnstable, x, "a record changes only when a request changes it: two lists with no write between them show the same records", []string{why})
			}
		})

		ginkgo.It(name+": identifiers fit a JavaScript number (warning only)", conformance.Labels(conformance.AreaList, conformance.RFC), func(ctx ginkgo.SpecContext) {
			ix, _ := t.List(ctx)
			var past []int64
			for _, id := range ix.Order {
				if id > maxSafeInteger || id < -maxSafeInteger {
					past = append(past, id)
				}
				if ctx.Err() != nil {
					return
				}
			}
			switch {
			case len(past) == 1:
				t.Warn("RFC 8259 section 6", "%s %d exceeds 2^53-1: JavaScript clients lose its last digits", s.Key, past[0])
			case len(past) > 1:
				// One warning for all of them: a list of many such records
				// gives one line, not one per record.
				t.Warn("RFC 8259 section 6", "%d %ss exceed 2^53-1 (such as %s): JavaScript clients lose their last digits", len(past), s.Key, firstOf(past))
			}
		})
	})
}

// firstOf renders the first maxExamples of ids.
func firstOf(ids []int64) string {
	return strings.Join(strings.Fields(strings.Trim(fmt.Sprint(ids[:min(len(ids), maxExamples)]), "[]")), ", ")
}
