package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pb33f/go-yaml"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/spec"
)

// updateVariants rewrites testdata/specs from spec/openapi.yaml and the
// table below: go test ./mockserver -run TestSpecVariants -update
var updateVariants = flag.Bool("update", false, "rewrite testdata/specs from spec/openapi.yaml and specVariants")

// variantDir holds the variants of the contract, made by specVariants.
var variantDir = filepath.Join("..", "testdata", "specs")

// A specVariant is spec/openapi.yaml with a few edits, as a new version of
// the contract might make them: the file testdata/specs/<file> is what the
// edits make of the current spec/openapi.yaml, so it cannot drift from it,
// and the steps are what the mock serving it must answer. A new variant is
// one entry of specVariants; TestSpecVariants writes its file with -update.
type specVariant struct {
	file     string   // its name in testdata/specs
	about    string   // what it changes, for the file's first line
	edits    []edit   // applied in order to spec/openapi.yaml
	generate bool     // serve generated records, even where the embedded fixtures fit
	steps    []step   // requests to the mock serving it, in order
	warnings []string // parts of the start-up warnings wanted
}

// A step is one request against a variant and what must come back.
type step struct {
	r      req
	status int
	code   string // the Error code of an error answer
	want   string // a part of the body
}

// specVariants are the variants of the contract in testdata/specs.
var specVariants = []specVariant{
	{
		file:  "update-status.yaml",
		about: "InventoryUpdate gains status, and quantity is no longer required",
		edits: []edit{
			del("components.schemas.InventoryUpdate.required"),
			set("components.schemas.InventoryUpdate.description", "The new stock count and status of one pet; at least one of them."),
			set("components.schemas.InventoryUpdate.minProperties", "1"),
			set("components.schemas.InventoryUpdate.properties.status", "$ref: '#/components/schemas/PetStatus'"),
		},
		steps: []step{
			{patch("/v1/inventory/3", `{"quantity": 7, "status": "sold"}`), 200, "", `"quantity":7,"status":"sold"`},
			{patch("/v1/inventory/3", `{"status": "pending"}`), 200, "", `"quantity":7,"status":"pending"`},
			{patch("/v1/inventory/3", `{}`), 400, httpapi.CodeInvalidBody, "body: has 0 fields; at least 1 are required"},
			{patch("/v1/inventory/3", `{"status": "lost"}`), 400, httpapi.CodeInvalidBody, `status: \"lost\" is not one of \"available\", \"pending\", \"sold\"`},
			{get("/v1/inventory"), 200, "", `{"petId":3,"quantity":7,"status":"pending"}`},
		},
	},
	{
		file:  "quantity-bounds.yaml",
		about: "quantity bounded to 0..1000",
		edits: []edit{
			set("components.schemas.InventoryItem.properties.quantity.minimum", "0"),
			set("components.schemas.InventoryItem.properties.quantity.maximum", "1000"),
			set("components.schemas.InventoryUpdate.properties.quantity.minimum", "0"),
			set("components.schemas.InventoryUpdate.properties.quantity.maximum", "1000"),
		},
		steps: []step{
			{patch("/v1/inventory/3", `{"quantity": 1000}`), 200, "", `"quantity":1000`},
			{patch("/v1/inventory/3", `{"quantity": 1001}`), 400, httpapi.CodeInvalidBody, "quantity: 1001 is out of range: above the maximum 1000"},
			{patch("/v1/inventory/3", `{"quantity": -1}`), 400, httpapi.CodeInvalidBody, "quantity: -1 is out of range: below the minimum 0"},
		},
	},
	{
		file:  "wide-bounds.yaml",
		about: "quantity from -100 to 9999999999, wider than the mock's own defaults",
		edits: []edit{
			set("components.schemas.InventoryItem.properties.quantity.format", "int64"),
			set("components.schemas.InventoryItem.properties.quantity.minimum", "-100"),
			set("components.schemas.InventoryItem.properties.quantity.maximum", "9999999999"),
			set("components.schemas.InventoryUpdate.properties.quantity.format", "int64"),
			set("components.schemas.InventoryUpdate.properties.quantity.minimum", "-100"),
			set("components.schemas.InventoryUpdate.properties.quantity.maximum", "9999999999"),
		},
		steps: []step{
			{patch("/v1/inventory/3", `{"quantity": -100}`), 200, "", `"quantity":-100`},
			{patch("/v1/inventory/3", `{"quantity": 2147483648}`), 200, "", `"quantity":2147483648`},
			{patch("/v1/inventory/3", `{"quantity": 9999999999}`), 200, "", `"quantity":9999999999`},
			{patch("/v1/inventory/3", `{"quantity": 10000000000}`), 400, httpapi.CodeInvalidBody, "above the maximum 9999999999"},
			{patch("/v1/inventory/3", `{"quantity": -101}`), 400, httpapi.CodeInvalidBody, "below the minimum -100"},
		},
	},
	{
		file:  "update-bounds.yaml",
		about: "only the update's quantity has a lower bound, -100; the record's has none",
		edits: []edit{
			set("components.schemas.InventoryUpdate.properties.quantity.minimum", "-100"),
		},
		steps: []step{
			// The update's bound replaces the mock's own 0; the mock's own
			// maximum still holds, neither schema giving one.
			{patch("/v1/inventory/3", `{"quantity": -100}`), 200, "", `"quantity":-100`},
			{patch("/v1/inventory/3", `{"quantity": -101}`), 400, httpapi.CodeInvalidBody, "quantity: -101 is out of range: below the minimum -100"},
			{patch("/v1/inventory/3", `{"quantity": 2147483648}`), 400, httpapi.CodeInvalidBody, "quantity: 2147483648 is out of range: above the maximum 2147483647 (the mock's bound; the contract gives none)"},
			{get("/v1/inventory"), 200, "", `{"petId":3,"quantity":-100,`},
		},
	},
	{
		// FastAPI and other generators write 3.1: the same contract in
		// its words, which mock and suite must read as they read 3.0.
		file:  "openapi-3.1.yaml",
		about: "the contract as OpenAPI 3.1: info.summary, schema examples as arrays, and an optional note whose type is [string, \"null\"] (3.1 has no nullable)",
		edits: []edit{
			set("openapi", "3.1.0"),
			set("info.summary", "Stock levels of pets in a store."),
			set("components.schemas.InventoryItem.examples", "- {petId: 1, quantity: 12, status: available}"),
			set("components.schemas.InventoryItem.properties.quantity.examples", "[0, 12]"),
			set("components.schemas.InventoryItem.properties.note", "type: [string, 'null']\nmaxLength: 200\ndescription: A free note on the stock; null where there is none."),
			set("components.schemas.InventoryUpdate.examples", "- {quantity: 5}"),
		},
		steps: []step{
			{get("/v1/inventory"), 200, "", `"petId":64`},
			{patch("/v1/inventory/3", `{"quantity": 4}`), 200, "", `"petId":3,"quantity":4`},
			{patch("/v1/inventory/3", `{"quantity": null}`), 400, httpapi.CodeInvalidBody, "quantity"},
			{patch("/v1/inventory/3", `{"quantity": 1.5}`), 400, httpapi.CodeInvalidBody, "quantity"},
			{get("/v1/inventory"), 200, "", `"petId":3,"quantity":4,`},
		},
	},
	{
		file:  "required-updated-at.yaml",
		about: "InventoryItem gains a required updatedAt (date-time), first among its fields; the list's example one-of-each is left without it",
		edits: []edit{
			add("components.schemas.InventoryItem.required", "updatedAt"),
			first("components.schemas.InventoryItem.properties.updatedAt", "type: string\nformat: date-time\ndescription: When the record last changed."),
			// The list's example one-of-each is left without updatedAt, as
			// a spec's author may leave it: the mock starts, warns, and
			// refuses to send it.
		},
		steps: []step{
			{get("/v1/inventory"), 200, "", `{"updatedAt":"20`},
			{patch("/v1/inventory/3", `{"quantity": 4}`), 200, "", `"quantity":4`},
			{get("/v1/inventory"), 200, "", `"petId":3,"quantity":4,`},
			{withHeader(get("/v1/inventory"), "Prefer", "example=one-of-each"), 400, httpapi.CodeInvalidPreference, "Prefer: example=one-of-each: the 200 response of listInventory has this example, but it does not match the contract ([0].updatedAt: required; [1].updatedAt: required; [2].updatedAt: required), so the mock will not send it; update or remove the example in the spec"},
			{withHeader(get("/v1/inventory"), "Prefer", "example=empty"), 200, "", "[]"},
		},
		warnings: []string{"listInventory: response 200: example one-of-each does not match the contract ([0].updatedAt: required; [1].updatedAt: required; [2].updatedAt: required); Prefer: example=one-of-each answers 400 until it is updated or removed"},
	},
	{
		file:     "status-reserved.yaml",
		about:    "PetStatus gains reserved",
		edits:    []edit{add("components.schemas.PetStatus.enum", "reserved")},
		generate: true,
		steps: []step{
			{get("/v1/inventory"), 200, "", `"status":"reserved"`},
		},
	},
	{
		file:  "base-path-v2.yaml",
		about: "the servers move to /v2",
		edits: []edit{
			set("servers.0.url", "https://{host}/v2"),
			set("servers.1.url", "https://{host}/v2"),
		},
		steps: []step{
			{get("/v2/inventory"), 200, "", `"petId":64`},
			{patch("/v2/inventory/3", `{"quantity": 9}`), 200, "", `"quantity":9`},
			{get("/v1/inventory"), 404, httpapi.CodeNotFound, "no such path"},
		},
	},
	{
		file:  "get-one-record.yaml",
		about: "a new operation with a shape, GET /inventory/{petId}",
		edits: []edit{first("paths./inventory/{petId}.get", `
operationId: getInventoryItem
tags: [inventory]
summary: One stock record
description: Return the stock record of one pet.
parameters:
  - name: petId
    in: path
    required: true
    description: Identifier of the pet.
    schema:
      type: integer
      format: int64
responses:
  '200':
    description: The stock record.
    content:
      application/json:
        schema:
          $ref: '#/components/schemas/InventoryItem'
  '401':
    $ref: '#/components/responses/Unauthorized'
  '404':
    description: No pet with that petId.
    content:
      application/json:
        schema:
          $ref: '#/components/schemas/Error'`)},
		steps: []step{
			{get("/v1/inventory/3"), 200, "", `{"petId":3,`},
			{patch("/v1/inventory/3", `{"quantity": 77}`), 200, "", `"quantity":77`},
			{get("/v1/inventory/3"), 200, "", `"quantity":77`},
			{get("/v1/inventory/424242"), 404, httpapi.CodeNotFound, "no record with petId 424242"},
			// The operation documents no 400: a petId that is not one names
			// no record, and the answer is its documented 404.
			{get("/v1/inventory/abc"), 404, httpapi.CodeNotFound, `petId: \"abc\" is not an integer`},
			{req{method: "GET", path: "/v1/inventory/3", auth: "-"}, 401, httpapi.CodeUnauthorized, "missing Authorization header"},
		},
	},
	{
		file:  "id-bounds.yaml",
		about: "petId from 1 to 100 in the paths and the record",
		edits: []edit{
			set("paths./inventory/{petId}.patch.parameters.0.schema.minimum", "1"),
			set("paths./inventory/{petId}.patch.parameters.0.schema.maximum", "100"),
			set("paths./pets/{petId}.get.parameters.0.schema.minimum", "1"),
			set("paths./pets/{petId}.get.parameters.0.schema.maximum", "100"),
			set("components.schemas.InventoryItem.properties.petId.minimum", "1"),
			set("components.schemas.InventoryItem.properties.petId.maximum", "100"),
		},
		steps: []step{
			{patch("/v1/inventory/100", `{"quantity": 1}`), 404, httpapi.CodeNotFound, "no record with petId 100"},
			{patch("/v1/inventory/101", `{"quantity": 1}`), 400, httpapi.CodeInvalidParameter, "petId: 101 is out of range: above the maximum 100"},
			{patch("/v1/inventory/0", `{"quantity": 1}`), 400, httpapi.CodeInvalidParameter, "petId: 0 is out of range: below the minimum 1"},
			{patch("/v1/inventory/3", `{"quantity": 1}`), 200, "", `"quantity":1`},
		},
	},
	{
		file:  "price-bounds.yaml",
		about: "a number field price, 10 <= price < 20.5: required in the record, optional in the update",
		edits: []edit{
			add("components.schemas.InventoryItem.required", "price"),
			set("components.schemas.InventoryItem.properties.price", "{type: number, minimum: 10, exclusiveMaximum: true, maximum: 20.5, description: Unit price.}"),
			set("components.schemas.InventoryUpdate.properties.price", "{type: number, minimum: 10, exclusiveMaximum: true, maximum: 20.5, description: The new unit price; optional.}"),
			set("paths./inventory.get.responses.200.content.application/json.examples.one-of-each.value", `
- {petId: 1, quantity: 12, status: available, price: 10}
- {petId: 2, quantity: 1, status: pending, price: 12.5}
- {petId: 3, quantity: 0, status: sold, price: 20.25}`),
		},
		generate: true,
		steps: []step{
			{get("/v1/inventory"), 200, "", `"price":`},
			{patch("/v1/inventory/3", `{"quantity": 2, "price": 10}`), 200, "", `"price":10`},
			{patch("/v1/inventory/3", `{"quantity": 2, "price": 20.49}`), 200, "", `"price":20.49`},
			{patch("/v1/inventory/3", `{"quantity": 2, "price": 20.5}`), 400, httpapi.CodeInvalidBody, "price: 20.5 is out of range"},
			{patch("/v1/inventory/3", `{"quantity": 2, "price": 9.99}`), 400, httpapi.CodeInvalidBody, "price: 9.99 is out of range"},
			{get("/v1/inventory"), 200, "", `"price":20.49`},
		},
	},
	{
		file:  "quantity-multiple-of.yaml",
		about: "quantity a multiple of 5",
		edits: []edit{
			set("components.schemas.InventoryItem.properties.quantity.multipleOf", "5"),
			set("components.schemas.InventoryUpdate.properties.quantity.multipleOf", "5"),
			set("paths./inventory.get.responses.200.content.application/json.examples.one-of-each.value", `
- {petId: 1, quantity: 10, status: available}
- {petId: 2, quantity: 5, status: pending}
- {petId: 3, quantity: 0, status: sold}`),
		},
		generate: true,
		steps: []step{
			{patch("/v1/inventory/3", `{"quantity": 15}`), 200, "", `"quantity":15`},
			{patch("/v1/inventory/3", `{"quantity": 7}`), 400, httpapi.CodeInvalidBody, "quantity: 7 is not a multiple of 5"},
		},
	},
	{
		file:  "renamed-operation-ids.yaml",
		about: "the list and the update renamed (listStock, setStock), as the contract says the experimental update will be",
		edits: []edit{
			set("paths./inventory.get.operationId", "listStock"),
			set("paths./inventory/{petId}.patch.operationId", "setStock"),
		},
		steps: []step{
			{get("/v1/inventory"), 200, "", `{"petId":1,`},
			{patch("/v1/inventory/3", `{"quantity": 9}`), 200, "", `"quantity":9`},
			{patch("/v1/inventory/3", `{"quantity": "x"}`), 400, httpapi.CodeInvalidBody, "quantity: got string, want integer"},
			{patch("/v1/inventory/999999", `{"quantity": 1}`), 404, httpapi.CodeNotFound, "no record with petId 999999"},
		},
	},
	{
		file:  "new-write-operation.yaml",
		about: "a new write operation, POST /store/orders, with a body and a 201 record",
		edits: []edit{
			set("paths./store/orders.post", `
operationId: placeOrder
tags: [store]
summary: Place an order
description: Order pets for the store.
requestBody:
  required: true
  content:
    application/json:
      schema:
        $ref: '#/components/schemas/NewOrder'
responses:
  '201':
    description: The order placed.
    content:
      application/json:
        schema:
          $ref: '#/components/schemas/Order'
  '400':
    description: The body is missing required fields or has invalid values.
    content:
      application/json:
        schema:
          $ref: '#/components/schemas/Error'
  '401':
    $ref: '#/components/responses/Unauthorized'
  default:
    $ref: '#/components/responses/OtherError'`),
			set("components.schemas.NewOrder", `
type: object
description: An order to place.
required: [petId, quantity]
properties:
  petId: {type: integer, format: int64}
  quantity: {type: integer, minimum: 1, maximum: 100}
  note: {type: string, maxLength: 40}`),
			set("components.schemas.Order", `
type: object
description: An order placed.
required: [id, petId, quantity, status]
properties:
  id: {type: integer, format: int64}
  petId: {type: integer, format: int64}
  quantity: {type: integer}
  status: {type: string, enum: [placed, approved, delivered]}`),
		},
		steps: []step{
			// The mock serves lists, reads and updates of its records; an
			// order is none, and its 501 is documented by the default.
			{req{method: "POST", path: "/v1/store/orders", body: `{"petId": 3, "quantity": 1}`}, 501, httpapi.CodeNotImplemented, "POST /store/orders is in the contract, but it is not an operation the mock can serve"},
			{req{method: "POST", path: "/v1/store/orders", body: `{"petId": 3, "quantity": 1}`, auth: "-"}, 401, httpapi.CodeUnauthorized, "missing Authorization header"},
		},
	},
}

func patch(path, body string) req { return req{method: "PATCH", path: path, body: body} }
func get(path string) req         { return req{method: "GET", path: path} }

// TestSpecVariants checks that every file in testdata/specs is what its
// entry of specVariants makes of spec/openapi.yaml (with -update, it writes
// them), then starts the mock on each variant and checks that it follows
// the loaded document: its records, writes, bounds, enums, base path and
// operations. serve checks every answer against the variant, with our
// validator and kin-openapi's.
func TestSpecVariants(t *testing.T) {
	made := map[string]bool{}
	for _, v := range specVariants {
		made[v.file] = true
		want, err := v.make(spec.Document)
		if err != nil {
			t.Fatalf("%s: %v", v.file, err)
		}
		path := filepath.Join(variantDir, v.file)
		if *updateVariants {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not what its edits make of spec/openapi.yaml (%v); run: go test ./mockserver -run TestSpecVariants -update", path, err)
		}
	}
	files, err := filepath.Glob(filepath.Join(variantDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !made[filepath.Base(f)] {
			t.Errorf("%s is not made by specVariants (mockserver/spec_variants_test.go): add an entry with its edits and steps, then run with -update", f)
		}
	}
	for _, v := range specVariants {
		t.Run(v.file, func(t *testing.T) {
			c := variant(t, v.file)
			s := variantServer(t, c, v.generate)
			for _, st := range v.steps {
				got := serve(t, s, st.r)
				if got.status != st.status || !strings.Contains(string(got.body), st.want) || (st.code != "" && got.Code != st.code) {
					t.Errorf("%s %s %s: %d %s; want %d %s with %s", st.r.method, st.r.path, st.r.body, got.status, got.body, st.status, st.code, st.want)
				}
			}
			// Every operation the variant gives a shape the mock can serve is
			// served, not warned about.
			if slices.ContainsFunc(s.Warnings(), func(w string) bool { return strings.Contains(w, " /inventory") }) {
				t.Errorf("warnings = %q; the inventory operations are served, not warned about", s.Warnings())
			}
			for _, w := range v.warnings {
				if !slices.ContainsFunc(s.Warnings(), func(got string) bool { return strings.Contains(got, w) }) {
					t.Errorf("warnings = %q; want one with %q", s.Warnings(), w)
				}
			}
		})
	}
}

// make applies the variant's edits to doc and returns the variant's file.
func (v specVariant) make(doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	for _, e := range v.edits {
		if err := e.apply(&root); err != nil {
			return nil, fmt.Errorf("%s %s: %v", e.op, e.path, err)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Variant of spec/openapi.yaml for tests: %s.\n", v.about)
	b.WriteString("# Made by specVariants in mockserver/spec_variants_test.go; do not edit: change\n")
	b.WriteString("# the entry, then run go test ./mockserver -run TestSpecVariants -update\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// An edit changes one node of a YAML document, named by its path: keys of
// mappings and indexes of sequences, joined by dots, such as
// "components.schemas.InventoryItem.required" or "servers.0.url".
type edit struct {
	op    string // set, first, add or del
	path  string
	value string // YAML
}

// set makes the node at path value, adding it last to its mapping if it
// is not there.
func set(path, value string) edit { return edit{"set", path, value} }

// first adds the key at path first to its mapping, with value.
func first(path, value string) edit { return edit{"first", path, value} }

// add appends value to the sequence at path.
func add(path, value string) edit { return edit{"add", path, value} }

// del removes the key at path from its mapping.
func del(path string) edit { return edit{"del", path, ""} }

func (e edit) apply(root *yaml.Node) error {
	keys := strings.Split(e.path, ".")
	var value *yaml.Node
	if e.op != "del" {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(e.value), &doc); err != nil || len(doc.Content) != 1 {
			return fmt.Errorf("value %q is not one YAML node: %v", e.value, err)
		}
		value = doc.Content[0]
	}
	if e.op == "add" {
		seq, err := walk(root, keys)
		if err != nil {
			return err
		}
		if seq.Kind != yaml.SequenceNode {
			return fmt.Errorf("not a sequence")
		}
		seq.Content = append(seq.Content, value)
		return nil
	}
	parent, err := walk(root, keys[:len(keys)-1])
	if err != nil {
		return err
	}
	last := keys[len(keys)-1]
	if parent.Kind == yaml.SequenceNode {
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(parent.Content) || e.op != "set" {
			return fmt.Errorf("%q: want the index of an item to set", last)
		}
		parent.Content[i] = value
		return nil
	}
	if parent.Kind != yaml.MappingNode {
		return fmt.Errorf("%q is not in a mapping", last)
	}
	at := -1
	for i := 0; i+1 < len(parent.Content); i += 2 {
		if parent.Content[i].Value == last {
			at = i
		}
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: last}
	switch {
	case e.op == "del" && at >= 0:
		parent.Content = slices.Delete(parent.Content, at, at+2)
	case e.op == "set" && at >= 0:
		parent.Content[at+1] = value
	case e.op == "set":
		parent.Content = append(parent.Content, key, value)
	case e.op == "first" && at < 0:
		parent.Content = slices.Insert(parent.Content, 0, key, value)
	default:
		return fmt.Errorf("cannot %s %q here (present: %v)", e.op, last, at >= 0)
	}
	return nil
}

// walk returns the node at the path keys.
func walk(n *yaml.Node, keys []string) (*yaml.Node, error) {
	if n.Kind == yaml.DocumentNode {
		n = n.Content[0]
	}
	for depth, k := range keys {
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = n.Content[i+1]
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			}
		}
		if next == nil {
			return nil, fmt.Errorf("no %q at %s", k, strings.Join(keys[:depth], "."))
		}
		n = next
	}
	return n, nil
}

// variant loads a contract variant from testdata/specs.
func variant(t testing.TB, name string) *spec.Contract {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(variantDir, name))
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
