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
				ginkgo.It(o.Name()+": "+c.Name+" gives 401 with an Error body", opLabels(t, o, conformance.AreaAuth), func(ctx ginkgo.SpecContext) {
					r := harmlessRequest(ctx, t, o)
					r.Auth = c.Auth(t.Config().APIKey)
					x := t.Do(ctx, r)
					t.ExpectStatus(x, "401 with an Error body when the credential is missing or invalid", http.StatusUnauthorized)
					if x.RespHeader.Get("WWW-Authenticate") == "" {
						t.Warn("RFC 9110 section 11.6.1", "%s: 401 without a WWW-Authenticate header", o.Name())
					}
				})
			}
			ginkgo.It(o.Name()+": the key only in the query string gives 401 with an Error body", opLabels(t, o, conformance.AreaAuth, conformance.KeyInURL), func(ctx ginkgo.SpecContext) {
				r := harmlessRequest(ctx, t, o)
				key := t.Config().APIKey
				r.Auth = conformance.NoAuth
				r.Path += "?api_key=" + key + "&access_token=" + key
				x := t.Do(ctx, r)
				t.ExpectStatus(x, "401 with an Error body when the credential is missing", http.StatusUnauthorized)
			})
		}

		ginkgo.It(s.List.Name()+": the scheme word is case-insensitive (bearer KEY)", conformance.Labels(conformance.AreaAuth, conformance.RFC), func(ctx ginkgo.SpecContext) {
			// Only a warning: the rules every response keeps are the other
			// checks' business.
			x := t.Send(ctx, conformance.Request{Method: s.List.Method, Path: s.List.Path, Auth: "bearer " + t.Config().APIKey})
			if x.Status != http.StatusOK {
				t.Warn("RFC 9110 section 11.1", "%s: the scheme word \"bearer\" in lower case answered %d: auth schemes are case-insensitive", s.List.Name(), x.Status)
			}
		})

		ginkgo.It(s.Update.Name()+": auth precedes lookup (no key and an unknown record gives 401, not 404)", func(ctx ginkgo.SpecContext) {
			id := t.UnknownID(ctx)
			r := t.Update(id, t.Harmless(t.Current(ctx)))
			r.Auth = conformance.NoAuth
			x := t.Do(ctx, r)
			t.ExpectStatus(x, "401: the credential is checked before the record is looked up", http.StatusUnauthorized)
		})

		ginkgo.It(s.Update.Name()+": auth precedes validation (no key and a malformed body gives 401, not 400)", func(ctx ginkgo.SpecContext) {
			body := t.Harmless(t.Current(ctx))
			r := conformance.Request{Method: s.Update.Method, Path: t.ItemPath(strconv.FormatInt(t.RequirePet(), 10)), Auth: conformance.NoAuth, Body: body[:len(body)-1]}
			x := t.Do(ctx, r)
			t.ExpectStatus(x, "401: the credential is checked before the body", http.StatusUnauthorized)
		})
	})
}
