package mockserver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/spec"
)

// variant loads a contract variant from testdata/specs.
func variant(t testing.TB, name string) *spec.Contract {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "testdata", "specs", name))
	if err != nil {
		t.Fatal(err)
	}
	c, err := spec.Load(doc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// variantServer starts the mock on a variant, with the embedded fixtures
// where they fit it and generated records where they do not, or where
// generate is set.
func variantServer(t *testing.T, c *spec.Contract, generate bool) *Server {
	t.Helper()
	sh, err := fixtures.NewShape(c)
	if err != nil {
		t.Fatal(err)
	}
	records, _, err := fixtures.Default(sh)
	if err != nil || generate {
		if records, err = fixtures.Generate(sh, 64, 1); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Config{Contract: c, Shape: sh, Records: records, APIKeys: []string{testKey}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A step is one request against a variant and what must come back.
type step struct {
	r      req
	status int
	want   string // a part of the body
}

// TestSpecVariants starts the mock on each variant of the contract in
// testdata/specs and checks that it follows the loaded document: its
// records, writes, bounds, enums, base path and operations. serve checks
// every answer against the variant, with our validator and kin-openapi's.
func TestSpecVariants(t *testing.T) {
	patch := func(path, body string) req { return req{method: "PATCH", path: path, body: body} }
	get := func(path string) req { return req{method: "GET", path: path} }
	tests := []struct {
		spec  string
		steps []step
	}{
		{"update-status.yaml", []step{
			{patch("/v1/inventory/3", `{"quantity": 7, "status": "sold"}`), 200, `"quantity":7,"status":"sold"`},
			{patch("/v1/inventory/3", `{"status": "pending"}`), 200, `"quantity":7,"status":"pending"`},
			{patch("/v1/inventory/3", `{}`), 400, "body: has 0 fields; at least 1 are required"},
			{patch("/v1/inventory/3", `{"status": "lost"}`), 400, `status: \"lost\" is not one of \"available\", \"pending\", \"sold\"`},
			{get("/v1/inventory"), 200, `{"petId":3,"quantity":7,"status":"pending"}`},
		}},
		{"quantity-bounds.yaml", []step{
			{patch("/v1/inventory/3", `{"quantity": 1000}`), 200, `"quantity":1000`},
			{patch("/v1/inventory/3", `{"quantity": 1001}`), 400, "quantity: 1001 is out of range: above the maximum 1000"},
			{patch("/v1/inventory/3", `{"quantity": -1}`), 400, "quantity: -1 is out of range: below the minimum 0"},
		}},
		{"wide-bounds.yaml", []step{
			{patch("/v1/inventory/3", `{"quantity": -100}`), 200, `"quantity":-100`},
			{patch("/v1/inventory/3", `{"quantity": 2147483648}`), 200, `"quantity":2147483648`},
			{patch("/v1/inventory/3", `{"quantity": 9999999999}`), 200, `"quantity":9999999999`},
			{patch("/v1/inventory/3", `{"quantity": 10000000000}`), 400, "above the maximum 9999999999"},
			{patch("/v1/inventory/3", `{"quantity": -101}`), 400, "below the minimum -100"},
		}},
		{"required-updated-at.yaml", []step{
			{get("/v1/inventory"), 200, `"updatedAt":"20`},
			{patch("/v1/inventory/3", `{"quantity": 4}`), 200, `"updatedAt":"20`},
		}},
		{"status-reserved.yaml", []step{
			{get("/v1/inventory"), 200, `"status":"reserved"`},
		}},
		{"base-path-v2.yaml", []step{
			{get("/v2/inventory"), 200, `"petId":64`},
			{patch("/v2/inventory/3", `{"quantity": 9}`), 200, `"quantity":9`},
			{get("/v1/inventory"), 404, "no such path"},
		}},
		{"get-one-record.yaml", []step{
			{get("/v1/inventory/3"), 200, `{"petId":3,`},
			{patch("/v1/inventory/3", `{"quantity": 77}`), 200, `"quantity":77`},
			{get("/v1/inventory/3"), 200, `"quantity":77`},
			{get("/v1/inventory/424242"), 404, "no record with petId 424242"},
			// The operation documents no 400: a petId that is not one names
			// no record, and the answer is its documented 404.
			{get("/v1/inventory/abc"), 404, `petId: \"abc\" is not an integer`},
			{req{method: "GET", path: "/v1/inventory/3", auth: "-"}, 401, "missing Authorization header"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			c := variant(t, tt.spec)
			s := variantServer(t, c, tt.spec == "status-reserved.yaml")
			for _, st := range tt.steps {
				got := serve(t, s, st.r)
				if got.status != st.status || !strings.Contains(string(got.body), st.want) {
					t.Errorf("%s %s %s: %d %s; want %d with %s", st.r.method, st.r.path, st.r.body, got.status, got.body, st.status, st.want)
				}
			}
			if tt.spec == "get-one-record.yaml" && slices.ContainsFunc(s.Warnings(), func(w string) bool { return strings.Contains(w, "/inventory/{petId}") }) {
				t.Errorf("warnings = %q; the new operation is served, not warned about", s.Warnings())
			}
		})
	}
}

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
			"updateInventory: the mock serves it as the update of one InventoryItem, so it must be a PATCH, not a GET"},
		{"list by POST", "  /inventory:\n    get:", "  /inventory:\n    post:",
			"listInventory: the mock serves it as the list of InventoryItem, so it must be a GET, not a POST"},
		{"update body declares no record field", "      required: [quantity]\n      properties:\n        quantity:\n          type: integer\n          description: The new stock count.",
			"      properties:\n        amount:\n          type: integer", "updateInventory: the mock serves it as the update of one InventoryItem, so its body must be a JSON object declaring fields of InventoryItem"},
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

// TestUnservedOperationsAreWarned checks the start-up warnings: each
// operation the mock does not serve is named, with what it answers.
func TestUnservedOperationsAreWarned(t *testing.T) {
	s := newServer(t)
	got := fmt.Sprint(s.Warnings())
	for _, want := range []string{"GET /pets/{petId}: no handler: the contract gives no shape for its answer", "GET /store/orders: no handler", "which the contract documents for it (default response)"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings = %s; want %q", got, want)
		}
	}
	var items []json.RawMessage
	json.Unmarshal(serve(t, s, req{method: "GET", path: "/v1/inventory"}).body, &items)
	if len(items) != 64 {
		t.Errorf("list: %d items", len(items))
	}
}
