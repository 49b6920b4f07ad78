package spec

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// The Inventory is what the contract says the service keeps and how it is
// reached, read from the document by its structure, never by an
// operationId (the contract says the update, and its name, will change):
// which operation lists the records, which one updates one of them, which
// read one, what a record is and what the update's body sets. The mock,
// its fixtures and generator, the suite, the proxy and the journal all
// read it; Contract.Inventory reads it once.
type Inventory struct {
	// List answers every record: a GET without path parameters whose 200
	// answer is a JSON array of objects.
	List *Operation
	// Update writes one record: an operation that writes, with one path
	// parameter that names a field of the record, and a JSON object body.
	Update *Operation
	// Reads answer one record: GETs whose one path parameter is the key
	// and whose 200 answer is the record.
	Reads []*Operation
	// Key names the record's identifier: the update's path parameter, a
	// required integer field of the record (petId).
	Key string
	// ID is the identifier as the update's path parameter declares it.
	ID *Field
	// Record is the record, the list's items; Body is the update's
	// request body.
	Record, Body *Object
}

// An Object is an object schema as the inventory reads it.
type Object struct {
	*Facts          // of the object itself: Required, MinProperties, Closed
	Schema *Schema  // compiled; its Name is the component's, such as InventoryItem
	Fields []*Field // its properties, in the document's order
}

// A Field is one property of an Object, or a path parameter, with its
// facts and its schema.
type Field struct {
	*Facts
	Name     string
	Required bool
	Schema   *Schema // compiled; nil where the property cannot be compiled alone
	// Err says why the facts could not be read (such as an allOf whose
	// types cannot meet): Facts are then empty. Nil where they were read.
	Err error
}

// Field returns the named field, or nil.
func (o *Object) Field(name string) *Field {
	if o == nil {
		return nil
	}
	if i := slices.IndexFunc(o.Fields, func(f *Field) bool { return f.Name == name }); i >= 0 {
		return o.Fields[i]
	}
	return nil
}

// Names lists the object's field names in the document's order.
func (o *Object) Names() []string { return mapped(o.Fields, func(f *Field) string { return f.Name }) }

// Inventory returns the contract's inventory, read once. It fails where
// the document has no list or no update the rules above recognise.
func (c *Contract) Inventory() (*Inventory, error) { return c.inventory() }

func (c *Contract) readInventory() (*Inventory, error) {
	inv := &Inventory{}
	for _, op := range c.Operations {
		if op.Method != http.MethodGet || len(op.route.params()) > 0 {
			continue
		}
		r := op.Response(http.StatusOK)
		if r == nil || r.Schema == nil || r.Schema.Type() != "array" || r.Schema.Model.Items == nil || !r.Schema.Model.Items.IsA() {
			continue
		}
		items := r.Schema.Model.Items.A
		facts, err := FactsOf(items)
		if err != nil || facts.Type != "object" || len(facts.Properties) == 0 {
			continue
		}
		if compiled, err := c.compiler.compile(items, schema_validation.SchemaValidationPurposeGeneric); err == nil {
			inv.List, inv.Record = op, newObject(facts, compiled)
			break
		}
	}
	if inv.List == nil {
		return nil, errors.New("spec: the contract has no list of records (a GET without path parameters whose 200 answer is a JSON array of objects)")
	}
	for _, op := range c.Operations {
		params := op.route.params()
		if !op.Writes() || len(params) != 1 || inv.Record.Field(params[0]) == nil || op.Body == nil || op.Body.Schema == nil || op.Body.Schema.Type() != "object" {
			continue
		}
		body, err := op.BodyObject()
		if err != nil {
			return nil, fmt.Errorf("spec: %s: request body: %v", op.Name(), err)
		}
		inv.Update, inv.Body, inv.Key = op, body, params[0]
		break
	}
	if inv.Update == nil {
		return nil, errors.New("spec: the contract has no update of one record (a write whose one path parameter is a field of the listed records, with a JSON object body)")
	}
	if f := inv.Record.Field(inv.Key); !f.Required || f.Type != "integer" {
		return nil, fmt.Errorf("spec: the key %s of %s must be a required integer field of %s", inv.Key, inv.Update.Name(), inv.Record.name())
	}
	var err error
	if inv.ID, err = pathField(inv.Update, inv.Key); err != nil {
		return nil, err
	}
	for _, op := range c.Operations {
		params := op.route.params()
		if op.Method != http.MethodGet || len(params) != 1 || params[0] != inv.Key {
			continue
		}
		if r := op.Response(http.StatusOK); r != nil && r.Schema != nil && inv.Record.Schema.SameRules(r.Schema) {
			inv.Reads = append(inv.Reads, op)
		}
	}
	return inv, nil
}

// name names an object for messages: its component's name, or "the record".
func (o *Object) name() string {
	if o.Schema != nil && o.Schema.Name != "" {
		return o.Schema.Name
	}
	return "the record"
}

// newObject reads an object schema: its facts, its compiled schema and
// each of its properties.
func newObject(facts *Facts, compiled *Schema) *Object {
	o := &Object{Facts: facts, Schema: compiled}
	for _, name := range facts.Properties {
		pf, err := facts.Property(name)
		if err != nil {
			pf = &Facts{MaxLength: -1, MaxItems: -1}
		}
		o.Fields = append(o.Fields, &Field{Facts: pf, Name: name, Required: facts.Requires(name), Schema: compiled.Property(name), Err: err})
	}
	return o
}

// BodyObject reads the operation's JSON request body as an object: nil
// where it takes none, or one that is not a JSON object.
func (o *Operation) BodyObject() (*Object, error) {
	if o.Body == nil || o.Body.Schema == nil || o.Body.Schema.Type() != "object" {
		return nil, nil
	}
	facts, err := factsOfSchema(o.Body.Schema)
	if err != nil {
		return nil, err
	}
	return newObject(facts, o.Body.Schema), nil
}

func pathField(op *Operation, name string) (*Field, error) {
	f := &Field{Name: name, Required: true, Facts: &Facts{MaxLength: -1, MaxItems: -1}}
	for _, p := range op.Params {
		if p.In == "path" && p.Name == name && p.Schema != nil {
			facts, err := factsOfSchema(p.Schema)
			if err != nil {
				return nil, fmt.Errorf("spec: %s: path parameter %s: %v", op.Name(), name, err)
			}
			f.Facts, f.Schema = facts, p.Schema
		}
	}
	return f, nil
}

func factsOfSchema(s *Schema) (*Facts, error) {
	return FactsOf(base.CreateSchemaProxy(s.Model))
}

// Writes reports whether the operation may change data: any method but
// GET, HEAD and OPTIONS.
func (o *Operation) Writes() bool {
	return o.Method != http.MethodGet && o.Method != http.MethodHead && o.Method != http.MethodOptions
}

// PathParams lists the names of the operation's path parameters, in the
// order its path gives them.
func (o *Operation) PathParams() []string { return o.route.params() }

// Shaped reports whether the contract gives a body for at least one 2xx
// answer of the operation. Where it gives none (GET /pets/{petId}, GET
// /store/orders), the contract does not say what the operation answers.
func (o *Operation) Shaped() bool {
	return slices.ContainsFunc(o.Responses, func(r *Response) bool { return len(r.Code) == 3 && r.Code[0] == '2' && len(r.MediaTypes) > 0 })
}
