package mockserver

import (
	"strings"
	"testing"
)

// TestStaleExampleIsRefused checks the mock on a contract whose list
// example no longer matches InventoryItem (it lacks the required
// updatedAt): it starts, warns naming the example and the problem, and
// refuses a chaos rule that would send it (Prefer is in TestSpecVariants).
func TestStaleExampleIsRefused(t *testing.T) {
	c := variant(t, "required-updated-at.yaml")
	s := variantServer(t, c, false)
	if w := strings.Join(s.Warnings(), "\n"); !strings.Contains(w, "listInventory: response 200: example one-of-each does not match the contract ([0].updatedAt: required") {
		t.Errorf("warnings = %s; want one naming the example and the problem", w)
	}
	err := s.chaos.set("", Chaos{Rules: []ChaosRule{{Operation: "listInventory", Example: "one-of-each"}}})
	if err == nil || !strings.Contains(err.Error(), `example "one-of-each" of listInventory does not match the contract ([0].updatedAt: required`) {
		t.Errorf("a chaos rule sending the stale example: %v; want it refused", err)
	}
	if err := s.chaos.set("", Chaos{Rules: []ChaosRule{{Operation: "listInventory", Example: "empty"}}}); err != nil {
		t.Errorf("a chaos rule sending a sound example: %v", err)
	}
}
