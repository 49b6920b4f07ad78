package conformance

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore/inventory-kit/spec"
)

// A BodyKind says what the contract makes of a request body.
type BodyKind int

// Kinds of body.
const (
	Valid   BodyKind = iota // the schema allows it, values where the suite expects them accepted: 200, stored
	Invalid                 // the schema forbids it: 400 with an Error body, nothing stored
	Silent                  // the contract neither allows nor forbids it plainly: 200 or 400, recorded
)

func (k BodyKind) String() string {
	return [...]string{"valid", "invalid", "silent"}[k]
}

// A Body is a request body for the update, with what the contract makes
// of it.
type Body struct {
	Name        string // what it is, such as "quantity as a string"
	Raw         []byte // nil: no body at all
	Kind        BodyKind
	ContentType string // empty: application/json
	Sets        Values // of a Valid body, the record fields it sets: the answer and the following list must show them
}

// Bodies builds what the checks send, from the contract's inventory.
type Bodies struct{ inv *spec.Inventory }

// writable lists the update body's fields that the record also carries:
// the values a write sets and a list shows.
func (b Bodies) writable() []*spec.Field {
	return slices.DeleteFunc(slices.Clone(b.inv.Body.Fields), func(f *spec.Field) bool { return b.inv.Record.Field(f.Name) == nil || f.Name == b.inv.Key })
}

// ItemPath is the update's path of record id.
func (b Bodies) ItemPath(id string) string {
	return strings.ReplaceAll(b.inv.Update.Path, "{"+b.inv.Key+"}", id)
}

// Update builds the update request of record id with body b.
func (b Bodies) Update(id int64, body []byte) Request {
	return Request{Method: b.inv.Update.Method, Path: b.ItemPath(strconv.FormatInt(id, 10)), Body: body}
}

func encodeObject(names []string, values map[string]json.RawMessage) []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", n, values[n])
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// baseValues returns a body that changes nothing: for every field of the
// update body the record carries, the value cur holds, and for a field
// the body requires that cur lacks, a valid one. An optional field cur
// lacks is left out: writing it would add a value the record never had,
// which no update can take back.
func (b Bodies) baseValues(cur Record) ([]string, map[string]json.RawMessage) {
	var names []string
	vals := map[string]json.RawMessage{}
	for _, f := range b.inv.Body.Fields {
		v, has := cur.Field(f.Name)
		switch {
		case has && b.inv.Record.Field(f.Name) != nil:
			vals[f.Name] = v
		case f.Required:
			vals[f.Name] = f.ValueFor(nil, 0)
		default:
			continue
		}
		names = append(names, f.Name)
	}
	return names, vals
}

// Prototype returns a record with a valid value in every field: the
// bodies built for it name every case any record can have, which names
// the checks at registration.
func (b Bodies) Prototype() Record {
	vals := map[string]json.RawMessage{}
	for _, f := range b.inv.Record.Fields {
		vals[f.Name] = f.ValueFor(nil, 0)
	}
	r := Record{JSON: encodeObject(b.inv.Record.Names(), vals)}
	r.ID, _ = r.Int(b.inv.Key)
	return r
}

// Harmless returns a valid update body that sets cur's own values: what
// the suite sends where a target that wrongly accepts the request must
// still change nothing, and what a restore sends.
func (b Bodies) Harmless(cur Record) []byte {
	names, vals := b.baseValues(cur)
	return encodeObject(names, vals)
}

// Write returns a valid body that changes every writable field cur has
// (and those the body requires), the n-th of the suite's choices.
func (b Bodies) Write(cur Record, n int) Body {
	names, vals := b.baseValues(cur)
	sets := Values{}
	for _, f := range b.writable() {
		if !slices.Contains(names, f.Name) {
			continue // cur lacks it and it is optional: never added
		}
		old, _ := cur.Field(f.Name)
		vals[f.Name] = f.ValueFor(old, n)
		sets[f.Name] = vals[f.Name]
	}
	return Body{Name: "a valid update", Raw: encodeObject(names, vals), Kind: Valid, Sets: sets}
}

// with returns cur's harmless body with one field set to raw.
func (b Bodies) with(cur Record, field string, raw json.RawMessage, name string, kind BodyKind) Body {
	names, vals := b.baseValues(cur)
	if !slices.Contains(names, field) {
		names = append(names, field)
	}
	vals[field] = raw
	return Body{Name: name, Raw: encodeObject(names, vals), Kind: kind}
}

// without returns cur's harmless body without one field.
func (b Bodies) without(cur Record, field string) []byte {
	names, vals := b.baseValues(cur)
	names = slices.DeleteFunc(names, func(n string) bool { return n == field })
	return encodeObject(names, vals)
}

// fieldsOf lists the update body's fields of the JSON types given.
func (b Bodies) fieldsOf(types ...string) []*spec.Field {
	return slices.DeleteFunc(slices.Clone(b.inv.Body.Fields), func(f *spec.Field) bool { return !slices.Contains(types, f.Type) })
}

// Named returns the body of bodies named name, and whether there is one:
// checks are registered by the names of the Prototype's bodies, and a
// record may lack one (a field it lacks).
func Named(bodies []Body, name string) (Body, bool) {
	i := slices.IndexFunc(bodies, func(b Body) bool { return b.Name == name })
	if i < 0 {
		return Body{}, false
	}
	return bodies[i], true
}

// InvalidBodies lists update bodies the schema forbids, each with a name
// that says why. Values the other fields carry are cur's, so a target that
// wrongly accepts one changes only the field at fault.
func (b Bodies) InvalidBodies(cur Record) []Body {
	bs := []Body{
		{Name: "no body", Raw: []byte{}, Kind: Invalid},
		{Name: "malformed JSON", Raw: []byte(strings.TrimSuffix(string(b.Harmless(cur)), "}")), Kind: Invalid},
		{Name: "null", Raw: []byte(`null`), Kind: Invalid},
		{Name: "an array", Raw: []byte("[" + string(b.Harmless(cur)) + "]"), Kind: Invalid},
		{Name: "a string", Raw: []byte(`"update"`), Kind: Invalid},
	}
	if len(b.inv.Body.Required) > 0 || b.inv.Body.MinProperties > 0 {
		bs = append(bs, Body{Name: "an empty object {}", Raw: []byte(`{}`), Kind: Invalid})
	}
	for _, f := range b.inv.Body.Fields {
		if f.Required && len(b.inv.Body.Fields) > 1 {
			bs = append(bs, Body{Name: "no " + f.Name + " (required)", Raw: b.without(cur, f.Name), Kind: Invalid})
		}
		for _, p := range f.Invalid() {
			bs = append(bs, b.with(cur, f.Name, p.Value, p.What, Invalid))
		}
	}
	if b.inv.Body.Closed {
		bs = append(bs, b.with(cur, "conformanceExtra", json.RawMessage(`1`), "an unknown extra field (additionalProperties: false)", Invalid))
	}
	return bs
}

// AtBounds lists valid bodies that set a numeric field to the extremes of
// what the schema states (Field.Ends).
func (b Bodies) AtBounds(cur Record) []Body {
	var bs []Body
	for _, f := range b.fieldsOf("integer", "number") {
		if b.inv.Record.Field(f.Name) == nil {
			continue
		}
		if _, ok := b.valueOf(cur, f.Name); !ok {
			continue // an optional field cur lacks: never added
		}
		for _, p := range f.Ends() {
			body := b.with(cur, f.Name, p.Value, p.What, Valid)
			body.Sets = Values{f.Name: p.Value}
			bs = append(bs, body)
		}
	}
	return bs
}

// SilentBodies lists update bodies the contract neither allows nor forbids
// plainly: integers where no bound is stated, 5.0 for an integer, an
// unknown field, a field given twice. A probe of a field cur lacks is left
// out: an accepted one would add a value the record never had.
func (b Bodies) SilentBodies(cur Record) []Body {
	var bs []Body
	for _, f := range b.fieldsOf("integer") {
		v, ok := b.valueOf(cur, f.Name)
		if !ok {
			continue
		}
		probes := []struct {
			v    *big.Int
			what string
		}{
			{big.NewInt(-1), "negative"},
			{big.NewInt(1 << 31), "past int32"},
			{big.NewInt(1<<53 + 1), "past 2^53"},
			{new(big.Int).Lsh(big.NewInt(1), 63), "past int64"},
		}
		for _, p := range probes {
			if f.Unsure(p.v) {
				bs = append(bs, b.with(cur, f.Name, json.RawMessage(p.v.String()), fmt.Sprintf("%s %s (%s)", f.Name, p.v, p.what), Silent))
			}
		}
		// The value as a number, written again with a fraction part: never
		// the answer's text edited (an answer of 5.0 would give 5.0.0).
		if n, ok := new(big.Rat).SetString(string(v)); ok && n.IsInt() {
			bs = append(bs, b.with(cur, f.Name, json.RawMessage(n.Num().String()+".0"), f.Name+" written as a decimal (such as 5.0)", Silent))
		}
	}
	if !b.inv.Body.Closed {
		bs = append(bs, b.with(cur, "conformanceNote", spec.JSONString("conformance"), "an unknown extra field", Silent))
	}
	if h := b.Harmless(cur); len(h) > 2 {
		first := b.inv.Body.Fields[0].Name
		if v, ok := b.valueOf(cur, first); ok {
			dup := fmt.Sprintf(`{%q:%s,%s`, first, v, h[1:])
			bs = append(bs, Body{Name: "a field given twice (" + first + ")", Raw: []byte(dup), Kind: Silent})
		}
	}
	return bs
}

// valueOf returns the value the harmless body sends for field.
func (b Bodies) valueOf(cur Record, field string) (json.RawMessage, bool) {
	_, vals := b.baseValues(cur)
	v, ok := vals[field]
	return v, ok
}

// MalformedIDs lists path values that are not a valid identifier.
func (b Bodies) MalformedIDs() []string {
	ids := []string{"abc", "1.5"}
	if b.inv.ID.Type == "integer" {
		if lo, _ := b.inv.ID.IntBounds(); lo != nil {
			ids = append(ids, new(big.Int).Sub(lo, big.NewInt(1)).String())
		}
		if hi := b.inv.ID.Highest(); hi != nil {
			ids = append(ids, new(big.Int).Add(hi, big.NewInt(1)).String())
		}
	}
	return ids
}

// ValidBody returns a request body for op that its schema accepts (the
// required fields, and optional ones up to its minProperties), the n-th
// of the suite's choices, and whether the suite could build one.
func (b Bodies) ValidBody(op *spec.Operation, n int) ([]byte, bool) {
	body, err := op.BodyObject()
	if err != nil || body == nil {
		return nil, false
	}
	var names []string
	vals := map[string]json.RawMessage{}
	for _, f := range body.Fields {
		if f.Required || int64(len(names)) < body.MinProperties {
			names = append(names, f.Name)
			vals[f.Name] = f.ValueFor(nil, n)
		}
	}
	raw := encodeObject(names, vals)
	return raw, len(body.Schema.ValidateJSON(raw)) == 0
}

// ReturnsRecord reports whether o answers one record: the update, and the
// reads of one record the inventory names.
func (b Bodies) ReturnsRecord(o *spec.Operation) bool {
	return o == b.inv.Update || slices.Contains(b.inv.Reads, o)
}

// Timestamps lists the record's date-time fields, which may record when
// a write happened and so differ between two identical writes.
func (b Bodies) Timestamps() []string {
	var ts []string
	for _, f := range b.inv.Record.Fields {
		if f.Type == "string" && f.Format == "date-time" {
			ts = append(ts, f.Name)
		}
	}
	return ts
}
