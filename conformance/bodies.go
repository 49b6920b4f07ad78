package conformance

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
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

// valueFor renders a valid value of f different from cur (the current
// value, possibly nil), the n-th of the choices the suite makes.
func valueFor(f *Field, cur json.RawMessage, n int) json.RawMessage {
	switch {
	case len(f.Enum) > 0:
		i := 0
		var s string
		if json.Unmarshal(cur, &s) == nil {
			i = slices.Index(f.Enum, s) + 1
		}
		return jsonString(f.Enum[(i+n)%len(f.Enum)])
	case f.Type == "integer":
		lo, hi := f.SafeRange()
		v := pickInt(lo, hi, 7+int64(n))
		if c, err := strconv.ParseInt(string(cur), 10, 64); err == nil && c == v {
			v = pickInt(lo, hi, 8+int64(n))
		}
		return json.RawMessage(strconv.FormatInt(v, 10))
	case f.Type == "number":
		return json.RawMessage(strconv.Itoa(7 + n))
	case f.Type == "boolean":
		return json.RawMessage(strconv.FormatBool(string(cur) != "true"))
	case f.Type == "string" && f.Format == "date-time":
		return jsonString(fmt.Sprintf("2026-01-02T03:04:%02dZ", n%60))
	case f.Type == "string" && f.Format == "date":
		return jsonString(fmt.Sprintf("2026-01-%02d", 1+n%28))
	case f.Type == "string":
		return jsonString(fmt.Sprintf("conformance-%d", n))
	}
	return json.RawMessage(`{}`)
}

// pickInt returns the value at offset off from lo, wrapping within [lo, hi].
func pickInt(lo, hi, off int64) int64 {
	if hi <= lo {
		return lo
	}
	span := new(big.Int).Sub(big.NewInt(hi), big.NewInt(lo))
	span.Add(span, big.NewInt(1))
	o := new(big.Int).Mod(big.NewInt(off), span)
	return new(big.Int).Add(big.NewInt(lo), o).Int64()
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

// baseValues returns, for every field of the update body the record also
// carries (and every required one), the value cur holds, or a valid one
// where cur has none: a body that changes nothing. The fields do not
// depend on cur, so bodies built for any record have the same names.
func (s *Shape) baseValues(cur Record) ([]string, map[string]json.RawMessage) {
	var names []string
	vals := map[string]json.RawMessage{}
	for _, f := range s.UpdateBody.Fields {
		if s.Item.Field(f.Name) == nil && !f.Required {
			continue
		}
		names = append(names, f.Name)
		if v, ok := cur[f.Name]; ok && s.Item.Field(f.Name) != nil {
			vals[f.Name] = v
		} else {
			vals[f.Name] = valueFor(f, nil, 0)
		}
	}
	return names, vals
}

// Harmless returns a valid update body that sets cur's own values: what
// the suite sends where a target that wrongly accepts the request must
// still change nothing, and what a restore sends.
func (s *Shape) Harmless(cur Record) []byte {
	names, vals := s.baseValues(cur)
	return encodeObject(names, vals)
}

// Write returns a valid body that changes every writable field of cur,
// the n-th of the suite's choices.
func (s *Shape) Write(cur Record, n int) Body {
	names, vals := s.baseValues(cur)
	sets := Record{}
	for _, f := range s.writable() {
		if !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
		vals[f.Name] = valueFor(f, cur[f.Name], n)
		sets[f.Name] = vals[f.Name]
	}
	return Body{Name: "a valid update", Raw: encodeObject(names, vals), Kind: Valid, Sets: sets}
}

// WriteInt returns a valid body setting the integer field f to v and
// leaving the rest as cur has it.
func (s *Shape) WriteInt(cur Record, f *Field, v int64) Body {
	b := s.with(cur, f.Name, json.RawMessage(strconv.FormatInt(v, 10)), fmt.Sprintf("%s %d", f.Name, v), Valid)
	b.Sets = Record{f.Name: json.RawMessage(strconv.FormatInt(v, 10))}
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

// beyondBounds lists bodies where integer f lies just outside a bound the
// schema states (minimum, maximum or the format's range).
func (s *Shape) beyondBounds(cur Record, f *Field) []Body {
	if f.Type != "integer" {
		return nil
	}
	var bs []Body
	if lo := f.Lowest(); lo != nil {
		v := new(big.Int).Sub(lo, big.NewInt(1))
		bs = append(bs, s.with(cur, f.Name, json.RawMessage(v.String()), fmt.Sprintf("%s %s (below the lowest, %s)", f.Name, v, lo), Invalid))
	}
	if hi := f.Highest(); hi != nil {
		v := new(big.Int).Add(hi, big.NewInt(1))
		bs = append(bs, s.with(cur, f.Name, json.RawMessage(v.String()), fmt.Sprintf("%s %s (above the highest, %s)", f.Name, v, hi), Invalid))
	}
	return bs
}

// AtBounds lists valid bodies that set an integer field to a bound the
// schema states (minimum and maximum, not a format's range).
func (s *Shape) AtBounds(cur Record) []Body {
	var bs []Body
	for _, f := range s.IntFields() {
		for _, b := range []*big.Int{f.Min, f.Max} {
			if b != nil && b.IsInt64() && s.Item.Field(f.Name) != nil {
				body := s.WriteInt(cur, f, b.Int64())
				body.Name = fmt.Sprintf("%s %d (a bound the schema states)", f.Name, b.Int64())
				bs = append(bs, body)
			}
		}
	}
	return bs
}

// SilentBodies lists update bodies the contract neither allows nor forbids
// plainly: integers where no bound is stated, 5.0 for an integer,
// an unknown field, a field given twice. A target may accept or reject each.
func (s *Shape) SilentBodies(cur Record) []Body {
	var bs []Body
	for _, f := range s.IntFields() {
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
			if p.v.IsInt64() && p.v.Int64() >= safeLo && p.v.Int64() <= safeHi {
				continue // expected accepted: valid
			}
			bs = append(bs, s.with(cur, f.Name, json.RawMessage(p.v.String()), fmt.Sprintf("%s %s (%s)", f.Name, p.v, p.what), Silent))
		}
		if v, ok := s.valueOf(cur, f.Name); ok {
			bs = append(bs, s.with(cur, f.Name, json.RawMessage(string(v)+".0"), f.Name+" written as a decimal (such as 5.0)", Silent))
		}
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
		if hi := s.ID.Highest(); hi != nil {
			ids = append(ids, new(big.Int).Add(hi, big.NewInt(1)).String())
		}
	}
	return ids
}
