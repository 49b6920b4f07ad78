package checks

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/spec"
)

// harmlessRequest builds a request for o that changes nothing even if the
// target wrongly accepts it: the update carries the record's own values, a
// read has no body. Another write carries a body valid against its schema,
// which a target that wrongly accepts the request would act on: its checks
// are labelled mutating (writeOp) and run only with --allow-mutations.
func harmlessRequest(ctx context.Context, t *conformance.Target, o *spec.Operation) conformance.Request {
	ginkgo.GinkgoHelper()
	r := conformance.Request{Method: o.Method, Path: o.Path}
	if writeOp(t, o) {
		id := t.RequireMutations()
		if o.Body != nil {
			b, ok := t.ValidBody(o, 0)
			if !ok {
				ginkgo.Skip("no body the suite can build is valid against " + o.Name() + "'s schema")
			}
			r.Body = b
		}
		if len(o.PathParams()) > 0 {
			r.Path = conformance.PathFor(o, id)
			if slices.Contains(o.PathParams(), t.Inventory().Key) {
				t.Protect(ctx, id)
			}
		}
		return r
	}
	if len(o.PathParams()) > 0 {
		r.Path = conformance.PathFor(o, t.RequirePet())
	}
	if o == t.Inventory().Update {
		r.Body = t.Harmless(t.Current(ctx))
	}
	return r
}

// readRequest is the request harmlessRequest builds for o where o is no
// write other than the update, built from the records as first listed,
// when the checks are registered: a check that only reads sends it ahead
// (Client.Ahead). It is false where it cannot be built then: a write, or
// no listed record to address.
func readRequest(t *conformance.Target, o *spec.Operation) (conformance.Request, bool) {
	r := conformance.Request{Method: o.Method, Path: o.Path}
	if writeOp(t, o) {
		return r, false
	}
	ix, id := t.Listed(), t.PetID()
	if len(o.PathParams()) > 0 || o == t.Inventory().Update {
		if ix == nil || id == 0 {
			return r, false
		}
		if _, ok := ix.ByID[id]; !ok {
			return r, false
		}
	}
	if len(o.PathParams()) > 0 {
		r.Path = conformance.PathFor(o, id)
	}
	if o == t.Inventory().Update {
		r.Body = t.Harmless(ix.ByID[id])
	}
	return r, true
}

// checkRequest returns what a check of o labelled labels sends: edit of
// readRequest's request, sent ahead, where that can be built now; else
// edit of harmlessRequest's, built when the check runs.
func checkRequest(t *conformance.Target, o *spec.Operation, labels ginkgo.Labels, edit func(conformance.Request) conformance.Request) func(context.Context) conformance.Request {
	if r, ok := readRequest(t, o); ok {
		r = t.Ahead(labels, edit(r))
		return func(context.Context) conformance.Request { return r }
	}
	return func(ctx context.Context) conformance.Request { return edit(harmlessRequest(ctx, t, o)) }
}

// writeOp reports whether o is a write other than the update: the suite
// knows no body for it that changes nothing.
func writeOp(t *conformance.Target, o *spec.Operation) bool {
	return o.Writes() && o != t.Inventory().Update
}

// opLabels labels a check of o in area a: deprecated where o is, mutating
// where o is another write, plus traits.
func opLabels(t *conformance.Target, o *spec.Operation, a conformance.Area, traits ...conformance.Trait) ginkgo.Labels {
	if o.Deprecated {
		traits = append(traits, conformance.Deprecated)
	}
	if writeOp(t, o) {
		traits = append(traits, conformance.Mutating)
	}
	return conformance.Labels(a, traits...)
}

func registerAuth(t *conformance.Target) {
	s := t.Inventory()
	ginkgo.Describe(string(conformance.AreaAuth), conformance.Labels(conformance.AreaAuth), func() {
		for _, o := range t.Contract().Operations {
			for _, c := range conformance.BadCredentials {
				labels := opLabels(t, o, conformance.AreaAuth)
				request := checkRequest(t, o, labels, func(r conformance.Request) conformance.Request {
					r.Auth = c.Auth(t.Key())
					return r
				})
				ginkgo.It(o.Name()+": "+c.Name+" gives 401 with an Error body", labels, func(ctx ginkgo.SpecContext) {
					x := t.Do(ctx, request(ctx))
					t.Expect(x, conformance.ExpectAuth)
					if x.RespHeader.Get("WWW-Authenticate") == "" {
						t.Warn("RFC 9110 section 11.6.1", "%s: 401 without a WWW-Authenticate header", o.Name())
					}
				})
			}
			labels := opLabels(t, o, conformance.AreaAuth, conformance.KeyInURL)
			request := checkRequest(t, o, labels, func(r conformance.Request) conformance.Request {
				key := t.Key()
				r.Auth = conformance.NoAuth
				r.Path += "?api_key=" + key + "&access_token=" + key
				return r
			})
			ginkgo.It(o.Name()+": the key only in the query string gives 401 with an Error body", labels, func(ctx ginkgo.SpecContext) {
				x := t.Do(ctx, request(ctx))
				t.Expect(x, conformance.ExpectAuth)
			})
		}

		rfc := conformance.Labels(conformance.AreaAuth, conformance.RFC)
		lower := t.Ahead(rfc, conformance.Request{Method: s.List.Method, Path: s.List.Path, Auth: "bearer " + t.Key()})
		ginkgo.It(s.List.Name()+": the scheme word is case-insensitive (bearer KEY)", rfc, func(ctx ginkgo.SpecContext) {
			// Only a warning: the rules every response keeps are the other
			// checks' business.
			x := t.Send(ctx, lower)
			if x.Status != http.StatusOK {
				t.Warn("RFC 9110 section 11.1", "%s: the scheme word \"bearer\" in lower case answered %d: auth schemes are case-insensitive", s.List.Name(), x.Status)
			}
		})

		ginkgo.It(s.Update.Name()+": auth precedes lookup (no key and an unknown record gives 401, not 404)", func(ctx ginkgo.SpecContext) {
			id := t.UnknownID(ctx)
			r := t.Update(id, t.Harmless(t.Current(ctx)))
			r.Auth = conformance.NoAuth
			x := t.Do(ctx, r)
			t.Expect(x, conformance.ExpectAuth)
		})

		badBody := func(cur conformance.Record) conformance.Request {
			body := t.Harmless(cur)
			return conformance.Request{Method: s.Update.Method, Path: t.ItemPath(strconv.FormatInt(cur.ID, 10)), Auth: conformance.NoAuth, Body: body[:len(body)-1]}
		}
		var ahead conformance.Request
		if _, ok := readRequest(t, s.Update); ok {
			ahead = t.Ahead(conformance.Labels(conformance.AreaAuth), badBody(t.Listed().ByID[t.PetID()]))
		}
		ginkgo.It(s.Update.Name()+": auth precedes validation (no key and a malformed body gives 401, not 400)", func(ctx ginkgo.SpecContext) {
			r := ahead
			if r.Method == "" {
				r = badBody(t.Current(ctx))
			}
			x := t.Do(ctx, r)
			t.Expect(x, conformance.ExpectAuth)
		})
	})
}
