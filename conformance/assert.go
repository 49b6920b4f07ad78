package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// do sends r and fails the spec unless the response keeps the rules every
// response keeps (see responseProblems). tolerated lists statuses the
// calling check accepts beyond the documented ones.
func do(ctx context.Context, r Request, tolerated ...int) *Exchange {
	GinkgoHelper()
	t := target()
	x := t.send(ctx, r)
	if ps := t.responseProblems(x, tolerated...); len(ps) > 0 {
		failWith(x, "every response: a documented status, no 5xx, application/json, a body valid against the contract, an Error body on every error", ps)
	}
	return x
}

// expectStatus fails the spec unless x's status is one of want.
func expectStatus(x *Exchange, why string, want ...int) {
	GinkgoHelper()
	Expect(x.Status).To(BeElementOf(want), x.Want("%s", why))
}

// failWith fails the spec with the exchange and the problems found.
func failWith(x *Exchange, want string, problems []string) {
	GinkgoHelper()
	Fail(x.Want("%s", want) + "problems:\n  - " + x.redact(strings.Join(problems, "\n  - ")))
}

// listItems lists the inventory with the key and decodes it, failing the
// spec if the answer is not a valid list.
func listItems(ctx context.Context) ([]Item, *Exchange) {
	GinkgoHelper()
	x := do(ctx, Request{Method: http.MethodGet, Path: "/inventory"})
	expectStatus(x, "GET /inventory with the key: 200 and the list", http.StatusOK)
	var items []Item
	if err := json.Unmarshal(x.RespBody, &items); err != nil {
		failWith(x, "a JSON array of InventoryItem", []string{err.Error()})
	}
	return items, x
}

// decodeItem decodes an InventoryItem from x's body, failing the spec if it
// is not one.
func decodeItem(x *Exchange) Item {
	GinkgoHelper()
	var it Item
	d := json.NewDecoder(bytes.NewReader(x.RespBody))
	if err := d.Decode(&it); err != nil {
		failWith(x, "an InventoryItem", []string{err.Error()})
	}
	return it
}

// requirePet skips the spec when the target lists no pet to address.
func requirePet() int64 {
	id := target().petID
	if id == 0 {
		Skip("the target lists no pet to address")
	}
	return id
}

// requireMutations skips the spec unless writes are allowed.
func requireMutations() int64 {
	if !target().cfg.AllowMutations {
		Skip("mutating check: skipped without --allow-mutations (no data was changed)")
	}
	return requirePet()
}

// currentItem returns the record of the target's pet as listed now.
func currentItem(ctx context.Context) Item {
	GinkgoHelper()
	id := requirePet()
	items, x := listItems(ctx)
	it, ok := findItem(items, id)
	if !ok {
		failWith(x, fmt.Sprintf("petId %d in the list", id), []string{"not listed"})
	}
	return it
}

// unknownPetID returns a valid int64 petId the target does not list.
func unknownPetID(ctx context.Context) int64 {
	GinkgoHelper()
	items, _ := listItems(ctx)
	for id := int64(math.MaxInt64 - 1000); ; id++ {
		if _, ok := findItem(items, id); !ok {
			return id
		}
	}
}

// expectUnchanged fails the spec unless the pet's record equals want.
func expectUnchanged(ctx context.Context, after *Exchange, want Item) {
	GinkgoHelper()
	items, _ := listItems(ctx)
	if got, ok := findItem(items, want.PetID); !ok || got != want {
		failWith(after, "a rejected request leaves the stored record unchanged",
			[]string{fmt.Sprintf("petId %d was %+v before, the list now shows %+v", want.PetID, want, got)})
	}
}
