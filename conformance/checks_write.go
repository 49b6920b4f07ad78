package conformance

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// newQuantity picks a quantity different from q for a write.
func newQuantity(q int64) int64 {
	if q == 7 {
		return 8
	}
	return 7
}

// patch builds the PATCH that sets the pet's quantity.
func patch(petID, q int64) Request {
	return Request{Method: http.MethodPatch, Path: petPath(petID), Body: quantityBody(q)}
}

var _ = Describe("update", Label("update", "mutating"), func() {
	var petID int64
	BeforeEach(func() { petID = requireMutations() })

	It("updateInventory: the answer has the same petId, the sent quantity and a valid status", func(ctx SpecContext) {
		orig := protect(ctx, petID)
		q := newQuantity(orig.Quantity)
		x := do(ctx, patch(petID, q))
		expectStatus(x, "200 and the updated InventoryItem", http.StatusOK)
		it := decodeItem(x)
		if it.PetID != petID || it.Quantity != q || !validStatus(it.Status) {
			failWith(x, fmt.Sprintf("petId %d, quantity %d and one of available, pending, sold", petID, q), []string{fmt.Sprintf("got %+v", it)})
		}
	})

	It("updateInventory: a following list shows the new quantity", func(ctx SpecContext) {
		var listed Item
		orig := protect(ctx, petID)
		q := newQuantity(orig.Quantity)
		x := do(ctx, patch(petID, q))
		expectStatus(x, "200", http.StatusOK)
		items, lx := listItems(ctx)
		Expect(items).To(ContainElement(HaveField("PetID", petID), &listed), lx.Want("petId %d listed", petID))
		Expect(listed.Quantity).To(Equal(q), lx.Want("after PATCH quantity %d, the list shows petId %d with quantity %d", q, petID, q))
	})

	It("updateInventory: the same PATCH twice gives the same result", func(ctx SpecContext) {
		orig := protect(ctx, petID)
		q := newQuantity(orig.Quantity)
		first := do(ctx, patch(petID, q))
		expectStatus(first, "200", http.StatusOK)
		second := do(ctx, patch(petID, q))
		expectStatus(second, "200", http.StatusOK)
		a, b := decodeItem(first), decodeItem(second)
		items, _ := listItems(ctx)
		listed, _ := findItem(items, petID)
		if a != b || listed != b {
			failWith(second, "a PATCH is idempotent: the second identical request gives the same record", []string{fmt.Sprintf("first %+v, second %+v, listed %+v", a, b, listed)})
		}
	})

	It("updateInventory: no other pet changes", func(ctx SpecContext) {
		before, _ := listItems(ctx)
		orig := protect(ctx, petID)
		x := do(ctx, patch(petID, newQuantity(orig.Quantity)))
		expectStatus(x, "200", http.StatusOK)
		after, _ := listItems(ctx)
		var ps []string
		for _, b := range before {
			if b.PetID == petID {
				continue
			}
			if a, ok := findItem(after, b.PetID); !ok || a != b {
				ps = append(ps, fmt.Sprintf("petId %d was %+v, now %+v", b.PetID, b, a))
			}
		}
		if len(ps) > 0 {
			failWith(x, fmt.Sprintf("only petId %d changes", petID), ps)
		}
	})

	It("updateInventory: an unknown but valid int64 petId gives 404 with an Error body", func(ctx SpecContext) {
		id := unknownPetID(ctx)
		x := do(ctx, patch(id, 1))
		expectStatus(x, "404 with an Error body for a pet that does not exist", http.StatusNotFound)
	})
})

// validStatus reports whether s is one of the PetStatus values.
func validStatus(s string) bool { return s == "available" || s == "pending" || s == "sold" }

// badBodies are request bodies the update must answer with 400.
var badBodies = []struct{ name, body string }{
	{"no body", ""},
	{"an empty object {}", `{}`},
	{"malformed JSON", `{"quantity": 5`},
	{"null", `null`},
	{"an array", `[{"quantity": 5}]`},
	{"quantity as a string", `{"quantity": "5"}`},
	{"a fractional quantity", `{"quantity": 5.5}`},
	{"a boolean quantity", `{"quantity": true}`},
	{"a null quantity", `{"quantity": null}`},
	{"a quantity too large for int64", `{"quantity": 9223372036854775808}`},
}

var _ = Describe("bad input", Label("bad-input"), func() {
	Describe("bodies", Label("mutating"), func() {
		var petID int64
		BeforeEach(func() { petID = requireMutations() })
		for _, bb := range badBodies {
			It("updateInventory: "+bb.name+" gives 400 and leaves the record unchanged", func(ctx SpecContext) {
				orig := protect(ctx, petID)
				x := do(ctx, Request{Method: http.MethodPatch, Path: petPath(petID), Body: []byte(bb.body)})
				expectStatus(x, "400 with an Error body: the body is missing required fields or has invalid values", http.StatusBadRequest)
				expectUnchanged(ctx, x, orig)
			})
		}
	})

	// These cannot address any pet, or carry the pet's current quantity,
	// so a target that wrongly accepts them still changes nothing.
	for _, id := range []string{"abc", "1.5", "9223372036854775808"} {
		It("updateInventory: petId "+id+" gives 400", func(ctx SpecContext) {
			orig := currentItem(ctx)
			x := do(ctx, Request{Method: http.MethodPatch, Path: "/inventory/" + id, Body: quantityBody(orig.Quantity)})
			expectStatus(x, "400 with an Error body: petId is an int64", http.StatusBadRequest)
			expectUnchanged(ctx, x, orig)
		})
	}

	It("updateInventory: a body of 4 MiB gives 400 or 413 within 5 seconds", func(ctx SpecContext) {
		orig := currentItem(ctx)
		body := fmt.Sprintf(`{"quantity": %d, "pad": "%s"}`, orig.Quantity, strings.Repeat("x", 4<<20))
		x := do(ctx, Request{Method: http.MethodPatch, Path: petPath(orig.PetID), Body: []byte(body)}, http.StatusRequestEntityTooLarge)
		expectStatus(x, "400 or 413: a size limit, answered promptly", http.StatusBadRequest, http.StatusRequestEntityTooLarge)
		Expect(x.Elapsed).To(BeNumerically("<", 5*time.Second), x.Want("an answer within 5 seconds"))
		expectUnchanged(ctx, x, orig)
	})

	It("updateInventory: a JSON body sent as text/plain (observation: 400, 415 or accepted)", Label("observation"), func(ctx SpecContext) {
		orig := currentItem(ctx)
		x := do(ctx, Request{Method: http.MethodPatch, Path: petPath(orig.PetID), ContentType: "text/plain", Body: quantityBody(orig.Quantity)}, http.StatusUnsupportedMediaType)
		expectStatus(x, "400, 415 or 200", http.StatusBadRequest, http.StatusUnsupportedMediaType, http.StatusOK)
		observe("JSON body sent as text/plain", "%d", x.Status)
	})
})

var _ = Describe("concurrency", Label("concurrency", "mutating"), func() {
	It("updateInventory: 20 concurrent writes each echo their own quantity and one of them wins", func(ctx SpecContext) {
		petID := requireMutations()
		protect(ctx, petID)
		t := target()
		const clients = 20
		xs := make([]*Exchange, clients)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range xs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				xs[i] = t.send(ctx, patch(petID, int64(1000+i)))
			}()
		}
		close(start)
		wg.Wait()
		sent := map[int64]bool{}
		for i, x := range xs {
			if ps := t.responseProblems(x); len(ps) > 0 {
				failWith(x, "every response keeps the contract", ps)
			}
			expectStatus(x, "200", http.StatusOK)
			if it := decodeItem(x); it.Quantity != int64(1000+i) || it.PetID != petID {
				failWith(x, fmt.Sprintf("the answer echoes the quantity this client sent, %d", 1000+i), []string{fmt.Sprintf("got %+v", it)})
			}
			sent[int64(1000+i)] = true
		}
		items, lx := listItems(ctx)
		if it, _ := findItem(items, petID); !sent[it.Quantity] {
			failWith(lx, "the final quantity is one of the values written (no lost or mixed update)", []string{fmt.Sprintf("listed %+v", it)})
		}
	})
})
