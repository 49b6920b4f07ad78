package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"

	. "github.com/onsi/ginkgo/v2"
)

// maxSafeInteger is 2^53-1, the largest integer a JavaScript number holds exactly.
const maxSafeInteger = 1<<53 - 1

var _ = Describe("errors", Label("errors"), func() {
	It("401: the Error body has non-empty code and message and status 401", func(ctx SpecContext) {
		x := do(ctx, Request{Method: http.MethodGet, Path: "/inventory", Auth: NoAuth})
		expectStatus(x, "401 with an Error body", http.StatusUnauthorized)
		if ps := errorProblems(x); len(ps) > 0 {
			failWith(x, "an Error body: code and message non-empty strings, status equal to the HTTP status", ps)
		}
	})

	It("400: the Error body has non-empty code and message and status 400", func(ctx SpecContext) {
		r := Request{Method: http.MethodPatch, Path: "/inventory/abc", Body: quantityBody(1)}
		x := do(ctx, r)
		expectStatus(x, "400 with an Error body for a petId that is not an integer", http.StatusBadRequest)
		if ps := errorProblems(x); len(ps) > 0 {
			failWith(x, "an Error body: code and message non-empty strings, status equal to the HTTP status", ps)
		}
	})
})

var _ = Describe("responses", Label("responses"), func() {
	It("Content-Type is application/json on 200, 400 and 401 answers", func(ctx SpecContext) {
		t := target()
		for _, r := range []Request{
			{Method: http.MethodGet, Path: "/inventory"},
			{Method: http.MethodGet, Path: "/inventory", Auth: NoAuth},
			{Method: http.MethodPatch, Path: "/inventory/abc", Body: quantityBody(1)},
		} {
			x := t.send(ctx, r)
			if x.Err != nil || x.MediaType() != "application/json" {
				failWith(x, "request and response bodies are application/json", []string{fmt.Sprintf("Content-Type %q", x.RespHead.Get("Content-Type"))})
			}
		}
	})
})

var _ = Describe("list", Label("list"), func() {
	It("listInventory: 200 with an array of InventoryItem (petId int64, integer quantity, a known status)", func(ctx SpecContext) {
		x := do(ctx, Request{Method: http.MethodGet, Path: "/inventory"})
		expectStatus(x, "200 and the list", http.StatusOK)
		var raw []map[string]json.RawMessage
		if err := json.Unmarshal(x.RespBody, &raw); err != nil {
			failWith(x, "a JSON array of InventoryItem", []string{err.Error()})
		}
		var ps []string
		extra := map[string]bool{}
		for i, r := range raw {
			var it Item
			d := json.NewDecoder(bytes.NewReader(mustMarshal(r)))
			if err := d.Decode(&it); err != nil {
				ps = append(ps, fmt.Sprintf("item %d: %v", i, err))
				continue
			}
			for _, f := range []string{"petId", "quantity", "status"} {
				if _, ok := r[f]; !ok {
					ps = append(ps, fmt.Sprintf("item %d: %s is missing", i, f))
				}
			}
			for f := range r {
				if f != "petId" && f != "quantity" && f != "status" {
					extra[f] = true
				}
			}
			switch it.Status {
			case "available", "pending", "sold":
			default:
				ps = append(ps, fmt.Sprintf("item %d: status %q is not one of available, pending, sold", i, it.Status))
			}
		}
		if len(ps) > 0 {
			failWith(x, "every item has petId (int64), quantity (integer) and status (available, pending or sold)", ps)
		}
		if len(extra) > 0 {
			observe("fields of InventoryItem beyond the contract's", "%v", slices.Sorted(maps.Keys(extra)))
		}
	})

	It("listInventory: petIds are unique", func(ctx SpecContext) {
		items, x := listItems(ctx)
		seen := map[int64]bool{}
		var ps []string
		for _, it := range items {
			if seen[it.PetID] {
				ps = append(ps, fmt.Sprintf("petId %d is listed more than once", it.PetID))
			}
			seen[it.PetID] = true
		}
		if len(ps) > 0 {
			failWith(x, "one stock record per pet", ps)
		}
	})

	It("listInventory: petIds fit a JavaScript number (warning only)", func(ctx SpecContext) {
		items, _ := listItems(ctx)
		for _, it := range items {
			if it.PetID > maxSafeInteger || it.PetID < -maxSafeInteger {
				warn("petId %d exceeds 2^53-1: JavaScript clients lose its last digits", it.PetID)
			}
		}
	})
})

// mustMarshal encodes v, which cannot fail for the values used here.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
