package conformance

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/spec"
)

// fieldsDoc is a contract whose update body has a field of every kind of
// bound the suite reads; VERSION and the exclusive bounds' form change per
// case.
const fieldsDoc = `openapi: VERSION
info: {title: t, version: "1"}
servers: [{url: /v1}]
paths:
  /items:
    get:
      responses:
        '200':
          description: list
          content:
            application/json:
              schema: {type: array, items: {$ref: '#/components/schemas/Item'}}
  /items/{id}:
    patch:
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer, format: int64, minimum: 1, maximum: 100}}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Update'}
      responses:
        '200':
          description: item
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Item'}
components:
  schemas:
    Item:
      type: object
      required: [id, price, lots, weight, half, code, name, mail, uid, color, rank]
      properties: &props
        id: {type: integer, format: int64}
        price: {type: number, minimum: 10, EXCLMAX}
        lots: {type: integer, minimum: 3, maximum: 21, multipleOf: 5}
        weight: {type: number, EXCLMIN, maximum: 0.5}
        half: {type: number, multipleOf: 0.25, minimum: -1, maximum: 1}
        code: {type: string, pattern: '^[A-Z]{3}-[0-9]{2}$'}
        name: {type: string, minLength: 12, maxLength: 14}
        mail: {type: string, format: email}
        uid: {type: string, format: uuid}
        color: {type: string, enum: [red, green]}
        rank: {type: integer, enum: [1, 2, 3]}
        note: {type: number, minimum: 1, maximum: 2}
    Update:
      type: object
      required: [price]
      properties: *props
`

func loadFields(t *testing.T, version string) *Target {
	t.Helper()
	doc := strings.ReplaceAll(fieldsDoc, "VERSION", version)
	if version == "3.0.3" {
		doc = strings.NewReplacer("EXCLMAX", "maximum: 20.5, exclusiveMaximum: true", "EXCLMIN", "minimum: 0, exclusiveMinimum: true").Replace(doc)
	} else {
		doc = strings.NewReplacer("EXCLMAX", "exclusiveMaximum: 20.5", "EXCLMIN", "exclusiveMinimum: 0").Replace(doc)
	}
	c, err := spec.Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewTarget(Config{BaseURL: "http://127.0.0.1:1/v1", Contract: c})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func rat(s string) *big.Rat { r, _ := new(big.Rat).SetString(s); return r }

// TestFieldBounds: every bound of the schema is read into the field model,
// in OpenAPI 3.0's form and 3.1's, and every value the suite chooses lies
// within them: the schema accepts it.
func TestFieldBounds(t *testing.T) {
	for _, version := range []string{"3.0.3", "3.1.0"} {
		s := loadFields(t, version).Inventory()
		f := s.Body.Field
		if p := f("price"); p.Min.Value.Cmp(rat("10")) != 0 || p.Min.Exclusive || p.Max.Value.Cmp(rat("20.5")) != 0 || !p.Max.Exclusive {
			t.Errorf("%s: price %v..%v; want 10 <= price < 20.5", version, p.Min, p.Max)
		}
		if w := f("weight"); w.Min.Value.Sign() != 0 || !w.Min.Exclusive {
			t.Errorf("%s: weight minimum %v; want 0, exclusive", version, w.Min)
		}
		if l := f("lots"); l.MultipleOf.Cmp(rat("5")) != 0 || l.Lowest().Int64() != 3 || l.Highest().Int64() != 21 {
			t.Errorf("%s: lots multipleOf %s, %s..%s", version, l.MultipleOf, l.Lowest(), l.Highest())
		}
		if h := f("half"); h.MultipleOf.Cmp(rat("0.25")) != 0 {
			t.Errorf("%s: half multipleOf %s; want 1/4", version, h.MultipleOf)
		}
		if n := f("name"); n.MinLength != 12 || n.MaxLength != 14 {
			t.Errorf("%s: name lengths %d..%d", version, n.MinLength, n.MaxLength)
		}
		if c := f("code"); len(c.Patterns) != 1 || c.Patterns[0] != "^[A-Z]{3}-[0-9]{2}$" {
			t.Errorf("%s: code patterns %q", version, c.Patterns)
		}
		if f("mail").Format != "email" || len(f("rank").Enum) != 3 || len(f("color").Enum) != 2 {
			t.Errorf("%s: format %q, enums %s %s", version, f("mail").Format, f("rank").Enum, f("color").Enum)
		}
		if id := s.ID; id.Lowest().Int64() != 1 || id.Highest().Int64() != 100 || id.Schema == nil {
			t.Errorf("%s: petId bounds %s..%s, schema %v", version, id.Lowest(), id.Highest(), id.Schema != nil)
		}
		for _, fl := range s.Body.Fields {
			if fl.Schema == nil {
				t.Fatalf("%s: %s has no compiled schema", version, fl.Name)
			}
			for n := range 40 {
				v := fl.ValueFor(nil, n)
				d, _ := spec.DecodeJSON(v)
				if ps := fl.Schema.Validate(d); len(ps) > 0 {
					t.Errorf("%s: value %d of %s, %s: %v", version, n, fl.Name, v, ps)
				}
			}
		}
		// The grid of weight (0 < weight <= 0.5) is tenths: no whole number fits.
		if g, ok := f("weight").Grid(true); !ok || string(spec.NumberJSON(g.Value(g.Lo))) != "0.1" {
			t.Errorf("%s: weight's first value %v; want 0.1", version, g)
		}
	}
}

// TestProbesBreakTheBounds: each probe past a bound is one the schema
// refuses, and the names say which bound.
func TestProbesBreakTheBounds(t *testing.T) {
	s := loadFields(t, "3.0.3")
	cur := s.Prototype()
	want := []string{"price 9 (below the lowest, 10)", "price 20.5 (above the highest, exclusive, 20.5)", "lots 2 (below the lowest, 3)",
		"lots 22 (above the highest, 21)", "lots 6 (not a multiple of 5)", "half -0.875 (not a multiple of 0.25)", "weight 0 (below the lowest, exclusive, 0)",
		"name shorter than 12 characters (minLength)", "name longer than 14 characters (maxLength)", "code not matching its pattern"}
	got := map[string]Body{}
	for _, b := range s.InvalidBodies(cur) {
		got[b.Name] = b
	}
	for _, w := range want {
		b, ok := got[w]
		if !ok {
			t.Errorf("no invalid body %q", w)
			continue
		}
		d, _ := spec.DecodeJSON(b.Raw)
		if ps := s.Inventory().Body.Schema.Validate(d); len(ps) == 0 {
			t.Errorf("%s: %s passes the schema", w, b.Raw)
		}
	}
	for _, b := range s.AtBounds(cur) {
		d, _ := spec.DecodeJSON(b.Raw)
		if ps := s.Inventory().Body.Schema.Validate(d); len(ps) > 0 {
			t.Errorf("%s: %s fails the schema: %v", b.Name, b.Raw, ps)
		}
	}
}

// TestNoInventedOptionalFields: a body built for a record without an
// optional field never sets it; only the required ones are invented.
func TestNoInventedOptionalFields(t *testing.T) {
	s := loadFields(t, "3.0.3")
	cur := Record{ID: 7, JSON: []byte(`{"id":7,"lots":10}`)} // no price (required in the body), no note
	has := func(b []byte, field string) bool {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(b, &m)
		_, ok := m[field]
		return ok
	}
	bodies := map[string][]byte{"harmless": s.Harmless(cur), "write": s.Write(cur, 3).Raw}
	for _, b := range append(s.SilentBodies(cur), s.AtBounds(cur)...) {
		bodies[b.Name] = b.Raw
	}
	for name, b := range bodies {
		if has(b, "note") || has(b, "weight") {
			t.Errorf("%s: %s sets an optional field the record lacks", name, b)
		}
		if !has(b, "price") {
			t.Errorf("%s: %s lacks price, which the body requires", name, b)
		}
	}
	if w := s.Write(cur, 3); w.Sets["lots"] == nil || string(w.Sets["lots"]) == "10" {
		t.Errorf("Write changes %v; want lots changed", w.Sets)
	}
}

// TestSilentBodiesFromValues: every silent body is one JSON value built
// from values, also for a record whose answer writes its integers as
// decimals (5.0 must give 5.0, never 5.0.0).
func TestSilentBodiesFromValues(t *testing.T) {
	s := loadFields(t, "3.0.3")
	for _, cur := range []Record{s.Prototype(), {ID: 7, JSON: []byte(`{"id":7.0,"price":12,"lots":10.0,"rank":2e0}`)}} {
		decimal := false
		for _, b := range s.SilentBodies(cur) {
			if !json.Valid(b.Raw) {
				t.Errorf("%s: %s is not JSON", b.Name, b.Raw)
			}
			if strings.Contains(b.Name, "written as a decimal") {
				decimal = true
				if !strings.Contains(string(b.Raw), `"lots":10.0`) && !strings.Contains(string(b.Raw), `"lots":5.0`) && !strings.Contains(string(b.Raw), ".0") {
					t.Errorf("%s: %s has no value written with a fraction part", b.Name, b.Raw)
				}
			}
		}
		if !decimal {
			t.Errorf("%s: no body writes an integer as a decimal", cur.JSON)
		}
	}
}
