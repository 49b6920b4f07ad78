package spec

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestListItemsOneAtATime: a list checked one item at a time (a plain
// array schema) gets the very problems the validator finds on the whole
// array, and a body that is no well-formed array is left to the whole
// decode, whose error says what is wrong.
func TestListItemsOneAtATime(t *testing.T) {
	c, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	inv, err := c.Inventory()
	if err != nil {
		t.Fatal(err)
	}
	s := inv.List.Response(200).Schema
	if s.plainItems() == nil {
		t.Fatal("the list's schema is not read as a plain array of InventoryItem")
	}
	tests := []struct {
		name, body string
		decided    bool
	}{
		{"empty", `[]`, true},
		{"valid", `[{"petId":1,"quantity":5,"status":"available"},{"petId":2,"quantity":0,"status":"sold"}]`, true},
		{"unknown status", `[{"petId":1,"quantity":5,"status":"available"},{"petId":2,"quantity":0,"status":"lost"}]`, true},
		{"missing field", `[{"petId":1,"quantity":5}]`, true},
		{"wrong types", `[{"petId":"1","quantity":5.5,"status":3}, {"petId":9223372036854775808,"quantity":1,"status":"sold"}]`, true},
		{"null item", `[null, 1, "x", []]`, true},
		{"extra field", `[{"petId":1,"quantity":5,"status":"sold","x":{"y":[1,2]}}]`, true},
		{"not an array", `{"items":[{"petId":1,"quantity":5,"status":"sold"}]}`, false},
		{"cut", `[{"petId":1,"quantity":5,"status":"sold"}`, false},
		{"data after", `[] []`, false},
		{"duplicate name", `[{"petId":1,"petId":2,"quantity":5,"status":"sold"}]`, false},
	}
	render := func(ps []Problem) string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Field+": "+p.Message)
		}
		slices.Sort(out)
		return strings.Join(out, "\n")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, decided := s.validateArrayJSON([]byte(tt.body))
			if decided != tt.decided {
				t.Fatalf("decided = %v; want %v", decided, tt.decided)
			}
			if !decided {
				return
			}
			v, err := DecodeJSON([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if g, w := render(got), render(s.Validate(v)); g != w {
				t.Errorf("one at a time:\n%s\nwhole:\n%s", g, w)
			}
		})
	}
	big := "[" + strings.Repeat(`{"petId":1,"quantity":5,"status":"sold"},`, 999) + `{"petId":1,"quantity":5,"status":"x"}]`
	if got, _ := s.validateArrayJSON([]byte(big)); len(got) != 1 || got[0].Field != fmt.Sprintf("[%d].status", 999) {
		t.Errorf("the 1000th item's bad status: %v", got)
	}
}
