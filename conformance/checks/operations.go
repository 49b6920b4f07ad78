package checks

import (
	"github.com/petstore/inventory-kit/spec/exchange"

	"net/http"
	"slices"
	"sort"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/spec"
)

// registerOperations adds the generic check with the key for every
// operation of the document but the list and the update (README: The
// contract it checks).
func registerOperations(t *conformance.Target) {
	s := t.Inventory()
	ginkgo.Describe(string(conformance.AreaOperations), conformance.Labels(conformance.AreaOperations), func() {
		for _, o := range t.Contract().Operations {
			if o == s.Update || o == s.List {
				continue
			}
			labels := opLabels(t, o, conformance.AreaOperations)
			if writeOp(t, o) {
				ginkgo.It(o.Name()+": with the key and a body valid against its schema, a documented status and a body valid against the contract", labels, func(ctx ginkgo.SpecContext) {
					x := t.Do(ctx, harmlessRequest(ctx, t, o))
					if x.Status >= 200 && x.Status < 300 {
						t.Observe(o.Name()+" with the key and a valid body", "%d: the suite cannot undo what it did (the contract gives no operation for that)", x.Status)
					} else {
						t.Observe(o.Name()+" with the key and a valid body", "%d", x.Status)
					}
					deprecation(t, o, x)
				})
				continue
			}
			request := checkRequest(t, o, labels, func(r conformance.Request) conformance.Request { return r })
			if !o.Shaped() {
				ginkgo.It(o.Name()+": with the key, no 5xx other than 501 (the contract gives no shape)", labels, func(ctx ginkgo.SpecContext) {
					x := t.Do(ctx, request(ctx))
					t.Observe(o.Name()+" with the key", "%d", x.Status)
					deprecation(t, o, x)
				})
				continue
			}
			ginkgo.It(o.Name()+": with the key, a documented status and a body valid against the contract", labels, func(ctx ginkgo.SpecContext) {
				x := t.Do(ctx, request(ctx))
				if want, ok := conformance.ExpectListed(o); ok && len(o.PathParams()) > 0 {
					t.Expect(x, want)
				}
				if t.ReturnsRecord(o) && x.Status == http.StatusOK {
					t.ExpectNone(x, conformance.AsListedProblems(t.Current(ctx), t.DecodeRecord(x)))
				}
				deprecation(t, o, x)
			})
			if len(o.PathParams()) > 0 && conformance.ExpectUnknown.DocumentedBy(o) {
				ginkgo.It(o.Name()+": an unknown but valid identifier gives 404 with an Error body", labels, func(ctx ginkgo.SpecContext) {
					x := t.Do(ctx, conformance.Request{Method: o.Method, Path: conformance.PathFor(o, t.UnknownID(ctx))})
					t.Expect(x, conformance.ExpectUnknown)
				})
			}
		}
	})
}

// deprecation warns when a deprecated operation answers without a
// Deprecation header.
func deprecation(t *conformance.Target, o *spec.Operation, x *conformance.Exchange) {
	if o.Deprecated && x.RespHeader.Get("Deprecation") == "" {
		t.Warn("RFC 9745 section 2", "%s is deprecated but answers without a Deprecation header", o.Name())
	}
}

func registerSilent(t *conformance.Target) {
	s := t.Inventory()
	ginkgo.Describe(string(conformance.AreaSilent), conformance.Labels(conformance.AreaSilent, conformance.Observation), func() {
		ginkgo.It("list order", func(ctx ginkgo.SpecContext) {
			ix, _ := t.List(ctx)
			ids := ix.Order
			asc := sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] < ids[j] })
			desc := sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] > ids[j] })
			switch {
			case len(ids) < 2:
				t.Observe("list order", "fewer than two records")
			case asc:
				t.Observe("list order", "ascending by %s", s.Key)
			case desc:
				t.Observe("list order", "descending by %s", s.Key)
			default:
				t.Observe("list order", "not sorted by %s", s.Key)
			}
		})

		ginkgo.It("charset on Content-Type", func(ctx ginkgo.SpecContext) {
			_, x := t.List(ctx)
			t.Observe("Content-Type of the list", "%s", exchange.Quote(x.RespHeader.Get("Content-Type")))
		})

		challenge := t.Ahead(conformance.Labels(conformance.AreaSilent, conformance.Observation), conformance.Request{Method: s.List.Method, Path: s.List.Path, Auth: conformance.NoAuth})
		ginkgo.It("WWW-Authenticate challenge", func(ctx ginkgo.SpecContext) {
			x := t.Do(ctx, challenge)
			t.Expect(x, conformance.ExpectAuth)
			t.Observe("WWW-Authenticate on 401", "%s", exchange.Quote(x.RespHeader.Get("WWW-Authenticate")))
		})

		ginkgo.Describe("writes", conformance.Labels(conformance.AreaSilent, conformance.Mutating), func() {
			var id int64
			ginkgo.BeforeEach(func() { id = t.RequireMutations() })
			for _, proto := range t.SilentBodies(t.Prototype()) {
				ginkgo.It(proto.Name, func(ctx ginkgo.SpecContext) {
					orig := t.Protect(ctx, id)
					b, ok := conformance.Named(t.SilentBodies(orig), proto.Name)
					if !ok {
						ginkgo.Skip("not applicable: the record lacks the field, and an update cannot take a field away again")
					}
					x := t.Do(ctx, t.Update(id, b.Raw))
					t.Expect(x, conformance.ExpectSilentBody(b))
					if x.Status == http.StatusOK {
						t.Observe(proto.Name, "accepted, stored %s", t.ExpectWritten(x, id, b))
						return
					}
					t.ExpectUnchanged(ctx, x, orig)
					t.Observe(proto.Name, "rejected with 400")
				})
			}

			ginkgo.It("record after an update", func(ctx ginkgo.SpecContext) {
				orig := t.Protect(ctx, id)
				b := t.Write(orig, 4)
				got := t.ExpectWritten(t.Do(ctx, t.Update(id, b.Raw)), id, b)
				var changed []string
				for _, f := range s.Record.Fields {
					if _, set := b.Sets[f.Name]; !set && f.Name != s.Key && !got.EqualExcept(orig, allBut(s, f.Name)) {
						changed = append(changed, f.Name)
					}
				}
				if len(changed) == 0 {
					t.Observe("fields an update does not set", "unchanged")
				} else {
					t.Observe("fields an update does not set", "changed: %v", changed)
				}
			})
		})
	})
}

// allBut lists every field of the record except name.
func allBut(s *spec.Inventory, name string) []string {
	return slices.DeleteFunc(s.Record.Names(), func(n string) bool { return n == name })
}
