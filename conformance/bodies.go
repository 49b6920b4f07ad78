package conformance

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// A BodyKind says what the contract makes of a request body.
type BodyKind int

// Kinds of body.
const (
	// Valid: the schema allows it and the values lie where the suite
	// expects them accepted (Field.SafeRange): 200 and the values stored.
	Valid BodyKind = iota
	// Invalid: the schema forbids it: 400 with an Error body, nothing stored.
	Invalid
	// Silent: the contract neither allows nor forbids it plainly: 200 or
	// 400 are both right, and the suite records which.
	Silent
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
	// Sets holds, for a Valid body, the record fields it sets and their
	// values; the answer and the following list must show them.
	Sets Record
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// writable lists the update body's fields that the record also carries:
// the values a write sets and a list shows.
func (s *Shape) writable() []*Field {
	var fs []*Field
	for _, f := range s.UpdateBody.Fields {
		if s.Item.Field(f.Name) != nil && f.Name != s.IDField {
			fs = append(fs, f)
		}
	}
	return fs
}

// encodeObject renders fields in the order given.
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
func (s *Shape) baseValues(cur Record) ([]string, map[string]json.RawMessage) {
	var names []string
	vals := map[string]json.RawMessage{}
	for _, f := range s.UpdateBody.Fields {
		v, has := cur[f.Name]
		switch {
		case has && s.Item.Field(f.Name) != nil:
			vals[f.Name] = v
		case f.Required:
			vals[f.Name] = valueFor(f, nil, 0)
		default:
			continue
		}
		names = append(names, f.Name)
	}
	return names, vals
}

// Prototype returns a record with a valid value in every field, which
// registration uses to name the bodies the checks will send: the bodies
// built for it name every case any record can have.
func (s *Shape) Prototype() Record {
	r := Record{}
	for _, f := range s.Item.Fields {
		r[f.Name] = valueFor(f, nil, 0)
	}
	return r
}

// Harmless returns a valid update body that sets cur's own values: what
// the suite sends where a target that wrongly accepts the request must
// still change nothing, and what a restore sends.
func (s *Shape) Harmless(cur Record) []byte {
	names, vals := s.baseValues(cur)
	return encodeObject(names, vals)
}

// Write returns a valid body that changes every writable field cur has
// (and those the body requires), the n-th of the suite's choices.
func (s *Shape) Write(cur Record, n int) Body {
	names, vals := s.baseValues(cur)
	sets := Record{}
	for _, f := range s.writable() {
		if !slices.Contains(names, f.Name) {
			continue // cur lacks it and it is optional: never added
		}
		vals[f.Name] = valueFor(f, cur[f.Name], n)
		sets[f.Name] = vals[f.Name]
	}
	return Body{Name: "a valid update", Raw: encodeObject(names, vals), Kind: Valid, Sets: sets}
}

// WriteValue returns a valid body setting field f to raw and leaving the
// rest as cur has it.
func (s *Shape) WriteValue(cur Record, f *Field, raw json.RawMessage) Body {
	b := s.with(cur, f.Name, raw, fmt.Sprintf("%s %s", f.Name, raw), Valid)
	b.Sets = Record{f.Name: raw}
	return b
}

// with returns cur's harmless body with one field set to raw.
func (s *Shape) with(cur Record, field string, raw json.RawMessage, name string, kind BodyKind) Body {
	names, vals := s.baseValues(cur)
	if !slices.Contains(names, field) {
		names = append(names, field)
	}
	vals[field] = raw
	return Body{Name: name, Raw: encodeObject(names, vals), Kind: kind}
}

// without returns cur's harmless body without one field.
func (s *Shape) without(cur Record, field string) []byte {
	names, vals := s.baseValues(cur)
	names = slices.DeleteFunc(names, func(n string) bool { return n == field })
	return encodeObject(names, vals)
}

// IntFields lists the update body's integer fields.
func (s *Shape) IntFields() []*Field {
	var fs []*Field
	for _, f := range s.UpdateBody.Fields {
		if f.Type == "integer" {
			fs = append(fs, f)
		}
	}
	return fs
}

// NumFields lists the update body's integer and number fields.
func (s *Shape) NumFields() []*Field {
	var fs []*Field
	for _, f := range s.UpdateBody.Fields {
		if f.Type == "integer" || f.Type == "number" {
			fs = append(fs, f)
		}
	}
	return fs
}

// Named returns the body of bodies named name, and whether there is one.
// Checks are registered by the names of the bodies built for the
// Prototype; at run time the body of that name is built for the record as
// it is, and a record may not have it (a field it lacks).
func Named(bodies []Body, name string) (Body, bool) {
	for _, b := range bodies {
		if b.Name == name {
			return b, true
		}
	}
	return Body{}, false
}

// InvalidBodies lists update bodies the schema forbids, each with a name
// that says why. Values the other fields carry are cur's, so a target that
// wrongly accepts one changes only the field at fault.
func (s *Shape) InvalidBodies(cur Record) []Body {
	bs := []Body{
		{Name: "no body", Raw: []byte{}, Kind: Invalid},
		{Name: "malformed JSON", Raw: []byte(strings.TrimSuffix(string(s.Harmless(cur)), "}")), Kind: Invalid},
		{Name: "null", Raw: []byte(`null`), Kind: Invalid},
		{Name: "an array", Raw: []byte("[" + string(s.Harmless(cur)) + "]"), Kind: Invalid},
		{Name: "a string", Raw: []byte(`"update"`), Kind: Invalid},
	}
	if len(s.UpdateBody.Required) > 0 || s.UpdateBody.MinProperties > 0 {
		bs = append(bs, Body{Name: "an empty object {}", Raw: []byte(`{}`), Kind: Invalid})
	}
	for _, f := range s.UpdateBody.Fields {
		if f.Required && len(s.UpdateBody.Fields) > 1 {
			bs = append(bs, Body{Name: "no " + f.Name + " (required)", Raw: s.without(cur, f.Name), Kind: Invalid})
		}
		bs = append(bs, s.typeErrors(cur, f)...)
		bs = append(bs, s.beyondBounds(cur, f)...)
	}
	if s.UpdateBody.Closed {
		b := s.with(cur, "conformanceExtra", json.RawMessage(`1`), "an unknown extra field (additionalProperties: false)", Invalid)
		bs = append(bs, b)
	}
	return bs
}

// typeErrors lists bodies where f has a value of the wrong type.
func (s *Shape) typeErrors(cur Record, f *Field) []Body {
	var bs []Body
	add := func(what, raw string) {
		bs = append(bs, s.with(cur, f.Name, json.RawMessage(raw), f.Name+" "+what, Invalid))
	}
	switch f.Type {
	case "integer":
		add("as a string", `"5"`)
		add("fractional", `5.5`)
		add("a boolean", `true`)
	case "number":
		add("as a string", `"5"`)
		add("a boolean", `true`)
	case "string":
		add("a number", `5`)
		if len(f.Enum) > 0 {
			add("not in the enum", `"conformance-not-in-enum"`)
		}
	case "boolean":
		add("as a string", `"true"`)
	}
	if !f.Nullable && f.Type != "" {
		add("null", `null`)
	}
	return bs
}

// beyondBounds lists bodies where f lies just outside what the schema
// states: past a minimum or maximum (or, for an integer, the format's
// range), off its multipleOf, shorter or longer than its lengths, not
// matching its pattern. A probe the field's compiled schema would accept
// is left out: it would not be invalid.
func (s *Shape) beyondBounds(cur Record, f *Field) []Body {
	var bs []Body
	add := func(raw json.RawMessage, name string) {
		if f.Schema != nil && f.Accepts(raw) {
			return
		}
		bs = append(bs, s.with(cur, f.Name, raw, name, Invalid))
	}
	switch f.Type {
	case "integer":
		if lo := f.Lowest(); lo != nil {
			v := new(big.Int).Sub(lo, big.NewInt(1))
			add(json.RawMessage(v.String()), fmt.Sprintf("%s %s (below the lowest, %s)", f.Name, v, lo))
		}
		if hi := f.Highest(); hi != nil {
			v := new(big.Int).Add(hi, big.NewInt(1))
			add(json.RawMessage(v.String()), fmt.Sprintf("%s %s (above the highest, %s)", f.Name, v, hi))
		}
	case "number":
		one := big.NewRat(1, 1)
		if f.Minimum != nil {
			v := new(big.Rat).Sub(f.Minimum, one)
			if f.ExclusiveMinimum {
				v = f.Minimum
			}
			add(numberJSON(v), fmt.Sprintf("%s %s (below the lowest, %s%s)", f.Name, numberJSON(v), exclusive(f.ExclusiveMinimum), numberJSON(f.Minimum)))
		}
		if f.Maximum != nil {
			v := new(big.Rat).Add(f.Maximum, one)
			if f.ExclusiveMaximum {
				v = f.Maximum
			}
			add(numberJSON(v), fmt.Sprintf("%s %s (above the highest, %s%s)", f.Name, numberJSON(v), exclusive(f.ExclusiveMaximum), numberJSON(f.Maximum)))
		}
	case "string":
		if f.MinLength > 0 {
			add(jsonString(strings.Repeat("x", f.MinLength-1)), fmt.Sprintf("%s shorter than %d characters (minLength)", f.Name, f.MinLength))
		}
		if f.MaxLength >= 0 {
			add(jsonString(strings.Repeat("x", f.MaxLength+1)), fmt.Sprintf("%s longer than %d characters (maxLength)", f.Name, f.MaxLength))
		}
		if f.Pattern != "" {
			add(jsonString("conformance not matching ~"), fmt.Sprintf("%s not matching its pattern", f.Name))
		}
	}
	if g, ok := f.Grid(true); ok && f.MultipleOf != nil && g.Lo.Cmp(g.Hi) < 0 {
		// Between the two lowest values allowed: within the bounds, off the
		// multipleOf.
		var v *big.Rat
		switch {
		case f.Type == "number":
			v = new(big.Rat).Add(g.Value(g.Lo), new(big.Rat).Quo(g.Step, big.NewRat(2, 1)))
		case g.Step.Cmp(big.NewRat(1, 1)) > 0:
			v = new(big.Rat).Add(g.Value(g.Lo), big.NewRat(1, 1))
		}
		if v != nil {
			add(numberJSON(v), fmt.Sprintf("%s %s (not a multiple of %s)", f.Name, numberJSON(v), numberJSON(f.MultipleOf)))
		}
	}
	return bs
}

func exclusive(ex bool) string {
	if ex {
		return "exclusive, "
	}
	return ""
}

// AtBounds lists valid bodies that set a numeric field to the extremes of
// what the schema states: the minimum and maximum, or where a bound is
// exclusive or off the multipleOf, the nearest value inside it. A format's
// range alone is not one.
func (s *Shape) AtBounds(cur Record) []Body {
	var bs []Body
	for _, f := range s.NumFields() {
		if s.Item.Field(f.Name) == nil || (f.Minimum == nil && f.Maximum == nil) {
			continue
		}
		if _, ok := s.valueOf(cur, f.Name); !ok {
			continue // an optional field cur lacks: never added
		}
		g, ok := f.Grid(true)
		if !ok {
			continue
		}
		for _, end := range []struct {
			stated *big.Rat
			k      *big.Int
			which  string
		}{{f.Minimum, g.Lo, "lowest"}, {f.Maximum, g.Hi, "highest"}} {
			if end.stated == nil {
				continue
			}
			v := g.Value(end.k)
			body := s.WriteValue(cur, f, numberJSON(v))
			if v.Cmp(end.stated) == 0 {
				body.Name = fmt.Sprintf("%s %s (a bound the schema states)", f.Name, numberJSON(v))
			} else {
				body.Name = fmt.Sprintf("%s %s (the %s value the schema allows)", f.Name, numberJSON(v), end.which)
			}
			bs = append(bs, body)
		}
	}
	return bs
}

// SilentBodies lists update bodies the contract neither allows nor forbids
// plainly: integers where no bound is stated, 5.0 for an integer,
// an unknown field, a field given twice. A target may accept or reject each.
// A probe of a field cur lacks is left out: an accepted one would add a
// value the record never had.
func (s *Shape) SilentBodies(cur Record) []Body {
	var bs []Body
	for _, f := range s.IntFields() {
		v, ok := s.valueOf(cur, f.Name)
		if !ok {
			continue
		}
		lo, hi := f.Lowest(), f.Highest()
		probes := []struct {
			v    *big.Int
			what string
		}{
			{big.NewInt(-1), "negative"},
			{big.NewInt(1 << 31), "past int32"},
			{big.NewInt(1<<53 + 1), "past 2^53"},
			{new(big.Int).Lsh(big.NewInt(1), 63), "past int64"},
		}
		safeLo, safeHi := f.SafeRange()
		for _, p := range probes {
			if (lo != nil && p.v.Cmp(lo) < 0) || (hi != nil && p.v.Cmp(hi) > 0) {
				continue // beyond a stated bound: invalid, not silent
			}
			if f.MultipleOf != nil && !new(big.Rat).Quo(new(big.Rat).SetInt(p.v), f.MultipleOf).IsInt() {
				continue // off the multipleOf: invalid, not silent
			}
			if p.v.IsInt64() && p.v.Int64() >= safeLo && p.v.Int64() <= safeHi {
				continue // expected accepted: valid
			}
			bs = append(bs, s.with(cur, f.Name, json.RawMessage(p.v.String()), fmt.Sprintf("%s %s (%s)", f.Name, p.v, p.what), Silent))
		}
		bs = append(bs, s.with(cur, f.Name, json.RawMessage(string(v)+".0"), f.Name+" written as a decimal (such as 5.0)", Silent))
	}
	if !s.UpdateBody.Closed {
		bs = append(bs, s.with(cur, "conformanceNote", jsonString("conformance"), "an unknown extra field", Silent))
	}
	if h := s.Harmless(cur); len(h) > 2 {
		first := s.UpdateBody.Fields[0].Name
		if v, ok := s.valueOf(cur, first); ok {
			dup := fmt.Sprintf(`{%q:%s,%s`, first, v, h[1:])
			bs = append(bs, Body{Name: "a field given twice (" + first + ")", Raw: []byte(dup), Kind: Silent})
		}
	}
	return bs
}

// valueOf returns the value the harmless body sends for field.
func (s *Shape) valueOf(cur Record, field string) (json.RawMessage, bool) {
	_, vals := s.baseValues(cur)
	v, ok := vals[field]
	return v, ok
}

// MalformedIDs lists path values that are not a valid identifier, with
// why. None can address a record.
func (s *Shape) MalformedIDs() []string {
	ids := []string{"abc", "1.5"}
	if s.ID.Type == "integer" {
		if s.ID.Min != nil {
			ids = append(ids, new(big.Int).Sub(s.ID.Min, big.NewInt(1)).String())
		}
		if hi := s.ID.Highest(); hi != nil {
			ids = append(ids, new(big.Int).Add(hi, big.NewInt(1)).String())
		}
	}
	return ids
}

// ValidBody returns a request body for op that its schema accepts, the
// n-th of the suite's choices, and whether the suite could build one: the
// fields the schema requires (and optional ones up to its minProperties),
// each with a valid value, checked against the compiled schema.
func (s *Shape) ValidBody(op *OpShape, n int) ([]byte, bool) {
	if op.Body == nil {
		return nil, false
	}
	var names []string
	vals := map[string]json.RawMessage{}
	for _, f := range op.Body.Fields {
		if f.Required || len(names) < op.Body.MinProperties {
			names = append(names, f.Name)
			vals[f.Name] = valueFor(f, nil, n)
		}
	}
	raw := encodeObject(names, vals)
	if op.Body.Schema != nil && len(op.Body.Schema.ValidateJSON(raw)) > 0 {
		return raw, false
	}
	return raw, true
}

// Timestamps lists the record's date-time fields, which may record when
// a write happened and so differ between two identical writes.
func (s *Shape) Timestamps() []string {
	var ts []string
	for _, f := range s.Item.Fields {
		if f.Type == "string" && f.Format == "date-time" {
			ts = append(ts, f.Name)
		}
	}
	return ts
}
