package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/petstore/inventory-kit/spec"
)

// A Shape is what the checks need to know about the contract, read from
// the loaded document: which operation lists the records, which one
// updates one of them, the record's fields, the update body's fields,
// their types, enums and bounds. Nothing in it is typed twice; a variant
// of the document (a new enum value, bounds on a field, a new operation)
// changes the Shape and so what the checks send and expect.
type Shape struct {
	Contract *spec.Contract
	// List is the operation that returns every record: a GET without path
	// parameters whose 200 answer is an array of objects.
	List *spec.Operation
	// Update is the operation that writes one record: a PATCH (or PUT)
	// with one path parameter and a JSON object body whose 200 answer is a
	// record.
	Update *spec.Operation
	// IDField names the record's identifier: the update's path parameter,
	// which the record carries as a field (petId).
	IDField string
	// ID describes the identifier as a path parameter (type, format, bounds).
	ID *Field
	// Item is the record's schema; UpdateBody the update's request body.
	Item, UpdateBody *Object
	// Operations holds every operation of the document with what the checks
	// need to call it.
	Operations []*OpShape
}

// An OpShape is one operation as the checks see it.
type OpShape struct {
	Op *spec.Operation
	// PathParams are the operation's path parameters, in the order the
	// path names them.
	PathParams []*Field
	// Shaped reports whether the document gives a response body for at
	// least one 2xx status. Where it gives none (GET /pets/{petId}, GET
	// /store/orders), 501 is an honest answer.
	Shaped bool
	// ReturnsItem reports whether the 200 answer is one record.
	ReturnsItem bool
	// Body is the JSON request body, nil for none.
	Body *Object
	// BodyRequired reports whether the document requires the body.
	BodyRequired bool
}

// Name names the operation: its operationId, or "GET /pets/{petId}".
func (o *OpShape) Name() string { return OpName(o.Op) }

// Writes reports whether the operation may change data: any method but
// GET, HEAD and OPTIONS.
func (o *OpShape) Writes() bool {
	return o.Op.Method != http.MethodGet && o.Op.Method != http.MethodHead && o.Op.Method != http.MethodOptions
}

// Addresses reports whether one of the operation's path parameters is
// named field (the record's identifier, petId).
func (o *OpShape) Addresses(field string) bool {
	for _, f := range o.PathParams {
		if f.Name == field {
			return true
		}
	}
	return false
}

// An Object is an object schema: its fields in the document's order.
type Object struct {
	Ref           string // the component it comes from, such as #/components/schemas/InventoryItem
	Fields        []*Field
	Required      []string
	MinProperties int
	// Closed reports additionalProperties: false; an unknown field is then
	// invalid rather than a case the contract is silent on.
	Closed bool
	// Schema is the object's schema, compiled, where the suite sends it (a
	// request body): a body built is checked against it. Nil elsewhere.
	Schema *spec.Schema
}

// Field returns the named field, or nil.
func (o *Object) Field(name string) *Field {
	if o == nil {
		return nil
	}
	for _, f := range o.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Names lists the object's field names in the document's order.
func (o *Object) Names() []string {
	names := make([]string, len(o.Fields))
	for i, f := range o.Fields {
		names[i] = f.Name
	}
	return names
}

// A Field is one property (or path parameter) with the facts of its schema.
type Field struct {
	Name     string
	Type     string // integer, number, string, boolean, object, array; empty if not given
	Format   string
	Enum     []string          // the enum's string values
	EnumJSON []json.RawMessage // every enum value, as JSON
	Required bool
	Nullable bool
	// Minimum and Maximum are the numeric bounds the schema states, as it
	// writes them, nil where it states none; ExclusiveMinimum and
	// ExclusiveMaximum say whether the bound itself is left out (OpenAPI
	// 3.0's boolean form and 3.1's numeric form both end up here).
	Minimum, Maximum                   *big.Rat
	ExclusiveMinimum, ExclusiveMaximum bool
	// MultipleOf is the schema's multipleOf, nil for none.
	MultipleOf *big.Rat
	// Min and Max are the smallest and largest integers the stated bounds
	// allow (integers only), nil where none is stated.
	Min, Max *big.Int
	// FormatMin and FormatMax are the bounds the format implies (int32,
	// int64), nil for none.
	FormatMin, FormatMax *big.Int
	// MinLength and MaxLength bound a string's length in characters
	// (MaxLength -1: no bound); Pattern is the regular expression it
	// must match, empty for none.
	MinLength, MaxLength int
	Pattern              string
	// Schema is the field's schema, compiled, where the suite sends the
	// field (request bodies, path parameters): a value chosen is checked
	// against it before it is sent. Nil elsewhere.
	Schema *spec.Schema
}

// Lowest returns the smallest integer the schema allows, or nil when it
// states no lower bound (format included).
func (f *Field) Lowest() *big.Int { return tighter(f.Min, f.FormatMin, 1) }

// Highest returns the largest integer the schema allows, or nil.
func (f *Field) Highest() *big.Int { return tighter(f.Max, f.FormatMax, -1) }

// tighter returns the bound of a and b that admits less: the larger lower
// bound (sign 1) or the smaller upper bound (sign -1).
func tighter(a, b *big.Int, sign int) *big.Int {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.Cmp(b)*sign >= 0:
		return a
	}
	return b
}

// SafeRange returns the integers the suite writes expecting them
// accepted, as a range of int64: the smallest and largest value of the
// field's grid (Field.Grid), within the stated bounds and multipleOf, or
// where the contract is silent stock counts from 0 to 1000.
func (f *Field) SafeRange() (lo, hi int64) {
	g, ok := f.Grid(true)
	if !ok {
		return 0, 0
	}
	return clampInt64(g.Value(g.Lo).Num()), clampInt64(g.Value(g.Hi).Num())
}

// Bounded reports whether the schema states any integer bound for f.
func (f *Field) Bounded() bool { return f.Lowest() != nil || f.Highest() != nil }

func clampInt64(b *big.Int) int64 {
	switch {
	case b.IsInt64():
		return b.Int64()
	case b.Sign() > 0:
		return math.MaxInt64
	}
	return math.MinInt64
}

// ReadShape reads the Shape of a contract. It fails when the document has
// no list operation or no update operation the suite can recognise.
func ReadShape(c *spec.Contract) (*Shape, error) {
	s := &Shape{Contract: c}
	for _, o := range c.Operations {
		os, err := readOp(o)
		if err != nil {
			return nil, err
		}
		s.Operations = append(s.Operations, os)
	}
	// The list: a GET without path parameters answering an array of objects.
	for _, os := range s.Operations {
		if os.Op.Method != http.MethodGet || len(os.PathParams) > 0 {
			continue
		}
		if items := arrayItems(okSchema(os.Op)); items != nil {
			obj, err := readObject(items)
			if err == nil && len(obj.Fields) > 0 {
				s.List, s.Item = os.Op, obj
				break
			}
		}
	}
	if s.List == nil {
		return nil, errors.New("the document has no list operation (a GET without path parameters whose 200 answer is an array of objects)")
	}
	// The update: one path parameter the record carries, a JSON object body.
	for _, os := range s.Operations {
		if !os.Writes() || len(os.PathParams) != 1 || os.Body == nil || s.Item.Field(os.PathParams[0].Name) == nil {
			continue
		}
		s.Update, s.UpdateBody, s.IDField, s.ID = os.Op, os.Body, os.PathParams[0].Name, os.PathParams[0]
		break
	}
	if s.Update == nil {
		return nil, errors.New("the document has no update operation (a write with one path parameter the listed records carry and a JSON object body)")
	}
	for _, os := range s.Operations {
		if sc := okSchema(os.Op); sc != nil && os.Op.Method == http.MethodGet {
			if obj, err := readObject(sc); err == nil && sameObject(obj, s.Item) {
				os.ReturnsItem = true
			}
		}
		if os.Op == s.Update {
			os.ReturnsItem = true
		}
	}
	return s, nil
}

// Op returns the OpShape of o.
func (s *Shape) Op(o *spec.Operation) *OpShape {
	for _, os := range s.Operations {
		if os.Op == o {
			return os
		}
	}
	return nil
}

// readOp reads the facts of one operation.
func readOp(o *spec.Operation) (*OpShape, error) {
	os := &OpShape{Op: o}
	params := map[string]*v3.Parameter{}
	if o.PathItem != nil {
		for _, p := range o.PathItem.Parameters {
			params[p.In+" "+p.Name] = p
		}
	}
	if o.Operation != nil {
		for _, p := range o.Operation.Parameters {
			params[p.In+" "+p.Name] = p
		}
	}
	for _, seg := range strings.Split(o.Path, "/") {
		name, ok := strings.CutPrefix(seg, "{")
		if !ok {
			continue
		}
		name = strings.TrimSuffix(name, "}")
		f := &Field{Name: name, Required: true, MaxLength: -1}
		if p := params["path "+name]; p != nil && p.Schema != nil {
			if sc := p.Schema.Schema(); sc != nil {
				readScalar(f, sc)
			}
		}
		for _, p := range o.Params {
			if p.In == "path" && p.Name == name {
				f.Schema = p.Schema
			}
		}
		os.PathParams = append(os.PathParams, f)
	}
	if o.Operation == nil {
		return os, nil
	}
	if o.Operation.Responses != nil && o.Operation.Responses.Codes != nil {
		for code, r := range o.Operation.Responses.Codes.FromOldest() {
			if strings.HasPrefix(code, "2") && r != nil && r.Content != nil && r.Content.Len() > 0 {
				os.Shaped = true
			}
		}
	}
	if rb := o.Operation.RequestBody; rb != nil && rb.Content != nil {
		os.BodyRequired = rb.Required != nil && *rb.Required
		if mt, ok := rb.Content.Get("application/json"); ok && mt != nil && mt.Schema != nil {
			obj, err := readObject(mt.Schema)
			if err != nil {
				return nil, fmt.Errorf("%s: request body: %v", OpName(o), err)
			}
			if o.Body != nil && o.Body.Schema != nil {
				obj.Schema = o.Body.Schema
				for _, f := range obj.Fields {
					f.Schema = o.Body.Schema.Property(f.Name)
				}
			}
			os.Body = obj
		}
	}
	return os, nil
}

// ResponseContent reports whether the document gives a body for status
// on o: false where it documents the status without content, or not at all.
func ResponseContent(o *spec.Operation, status int) bool {
	if o == nil {
		return false
	}
	r := o.Response(status)
	return r != nil && len(r.MediaTypes) > 0
}

// okSchema returns the application/json schema of o's 200 answer, or nil.
func okSchema(o *spec.Operation) *base.SchemaProxy {
	if o.Operation == nil || o.Operation.Responses == nil || o.Operation.Responses.Codes == nil {
		return nil
	}
	r, ok := o.Operation.Responses.Codes.Get("200")
	if !ok || r == nil || r.Content == nil {
		return nil
	}
	mt, ok := r.Content.Get("application/json")
	if !ok || mt == nil {
		return nil
	}
	return mt.Schema
}

// arrayItems returns the items schema of an array schema, or nil.
func arrayItems(p *base.SchemaProxy) *base.SchemaProxy {
	if p == nil {
		return nil
	}
	sc := p.Schema()
	if sc == nil || !slices.Contains(sc.Type, "array") || sc.Items == nil || !sc.Items.IsA() {
		return nil
	}
	return sc.Items.A
}

// readObject reads an object schema.
func readObject(p *base.SchemaProxy) (*Object, error) {
	sc := p.Schema()
	if sc == nil {
		return nil, fmt.Errorf("schema %s cannot be read: %v", p.GetReference(), p.GetBuildError())
	}
	if len(sc.Type) > 0 && !slices.Contains(sc.Type, "object") {
		return nil, fmt.Errorf("schema %s is not an object", p.GetReference())
	}
	obj := &Object{Ref: p.GetReference(), Required: sc.Required}
	if sc.MinProperties != nil {
		obj.MinProperties = int(*sc.MinProperties)
	}
	if ap := sc.AdditionalProperties; ap != nil && ap.IsB() && !ap.B {
		obj.Closed = true
	}
	if sc.Properties != nil {
		for name, fp := range sc.Properties.FromOldest() {
			f := &Field{Name: name, Required: slices.Contains(sc.Required, name), MaxLength: -1}
			if fs := fp.Schema(); fs != nil {
				readScalar(f, fs)
			}
			obj.Fields = append(obj.Fields, f)
		}
	}
	return obj, nil
}

// readScalar reads type, format, enum, nullability, bounds, multipleOf,
// lengths and pattern into f.
func readScalar(f *Field, sc *base.Schema) {
	for _, t := range sc.Type {
		if t == "null" {
			f.Nullable = true
		} else if f.Type == "" {
			f.Type = t
		}
	}
	if sc.Nullable != nil && *sc.Nullable {
		f.Nullable = true
	}
	f.Format = sc.Format
	for _, n := range sc.Enum {
		if n == nil {
			continue
		}
		switch n.Tag {
		case "!!str":
			f.Enum = append(f.Enum, n.Value)
			f.EnumJSON = append(f.EnumJSON, jsonString(n.Value))
		case "!!null":
			f.EnumJSON = append(f.EnumJSON, json.RawMessage("null"))
		default:
			f.EnumJSON = append(f.EnumJSON, json.RawMessage(n.Value))
		}
	}
	f.MaxLength = -1
	if sc.MinLength != nil {
		f.MinLength = int(*sc.MinLength)
	}
	if sc.MaxLength != nil {
		f.MaxLength = int(*sc.MaxLength)
	}
	f.Pattern = sc.Pattern
	if sc.MultipleOf != nil && *sc.MultipleOf > 0 {
		f.MultipleOf = ratOf(*sc.MultipleOf)
	}
	if sc.Minimum != nil {
		f.Minimum = ratOf(*sc.Minimum)
		f.ExclusiveMinimum = sc.ExclusiveMinimum != nil && sc.ExclusiveMinimum.IsA() && sc.ExclusiveMinimum.A
	}
	if em := sc.ExclusiveMinimum; em != nil && em.IsB() {
		if b := ratOf(em.B); f.Minimum == nil || b.Cmp(f.Minimum) >= 0 {
			f.Minimum, f.ExclusiveMinimum = b, true
		}
	}
	if sc.Maximum != nil {
		f.Maximum = ratOf(*sc.Maximum)
		f.ExclusiveMaximum = sc.ExclusiveMaximum != nil && sc.ExclusiveMaximum.IsA() && sc.ExclusiveMaximum.A
	}
	if em := sc.ExclusiveMaximum; em != nil && em.IsB() {
		if b := ratOf(em.B); f.Maximum == nil || b.Cmp(f.Maximum) <= 0 {
			f.Maximum, f.ExclusiveMaximum = b, true
		}
	}
	if f.Type != "integer" {
		return
	}
	switch f.Format {
	case "int32":
		f.FormatMin, f.FormatMax = big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)
	case "int64":
		f.FormatMin, f.FormatMax = big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	}
	if f.Minimum != nil {
		f.Min = ceilRat(f.Minimum)
		if f.ExclusiveMinimum && f.Minimum.IsInt() {
			f.Min.Add(f.Min, big.NewInt(1))
		}
	}
	if f.Maximum != nil {
		f.Max = floorRat(f.Maximum)
		if f.ExclusiveMaximum && f.Maximum.IsInt() {
			f.Max.Sub(f.Max, big.NewInt(1))
		}
	}
}

// ratOf returns v as the decimal the document wrote (the shortest form
// that gives v back), exactly: 0.1 is 1/10, not the double nearest it.
func ratOf(v float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
	if !ok {
		r = new(big.Rat).SetFloat64(v)
	}
	return r
}

// floorRat and ceilRat round r down and up to an integer.
func floorRat(r *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	_ = m
	return q // Euclidean division by a positive denominator floors
}

func ceilRat(r *big.Rat) *big.Int {
	q := floorRat(r)
	if !r.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// sameObject reports whether two object schemas are the same record: the
// same component, or the same field names.
func sameObject(a, b *Object) bool {
	if a.Ref != "" && a.Ref == b.Ref {
		return true
	}
	return slices.Equal(a.Names(), b.Names())
}

// OpName names an operation: its operationId, or "GET /pets/{petId}".
func OpName(o *spec.Operation) string {
	if o == nil {
		return "no operation"
	}
	if o.ID != "" {
		return o.ID
	}
	return o.Method + " " + o.Path
}
