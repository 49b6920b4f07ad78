package conformance

import (
	"fmt"
	"net/http"
	"sort"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("deprecated and undocumented shapes", Label("deprecated"), func() {
	for _, o := range operations() {
		if shapeGiven(o) {
			continue
		}
		It(opName(o)+": with the key, no 5xx other than 501", func(ctx SpecContext) {
			x := do(ctx, harmlessRequest(ctx, o))
			if x.Status >= 500 && x.Status != http.StatusNotImplemented {
				failWith(x, "no 5xx other than 501", []string{fmt.Sprintf("status %d", x.Status)})
			}
			observe(opName(o)+" with the key", "%d", x.Status)
			if o.Deprecated && x.RespHead.Get("Deprecation") == "" {
				warn("%s is deprecated but answers without a Deprecation header (RFC 9745)", opName(o))
			}
		})
	}
})

var _ = Describe("where the contract is silent", Label("observation"), func() {
	It("list order", func(ctx SpecContext) {
		items, _ := listItems(ctx)
		asc := sort.SliceIsSorted(items, func(i, j int) bool { return items[i].PetID < items[j].PetID })
		desc := sort.SliceIsSorted(items, func(i, j int) bool { return items[i].PetID > items[j].PetID })
		switch {
		case len(items) < 2:
			observe("list order", "fewer than two items")
		case asc:
			observe("list order", "ascending by petId")
		case desc:
			observe("list order", "descending by petId")
		default:
			observe("list order", "not sorted by petId")
		}
	})

	It("charset on Content-Type", func(ctx SpecContext) {
		_, x := listItems(ctx)
		observe("Content-Type of the list", "%q", x.RespHead.Get("Content-Type"))
	})

	It("WWW-Authenticate challenge", func(ctx SpecContext) {
		x := do(ctx, Request{Method: http.MethodGet, Path: "/inventory", Auth: NoAuth})
		expectStatus(x, "401", http.StatusUnauthorized)
		observe("WWW-Authenticate on 401", "%q", x.RespHead.Get("WWW-Authenticate"))
	})

	Describe("writes", Label("mutating"), func() {
		var petID int64
		BeforeEach(func() { petID = requireMutations() })

		for _, c := range []struct{ what, body string }{
			{"negative quantity -1", `{"quantity": -1}`},
			{"quantity 2147483648 (past int32)", `{"quantity": 2147483648}`},
			{"quantity 9007199254740993 (past 2^53)", `{"quantity": 9007199254740993}`},
			{"quantity 5.0", `{"quantity": 5.0}`},
			{"an unknown extra field", `{"quantity": 6, "note": "conformance"}`},
			{"duplicate keys", `{"quantity": 3, "quantity": 4}`},
		} {
			It(c.what, func(ctx SpecContext) {
				orig := protect(ctx, petID)
				x := do(ctx, Request{Method: http.MethodPatch, Path: petPath(petID), Body: []byte(c.body)})
				expectStatus(x, "200 or 400", http.StatusOK, http.StatusBadRequest)
				if x.Status == http.StatusOK {
					observe(c.what, "accepted, stored quantity %d", decodeItem(x).Quantity)
					return
				}
				expectUnchanged(ctx, x, orig)
				observe(c.what, "rejected with 400")
			})
		}

		It("status after an update", func(ctx SpecContext) {
			orig := protect(ctx, petID)
			x := do(ctx, patch(petID, newQuantity(orig.Quantity)))
			expectStatus(x, "200", http.StatusOK)
			if it := decodeItem(x); it.Status == orig.Status {
				observe("status after an update", "unchanged (%s)", it.Status)
			} else {
				observe("status after an update", "changed from %s to %s", orig.Status, it.Status)
			}
		})
	})
})
