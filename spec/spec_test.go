package spec

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestEmbeddedDocumentsAreValid checks the embedded contract and admin
// document against the OpenAPI schema, which Default and Admin skip at
// start-up to start faster.
func TestEmbeddedDocumentsAreValid(t *testing.T) {
	for name, doc := range map[string][]byte{"openapi.yaml": Document, "admin.yaml": AdminDocument} {
		if _, err := Load(doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestEmbeddedContractIsValidOpenAPI(t *testing.T) {
	c, err := Load(Document)
	if err != nil {
		t.Fatalf("Load(Document) error: %v", err)
	}
	if c.BasePath != "/v1" {
		t.Errorf("BasePath = %q; want /v1", c.BasePath)
	}
	if got := c.Model.Info.Version; got != "1.0.0" {
		t.Errorf("info.version = %q; want 1.0.0", got)
	}
	if n := len(c.Model.Servers); n != 2 {
		t.Fatalf("servers = %d; want 2 (production and staging)", n)
	}
	for _, s := range c.Model.Servers {
		if !strings.HasSuffix(s.URL, "/v1") {
			t.Errorf("server %q does not end in /v1", s.URL)
		}
		if s.Variables == nil || s.Variables.Len() == 0 {
			t.Errorf("server %q has no variables", s.URL)
		}
	}
}

// TestSeedSchemas checks that every schema the seed names is in the document
// with the seed's required fields, types and formats.
func TestSeedSchemas(t *testing.T) {
	c, err := Load(Document)
	if err != nil {
		t.Fatal(err)
	}
	type field struct{ name, typ, format string }
	tests := []struct {
		schema   string
		required []string
		fields   []field
	}{
		{"InventoryItem", []string{"petId", "quantity", "status"}, []field{{"petId", "integer", "int64"}, {"quantity", "integer", ""}}},
		{"InventoryUpdate", []string{"quantity"}, []field{{"quantity", "integer", ""}}},
		{"Error", []string{"code", "message", "status"}, []field{{"code", "string", ""}, {"message", "string", ""}, {"status", "integer", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			s := c.Schema(tt.schema)
			if s == nil {
				t.Fatalf("schema %s missing", tt.schema)
			}
			got := slices.Clone(s.Model.Required)
			slices.Sort(got)
			want := slices.Clone(tt.required)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("required = %v; want %v", got, want)
			}
			for _, f := range tt.fields {
				p, ok := s.Model.Properties.Get(f.name)
				if !ok {
					t.Errorf("property %s missing", f.name)
					continue
				}
				ps := p.Schema()
				if !slices.Equal(ps.Type, []string{f.typ}) || ps.Format != f.format {
					t.Errorf("%s: type %v format %q; want %s %q", f.name, ps.Type, ps.Format, f.typ, f.format)
				}
			}
		})
	}
	status := c.Schema("PetStatus")
	if status == nil {
		t.Fatal("schema PetStatus missing")
	}
	var enum []string
	for _, n := range status.Model.Enum {
		enum = append(enum, n.Value)
	}
	if !slices.Equal(enum, []string{"available", "pending", "sold"}) {
		t.Errorf("PetStatus enum = %v; want available, pending, sold", enum)
	}
	item := c.Schema("InventoryItem")
	if p, _ := item.Model.Properties.Get("status"); p == nil || p.GetReference() != "#/components/schemas/PetStatus" {
		t.Errorf("InventoryItem.status does not refer to PetStatus")
	}
}

func TestOperations(t *testing.T) {
	c, err := Load(Document)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path, id string
		deprecated       bool
		stability        string
		statuses         []int
	}{
		{"GET", "/inventory", "listInventory", false, "", []int{200, 401}},
		{"PATCH", "/inventory/{petId}", "updateInventory", false, "experimental", []int{200, 400, 401, 404}},
		{"GET", "/pets/{petId}", "", true, "", []int{200, 401}},
		{"GET", "/store/orders", "", false, "", []int{200, 401}},
	}
	if len(c.Operations) != len(tests) {
		t.Errorf("operations = %d; want %d", len(c.Operations), len(tests))
	}
	for _, tt := range tests {
		var op *Operation
		for _, o := range c.Operations {
			if o.Method == tt.method && o.Path == tt.path {
				op = o
			}
		}
		if op == nil {
			t.Errorf("%s %s missing", tt.method, tt.path)
			continue
		}
		if op.ID != tt.id || op.Deprecated != tt.deprecated || op.Stability != tt.stability || !slices.Equal(op.Statuses, tt.statuses) {
			t.Errorf("%s %s = {id %q deprecated %v stability %q statuses %v}; want {%q %v %q %v}",
				tt.method, tt.path, op.ID, op.Deprecated, op.Stability, op.Statuses, tt.id, tt.deprecated, tt.stability, tt.statuses)
		}
		// Every operation needs the bearer key: none overrides the global requirement.
		if op.Operation.Security != nil {
			t.Errorf("%s %s overrides the global security requirement", tt.method, tt.path)
		}
		// Operations whose shape the contract does not give carry no response body schema.
		if tt.id == "" {
			if r, ok := op.Operation.Responses.Codes.Get("200"); ok && r.Content != nil && r.Content.Len() > 0 {
				t.Errorf("%s %s invents a response shape", tt.method, tt.path)
			}
		}
	}
	req := c.Model.Security
	if len(req) != 1 {
		t.Fatalf("global security = %d requirements; want 1", len(req))
	}
	if _, ok := req[0].Requirements.Get("bearerAuth"); !ok {
		t.Errorf("global security does not require bearerAuth")
	}
	scheme, _ := c.Model.Components.SecuritySchemes.Get("bearerAuth")
	if scheme == nil || scheme.Type != "http" || scheme.Scheme != "bearer" {
		t.Errorf("bearerAuth is not an HTTP bearer scheme: %+v", scheme)
	}
}

func TestLoadRejectsBrokenDocuments(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"not yaml", "{{{", "parse"},
		{"swagger 2", "swagger: '2.0'\ninfo: {title: x, version: '1'}\npaths: {}\n", "version"},
		{"missing info", "openapi: 3.0.3\npaths: {}\n", "not a valid OpenAPI document"},
		{"bad response code", "openapi: 3.0.3\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        abc: {description: x}\n", "not a valid OpenAPI document"},
		{"more bytes than the mock loads", string(Document) + "\n#" + strings.Repeat("x", MaxDocument), "more than the 2 MiB"},
		{"an enum past the bound", bigEnum(100_000), "an enum of 100003 values; the mock loads at most 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load() error = %v; want one containing %q", err, tt.want)
			}
		})
	}
}

func TestSchemaValidateJSON(t *testing.T) {
	c, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		value string
		want  string // "" for valid
	}{
		{`{"petId":1,"quantity":2,"status":"sold"}`, ""},
		{`{"petId":1,"quantity":2,"status":"gone"}`, "status"},
		{`{"petId":1,"quantity":"2","status":"sold"}`, "quantity: got string, want integer"},
		{`{"petId":1,"status":"sold"}`, "quantity"},
	}
	for _, tt := range tests {
		got := Join(c.Schema("InventoryItem").ValidateJSON([]byte(tt.value)))
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("ValidateJSON(%s) = %q; want %q", tt.value, got, tt.want)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := load(Document, false); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCheckResponse(t *testing.T) {
	c, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path string
		status             int
		body               string
		want               string // "" for valid, else a part of the problems
	}{
		{"list", "GET", "/v1/inventory", 200, `[{"petId":1,"quantity":2,"status":"sold"}]`, ""},
		{"list item wrong type", "GET", "/v1/inventory", 200, `[{"petId":1,"quantity":"2","status":"sold"}]`, "quantity"},
		{"list not an array", "GET", "/v1/inventory", 200, `{"petId":1,"quantity":2,"status":"sold"}`, "array"},
		{"update", "PATCH", "/v1/inventory/1", 200, `{"petId":1,"quantity":2,"status":"sold"}`, ""},
		{"update bad status", "PATCH", "/v1/inventory/1", 200, `{"petId":1,"quantity":2,"status":"gone"}`, "status"},
		{"error", "PATCH", "/v1/inventory/1", 404, `{"code":"not_found","message":"x","status":404}`, ""},
		{"error missing code", "PATCH", "/v1/inventory/1", 400, `{"message":"x","status":400}`, "code"},
		{"an error of the default response", "GET", "/v1/inventory", 503, `{"code":"unavailable","message":"x","status":503}`, ""},
		{"the default response without an Error", "GET", "/v1/inventory", 404, `{"status":404}`, "code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, _, _ := c.Match(tt.method, tt.path)
			got := Join(op.CheckResponse(tt.status, http.Header{"Content-Type": {"application/json"}}, []byte(tt.body)))
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("CheckResponse = %q; want %q", got, tt.want)
			}
		})
	}
}

// TestPlainIntegerParams checks the plain-integer fast path of path
// parameters (a petId is parsed, not run through JSON Schema) against the
// compiled schema it stands for.
func TestPlainIntegerParams(t *testing.T) {
	int32Doc := strings.Replace(string(Document), "          schema:\n            type: integer\n            format: int64\n      requestBody:", "          schema:\n            type: integer\n            format: int32\n      requestBody:", 1)
	for _, doc := range []string{string(Document), int32Doc} {
		c, err := Load([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		p := c.Operation("updateInventory").Params[0]
		if p.Schema.bits == 0 {
			t.Fatalf("petId (%s) is not taken as a plain integer", p.Schema.Model.Format)
		}
		slow := *p
		slow.Schema = &Schema{Model: p.Schema.Model, compiled: p.Schema.compiled} // bits 0: the schema runs
		for _, v := range []string{"1", "0", "-1", "01", "+1", "1.0", "1e2", "3.", "abc", " 1", "2147483647", "2147483648", "-2147483649",
			"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "99999999999999999999999"} {
			fast, full := Join(p.check([]string{v})), Join(slow.check([]string{v}))
			if fast != full {
				t.Errorf("%s petId %q: fast path %q; schema %q", p.Schema.Model.Format, v, fast, full)
			}
		}
	}
}

func TestSameRules(t *testing.T) {
	c, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	item, update := c.Schema("InventoryItem"), c.Schema("InventoryUpdate")
	if !item.Property("quantity").SameRules(update.Property("quantity")) {
		t.Error("quantity of InventoryItem and InventoryUpdate: not the same rules, though only their descriptions differ")
	}
	if item.Property("quantity").SameRules(item.Property("petId")) || item.SameRules(nil) {
		t.Error("petId (int64) has the same rules as quantity")
	}
}

// TestMatch pins which operation a path addresses: the template's
// segments exactly, so a trailing slash or an empty segment names no
// operation, as a server's router would have it.
func TestMatch(t *testing.T) {
	c, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		want         string // operationId; "" for none
		petID        string
	}{
		{"GET", "/v1/inventory", "listInventory", ""},
		{"PATCH", "/v1/inventory/3", "updateInventory", "3"},
		{"PATCH", "/v1/inventory/%33", "updateInventory", "3"},
		{"GET", "/v1/inventory/", "", ""},
		{"PATCH", "/v1/inventory/3/", "", ""},
		{"PATCH", "/v1/inventory//3", "", ""},
		{"PATCH", "/v1/inventory/", "", ""},
		{"GET", "/inventory", "", ""},
		{"GET", "/v1inventory", "", ""},
		{"GET", "/v2/inventory", "", ""},
	} {
		op, values, _ := c.Match(tc.method, tc.path)
		got := ""
		if op != nil {
			got = op.ID
		}
		if got != tc.want {
			t.Errorf("Match(%s %s) = %q; want %q", tc.method, tc.path, got, tc.want)
		}
		if tc.petID != "" && values["petId"] != tc.petID {
			t.Errorf("Match(%s %s) petId = %q; want %q", tc.method, tc.path, values["petId"], tc.petID)
		}
	}
}

// TestStaleExampleLoads checks that a document whose example no longer
// matches its schema loads, the example kept with its problems.
func TestStaleExampleLoads(t *testing.T) {
	doc := strings.Replace(string(Document), "required: [petId, quantity, status]", "required: [petId, quantity, status, updatedAt]", 1)
	c, err := Load([]byte(doc))
	if err != nil {
		t.Fatalf("Load() = %v; want the document loaded", err)
	}
	r := c.Operation("listInventory").Response(200)
	if ex := r.Example("one-of-each"); ex == nil || !strings.Contains(Join(ex.Problems), "[0].updatedAt: required") {
		t.Errorf("one-of-each = %+v; want it kept, with updatedAt: required among its problems", ex)
	}
	if ex := r.Example("empty"); ex == nil || len(ex.Problems) > 0 {
		t.Errorf("empty = %+v; want it kept, without problems", ex)
	}
}

// TestAdminBasePath checks that the admin API's base path, read without
// loading its document, is the one the loaded document has.
func TestAdminBasePath(t *testing.T) {
	admin, err := Admin()
	if err != nil {
		t.Fatal(err)
	}
	if got := AdminBasePath(); got != admin.BasePath || got == "" {
		t.Errorf("AdminBasePath() = %q; the loaded document's BasePath is %q", got, admin.BasePath)
	}
}

// bigEnum returns the embedded contract with n more values in the pets'
// status enum, which several schemas reference.
func bigEnum(n int) string {
	var b strings.Builder
	b.WriteString("enum: [available, pending, sold")
	for i := range n {
		fmt.Fprintf(&b, ", status%06d", i)
	}
	b.WriteString("]")
	return strings.Replace(string(Document), "enum: [available, pending, sold]", b.String(), 1)
}

// TestLoadWithinBounds: a document well within the bounds loads, and what
// the embedded contract renders to is far below MaxRendered.
func TestLoadWithinBounds(t *testing.T) {
	c, err := Load([]byte(bigEnum(2_000)))
	if err != nil {
		t.Fatalf("a 2,000-value enum: %v", err)
	}
	if got := c.compiler.rendered.Load(); got > MaxRendered/4 {
		t.Errorf("a 2,000-value enum rendered %d bytes; want well below the bound, %d", got, MaxRendered)
	}
	d, err := Load(Document)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.compiler.rendered.Load(); got > 1<<20 {
		t.Errorf("the embedded contract rendered %d bytes; want under 1 MiB", got)
	}
}
