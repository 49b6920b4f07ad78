package mockserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/spec"
)

// TestSpecVariantFixtures checks that fixtures missing a field the
// variant requires stop start-up, naming the source, the record and the
// field, rather than being served.
func TestSpecVariantFixtures(t *testing.T) {
	sh, err := fixtures.NewShape(variant(t, "required-updated-at.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = fixtures.Default(sh)
	if err == nil || !strings.Contains(err.Error(), "fixtures/inventory.json: record 0 (petId 1): updatedAt: required") {
		t.Errorf("embedded fixtures on a spec requiring updatedAt: error = %v", err)
	}
}

// TestMisshapenOperations checks that the mock refuses to start on a
// contract whose operations do not have the shapes its handlers assume,
// with a message that says which and why.
func TestMisshapenOperations(t *testing.T) {
	tests := []struct {
		name, from, to, want string
	}{
		{"update by GET", "  /inventory/{petId}:\n    patch:", "  /inventory/{petId}:\n    get:",
			"the contract has no update of one record (a write whose one path parameter is a field of the listed records, with a JSON object body)"},
		{"list by POST", "  /inventory:\n    get:", "  /inventory:\n    post:",
			"the contract has no list of records (a GET without path parameters whose 200 answer is a JSON array of objects)"},
		{"update body declares no record field", "      required: [quantity]\n      properties:\n        quantity:\n          type: integer\n          description: The new stock count.",
			"      properties:\n        amount:\n          type: integer", "updateInventory: the mock serves it as the update of one InventoryItem, so its body must declare fields of InventoryItem"},
		{"Error without status", "      required: [code, message, status]\n      properties:\n        code:\n          type: string\n          description: Machine-readable error code.\n        message:\n          type: string\n          description: Human-readable description.\n        status:\n          type: integer",
			"      required: [code, message, httpStatus]\n      additionalProperties: false\n      properties:\n        code:\n          type: string\n          description: Machine-readable error code.\n        message:\n          type: string\n          description: Human-readable description.\n        httpStatus:\n          type: integer", "does not accept the mock's Error body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(string(spec.Document), tt.from, tt.to, 1)
			if doc == string(spec.Document) {
				t.Fatalf("the replacement did not apply")
			}
			c, err := spec.Load([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			_, err = New(Config{Contract: c})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New() error = %v; want one with %q", err, tt.want)
			}
		})
	}
}

// TestUnservedOperationsAreWarned checks the start-up notes: each
// operation the mock does not serve is named, with what it answers; one
// that answers 501 as the contract documents is a note, not a warning (a
// default start warns of nothing the contract allows).
func TestUnservedOperationsAreWarned(t *testing.T) {
	s := newServer(t)
	got := fmt.Sprint(s.Notes())
	for _, want := range []string{"GET /pets/{petId}: no handler: the contract gives no shape for its answer", "GET /store/orders: no handler", "which the contract documents for it (default response)"} {
		if !strings.Contains(got, want) {
			t.Errorf("notes = %s; want %q", got, want)
		}
	}
	if w := s.Warnings(); len(w) > 0 {
		t.Errorf("warnings = %q; want none on the embedded contract", w)
	}
	var items []json.RawMessage
	json.Unmarshal(serve(t, s, req{method: "GET", path: "/v1/inventory"}).body, &items)
	if len(items) != 64 {
		t.Errorf("list: %d items", len(items))
	}
}
