package conformance

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/spec"
)

// operations lists the contract's operations when the spec tree is built.
func operations() []*spec.Operation {
	c, err := spec.Shared()
	if err != nil {
		panic(err)
	}
	return c.Operations
}

// harmlessRequest builds a request for o that changes nothing even if the
// target wrongly accepts it: a PATCH carries the pet's current quantity.
func harmlessRequest(ctx context.Context, o *spec.Operation) Request {
	GinkgoHelper()
	r := Request{Method: o.Method, Path: o.Path}
	if strings.Contains(o.Path, "{petId}") {
		r.Path = strings.ReplaceAll(o.Path, "{petId}", strconv.FormatInt(requirePet(), 10))
	}
	if o.Method == http.MethodPatch {
		r.Body = quantityBody(currentItem(ctx).Quantity)
	}
	return r
}

// A badCredential is one way of failing to authenticate.
type badCredential struct {
	name  string
	auth  func(key string) string // the Authorization header
	query bool                    // the key goes in the query string instead
}

var badCredentials = []badCredential{
	{name: "no Authorization header", auth: func(string) string { return NoAuth }},
	{name: "Bearer without a token", auth: func(string) string { return "Bearer" }},
	{name: "an empty Authorization header", auth: func(string) string { return EmptyAuth }},
	{name: "an unknown key", auth: func(string) string { return "Bearer conformance-unknown-key-0f9e8d7c" }},
	{name: "another scheme (Basic with the key)", auth: func(key string) string { return "Basic " + key }},
	{name: "the key only in the query string", auth: func(string) string { return NoAuth }, query: true},
}

var _ = Describe("auth", Label("auth"), func() {
	for _, o := range operations() {
		for _, bc := range badCredentials {
			labels := Label()
			if bc.query {
				labels = Label("key-in-url") // the key may reach access logs
			}
			It(opName(o)+": "+bc.name+" gives 401 with an Error body", labels, func(ctx SpecContext) {
				t := target()
				r := harmlessRequest(ctx, o)
				r.Auth = bc.auth(t.cfg.APIKey)
				if bc.query {
					r.Path += "?api_key=" + t.cfg.APIKey + "&access_token=" + t.cfg.APIKey
				}
				x := do(ctx, r)
				expectStatus(x, "401 with an Error body when the credential is missing or invalid", http.StatusUnauthorized)
				if x.RespHead.Get("WWW-Authenticate") == "" {
					warn("%s: 401 without a WWW-Authenticate header", opName(o))
				}
			})
		}
	}

	It("listInventory: the scheme word is case-insensitive (bearer KEY is accepted)", func(ctx SpecContext) {
		x := do(ctx, Request{Method: http.MethodGet, Path: "/inventory", Auth: "bearer " + target().cfg.APIKey})
		expectStatus(x, "200: HTTP auth schemes are case-insensitive (RFC 9110 section 11.1)", http.StatusOK)
	})

	It("updateInventory: auth precedes lookup (no key and an unknown pet gives 401, not 404)", func(ctx SpecContext) {
		id := unknownPetID(ctx)
		x := do(ctx, Request{Method: http.MethodPatch, Path: petPath(id), Auth: NoAuth, Body: quantityBody(1)})
		expectStatus(x, "401: the credential is checked before the pet is looked up", http.StatusUnauthorized)
	})

	It("updateInventory: auth precedes validation (no key and a malformed body gives 401, not 400)", func(ctx SpecContext) {
		x := do(ctx, Request{Method: http.MethodPatch, Path: petPath(requirePet()), Auth: NoAuth, Body: []byte(`{"quantity":`)})
		expectStatus(x, "401: the credential is checked before the body", http.StatusUnauthorized)
	})
})
