package spec

import (
	"os"
	"strings"
	"testing"
)

// TestInventory checks that the inventory is read by structure: the same
// operations, key and record on the embedded contract, on one whose
// operationIds are renamed, and on one whose update is a PUT; and a
// contract without a list or an update is refused, saying what is missing.
func TestInventory(t *testing.T) {
	renamed, err := os.ReadFile("../testdata/specs/renamed-operation-ids.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name               string
		doc                string
		list, update, read string // the operations' names; empty: none
		err                string
	}{
		{"embedded", string(Document), "listInventory", "updateInventory", "", ""},
		{"renamed operationIds", string(renamed), "listStock", "setStock", "", ""},
		{"update by PUT", strings.Replace(string(Document), "  /inventory/{petId}:\n    patch:", "  /inventory/{petId}:\n    put:", 1), "listInventory", "updateInventory", "", ""},
		{"no list", strings.Replace(string(Document), "  /inventory:\n    get:", "  /inventory:\n    post:", 1), "", "", "", "no list of records"},
		{"no update", strings.Replace(string(Document), "  /inventory/{petId}:\n    patch:", "  /inventory/{petId}:\n    get:", 1), "", "", "", "no update of one record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			inv, err := c.Inventory()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Inventory() error = %v; want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if inv.List.Name() != tt.list || inv.Update.Name() != tt.update {
				t.Errorf("list %s, update %s; want %s, %s", inv.List.Name(), inv.Update.Name(), tt.list, tt.update)
			}
			if inv.Key != "petId" || inv.Record.Schema.Name != "InventoryItem" || inv.Body.Schema.Name != "InventoryUpdate" {
				t.Errorf("key %s, record %s, body %s", inv.Key, inv.Record.Schema.Name, inv.Body.Schema.Name)
			}
			if got := strings.Join(inv.Record.Names(), ","); got != "petId,quantity,status" {
				t.Errorf("record fields %s", got)
			}
			if st := inv.Record.Field("status"); st.Type != "string" || len(st.Enum) != 3 || string(st.Enum[2]) != `"sold"` {
				t.Errorf("status facts: type %s, enum %s", st.Type, st.Enum)
			}
			if id := inv.ID; id.Type != "integer" || id.Format != "int64" || id.Lowest().String() != "-9223372036854775808" {
				t.Errorf("the identifier's facts: %s %s from %s", id.Type, id.Format, id.Lowest())
			}
		})
	}
}

// TestFactsMerge checks what Facts read of a composed schema: allOf
// merged (the tightest bounds, the types that meet), the first branch of
// oneOf, and bounds in OpenAPI 3.0's and 3.1's forms.
func TestFactsMerge(t *testing.T) {
	doc := `openapi: 3.1.0
info: {title: t, version: "1"}
paths: {}
components:
  schemas:
    A:
      allOf:
        - {type: integer, minimum: 3, maximum: 50}
        - {type: number, exclusiveMaximum: 20, multipleOf: 2}
        - {multipleOf: 3}
    B:
      oneOf:
        - {type: string, pattern: '^x', maxLength: 4}
        - {type: integer}
    C:
      type: [string, "null"]
      enum: [a, b]
`
	c, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	facts := func(name string) *Facts {
		p, _ := c.Model.Components.Schemas.Get(name)
		f, err := FactsOf(p)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a := facts("A")
	if lo, hi := a.IntBounds(); a.Type != "integer" || lo.Int64() != 3 || hi.Int64() != 19 || a.MultipleOf.RatString() != "6" {
		t.Errorf("A: %s from %s to %s, multipleOf %s; want integer 3..19, 6", a.Type, lo, hi, a.MultipleOf)
	}
	if b := facts("B"); b.Type != "string" || b.MaxLength != 4 || len(b.Patterns) != 1 {
		t.Errorf("B: %+v", b)
	}
	if cf := facts("C"); !cf.Nullable || len(cf.Enum) != 2 {
		t.Errorf("C: nullable %v, enum %s", cf.Nullable, cf.Enum)
	}
}
