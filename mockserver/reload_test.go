package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
)

// edited returns the embedded contract with edits, loaded.
func edited(t testing.TB, edits ...edit) *spec.Contract {
	t.Helper()
	doc, err := specVariant{about: "edited", edits: edits}.make(spec.Document)
	if err != nil {
		t.Fatal(err)
	}
	c, err := spec.Load(doc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Edits of the contract a reload meets.
var (
	addNote          = set("components.schemas.InventoryItem.properties.note", "{type: string}")
	dropStatus       = []edit{del("components.schemas.InventoryItem.properties.status"), set("components.schemas.InventoryItem.required", "[petId, quantity]")}
	requireShelf     = []edit{set("components.schemas.InventoryItem.properties.shelf", "{type: string, default: A1}"), set("components.schemas.InventoryItem.required", "[petId, quantity, status, shelf]")}
	requireNoDefault = []edit{set("components.schemas.InventoryItem.properties.shelf", "{type: string}"), set("components.schemas.InventoryItem.required", "[petId, quantity, status, shelf]")}
	updateSetsStatus = set("components.schemas.InventoryUpdate.properties.status", "$ref: '#/components/schemas/PetStatus'")
	boundUpdate      = set("components.schemas.InventoryUpdate.properties.quantity.maximum", "1000")
	newEnumValue     = set("components.schemas.PetStatus.enum", "[available, pending, sold, reserved]")
)

// TestReload puts edited contracts in force one after the other, without
// a restart, and checks what the next requests get: state kept, records
// reshaped, new request rules applied, and edits that cannot be served
// refused with the old contract still serving.
func TestReload(t *testing.T) {
	type check struct {
		r      req
		status int
		want   string // a part of the body
		absent string // not in the body
	}
	for _, tt := range []struct {
		name   string
		before []req // sent under the embedded contract
		edits  []edit
		err    string // Reload refuses the edit with this; "": it loads
		after  []check
	}{
		{
			name:  "a new optional field is absent until written",
			edits: []edit{addNote},
			after: []check{
				{get("/v1/inventory"), 200, `{"petId":1,"quantity":5,"status":"pending"}`, `"note"`},
				{patch("/v1/inventory/1", `{"quantity":6}`), 200, `{"petId":1,"quantity":6,"status":"pending"}`, `"note"`},
			},
		},
		{
			name:   "a removed field is dropped from answers, its value kept",
			before: []req{patch("/v1/inventory/2", `{"quantity":70}`)},
			edits:  dropStatus,
			after: []check{
				{get("/v1/inventory"), 200, `{"petId":2,"quantity":70}`, `"status"`},
				{req{method: "GET", path: "/__admin/records?filter=petId:2"}, 200, `{"petId":2,"quantity":70}`, `"status"`},
			},
		},
		{
			name:  "a required field with a default is served with it",
			edits: requireShelf,
			after: []check{
				{get("/v1/inventory"), 200, `{"petId":1,"quantity":5,"status":"pending","shelf":"A1"}`, ""},
				{patch("/v1/inventory/1", `{"quantity":1}`), 200, `{"petId":1,"quantity":1,"status":"pending","shelf":"A1"}`, ""},
			},
		},
		{
			name:  "a new request field applies to the next request",
			edits: []edit{updateSetsStatus, newEnumValue},
			after: []check{
				{patch("/v1/inventory/3", `{"quantity":1,"status":"reserved"}`), 200, `"status":"reserved"`, ""},
				{patch("/v1/inventory/3", `{"quantity":1,"status":"lost"}`), 400, `status: \"lost\" is not one of`, ""},
			},
		},
		{
			name:  "a new bound applies to the next request",
			edits: []edit{boundUpdate},
			after: []check{
				{patch("/v1/inventory/3", `{"quantity":1000}`), 200, `"quantity":1000`, ""},
				{patch("/v1/inventory/3", `{"quantity":1001}`), 400, "above the maximum 1000", ""},
			},
		},
		{
			name:  "a required field without a default is refused",
			edits: requireNoDefault,
			err:   "the record with petId 1 does not fit InventoryItem as the new contract serves it: shelf: required",
		},
		{
			name:  "an enum that no longer holds a stored value is refused",
			edits: []edit{set("components.schemas.PetStatus.enum", "[available, pending]")},
			err:   `status: "sold" is not one of "available", "pending"`,
		},
		{
			name:   "a bound a session's record breaks is refused, naming the session",
			before: []req{{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity":5000}`, header: http.Header{SessionHeader: {"team-a"}}}},
			edits:  []edit{boundUpdate},
			err:    "session team-a: the record with petId 3 does not fit InventoryItem",
		},
		{
			name:  "a contract without a list is refused",
			edits: []edit{del("paths./inventory.get")},
			err:   "no list of records",
		},
		{
			name:  "an Error schema the mock's Error does not fit is refused",
			edits: []edit{set("components.schemas.Error.properties.status.type", "string")},
			err:   "does not accept the mock's Error body",
		},
		{
			name: "a new key field is refused",
			edits: []edit{
				set("components.schemas.InventoryItem.properties.sku", "{type: integer, format: int64}"),
				set("components.schemas.InventoryItem.required", "[petId, quantity, status, sku]"),
				set("paths./inventory/{sku}", `{patch: {operationId: updateInventory, parameters: [{name: sku, in: path, required: true, schema: {type: integer, format: int64}}],
					requestBody: {required: true, content: {application/json: {schema: {$ref: '#/components/schemas/InventoryUpdate'}}}},
					responses: {'200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/InventoryItem'}}}}, '401': {$ref: '#/components/responses/Unauthorized'}}}}`),
				del("paths./inventory/{petId}"),
			},
			err: "the record's key would change from petId to sku",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(c *Config) { c.Reloadable = true })
			for _, r := range tt.before {
				if got := serve(t, s, r); got.status != 200 {
					t.Fatalf("before: %s %s: %d %s", r.method, r.path, got.status, got.body)
				}
			}
			old := s.Contract()
			err := s.Reload(context.Background(), edited(t, tt.edits...))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Reload = %v; want an error with %q", err, tt.err)
				}
				if s.Contract() != old {
					t.Error("the refused contract is in force")
				}
				if got := serve(t, s, get("/v1/inventory")); got.status != 200 || !strings.Contains(string(got.body), `"status":"sold"`) {
					t.Errorf("after a refused edit, the list: %d %s", got.status, got.body)
				}
				return
			}
			if err != nil {
				t.Fatalf("Reload: %v", err)
			}
			for _, c := range tt.after {
				got := serve(t, s, c.r)
				if got.status != c.status || !strings.Contains(string(got.body), c.want) || c.absent != "" && strings.Contains(string(got.body), c.absent) {
					t.Errorf("%s %s: %d %s; want %d with %q, without %q", c.r.method, c.r.path, got.status, got.body, c.status, c.want, c.absent)
				}
				if op := operationOf(s.Contract(), c.r.method, c.r.path); op != nil {
					if ps := op.CheckResponse(got.status, got.header, got.body); len(ps) > 0 {
						t.Errorf("%s %s: the answer breaks the contract in force: %s", c.r.method, c.r.path, spec.Join(ps))
					}
				}
			}
		})
	}
}

// TestReloadRevert: a field an edit removes stays in the store, unserved,
// a write included, and comes back with its value when the edit is
// reverted.
func TestReloadRevert(t *testing.T) {
	s := newServer(t, func(c *Config) { c.Reloadable = true })
	orig := s.Contract()
	if err := s.Reload(context.Background(), edited(t, dropStatus...)); err != nil {
		t.Fatal(err)
	}
	if r := serve(t, s, patch("/v1/inventory/2", `{"quantity":3}`)); r.status != 200 || string(r.body) != `{"petId":2,"quantity":3}`+"\n" {
		t.Fatalf("write under the edit: %d %s", r.status, r.body)
	}
	if err := s.Reload(context.Background(), orig); err != nil {
		t.Fatal(err)
	}
	r := serve(t, s, get("/v1/inventory"))
	for _, want := range []string{`{"petId":1,"quantity":5,"status":"pending"}`, `{"petId":2,"quantity":3,"status":"available"}`} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("after the revert, the list lacks %s: %s", want, r.body)
		}
	}
}

// TestReloadUnderLoad reloads between two contracts while clients list and
// write: every answer is a success valid against one of them, and the
// writes are all kept. Run with -race.
func TestReloadUnderLoad(t *testing.T) {
	s := newServer(t, func(c *Config) { c.Reloadable = true })
	a, b := s.Contract(), edited(t, addNote, boundUpdate, updateSetsStatus)
	listA, listB := a.Operations[0], b.Operations[0]
	if listA.Method != "GET" || listB.Method != "GET" {
		t.Fatal("the first operation is not the list")
	}
	var stop atomic.Bool
	var writes [4]atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for c := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				r := httptest.NewRequest("GET", "/v1/inventory", nil)
				if i%2 == 1 {
					r = httptest.NewRequest("PATCH", fmt.Sprintf("/v1/inventory/%d", c+1), strings.NewReader(fmt.Sprintf(`{"quantity":%d}`, i)))
					r.Header.Set("Content-Type", "application/json")
				}
				r.Header.Set("Authorization", "Bearer "+testKey)
				w := httptest.NewRecorder()
				s.ServeHTTP(w, r)
				if w.Code != 200 {
					errs <- fmt.Sprintf("%s %s: %d %s", r.Method, r.URL, w.Code, w.Body)
					return
				}
				if i%2 == 1 {
					writes[c].Store(int64(i))
					continue
				}
				if listA.CheckResponse(200, w.Header(), w.Body.Bytes()) != nil && listB.CheckResponse(200, w.Header(), w.Body.Bytes()) != nil {
					errs <- fmt.Sprintf("a list valid against neither contract: %s", w.Body)
					return
				}
			}
		})
	}
	for i := range 30 {
		next := b
		if i%2 == 1 {
			next = a
		}
		if err := s.Reload(context.Background(), next); err != nil {
			t.Errorf("reload %d: %v", i, err)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	var items []item
	if err := json.Unmarshal(listed(t, s), &items); err != nil {
		t.Fatal(err)
	}
	for c := range 4 {
		if got, want := items[c].Quantity, writes[c].Load(); want > 0 && got != want {
			t.Errorf("pet %d: quantity %d; want the last write, %d", c+1, got, want)
		}
	}
}

// TestHealthSaysTheContract: /healthz names the document in force.
func TestHealthSaysTheContract(t *testing.T) {
	s := newServer(t, func(c *Config) { c.Reloadable = true })
	health := func() map[string]any {
		r := serve(t, s, req{method: "GET", path: "/healthz", auth: "-"})
		var h struct {
			Contract map[string]any `json:"contract"`
		}
		if err := json.Unmarshal(r.body, &h); err != nil || r.status != 200 {
			t.Fatalf("/healthz: %d %s", r.status, r.body)
		}
		return h.Contract
	}
	before := health()
	if before["title"] != "Pet Store Inventory Service" || before["version"] != "1.0.0" || len(before["sha256"].(string)) != 64 {
		t.Errorf("/healthz contract = %v", before)
	}
	if err := s.Reload(context.Background(), edited(t, addNote, set("info.version", "1.1.0"))); err != nil {
		t.Fatal(err)
	}
	after := health()
	if after["version"] != "1.1.0" || after["sha256"] == before["sha256"] {
		t.Errorf("after a reload, /healthz contract = %v; before %v", after, before)
	}
}

// A gatedStore holds each Update until released, as a write waiting for
// the record's lock or a slow store would.
type gatedStore struct {
	store.Store
	entered, release chan struct{}
}

func (g *gatedStore) Update(ctx context.Context, session string, id int64, change func(fixtures.Record) (fixtures.Record, error)) (fixtures.Record, error) {
	g.entered <- struct{}{}
	<-g.release
	return g.Store.Update(ctx, session, id, change)
}

// TestReloadJudgesAWriteInFlight: a PATCH validated under one contract
// and applied after a reload that forbids its value is refused, 400 with
// the new contract's reason, and nothing is stored; one the new contract
// allows is stored.
func TestReloadJudgesAWriteInFlight(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		status     int
		quantity   string // pet 1's quantity after the write
	}{
		{"a value the new contract forbids", `{"quantity":1500}`, 400, `"quantity":5,`},
		{"a value both allow", `{"quantity":900}`, 200, `"quantity":900,`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := &gatedStore{Store: store.NewMemory(testRecords(t), store.Options{}), entered: make(chan struct{}), release: make(chan struct{})}
			s := newServer(t, func(c *Config) { c.Store, c.Reloadable = g, true })
			done := make(chan result)
			go func() { done <- serve(t, s, patch("/v1/inventory/1", tt.body)) }()
			<-g.entered
			if err := s.Reload(context.Background(), edited(t, boundUpdate)); err != nil {
				t.Fatal(err)
			}
			close(g.release)
			r := <-done
			if r.status != tt.status {
				t.Errorf("PATCH %s across the reload: %d %s; want %d", tt.body, r.status, r.body, tt.status)
			}
			if tt.status == 400 && !strings.Contains(string(r.body), "1000") {
				t.Errorf("the refusal does not give the new maximum: %s", r.body)
			}
			if l := serve(t, s, get("/v1/inventory")); !strings.Contains(string(l.body), `{"petId":1,`+tt.quantity) {
				t.Errorf("pet 1 after the write: %s; want %s", l.body, tt.quantity)
			}
		})
	}
}
