package conformance

import (
	"github.com/petstore/inventory-kit/spec/exchange"

	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/petstore/inventory-kit/spec"
)

// A Record is one record as the target sent it: its identifier and the
// bytes of its JSON object, as they came (for a listed record, a slice of
// the list's body, never copied or changed), which may break the
// contract. Fields are read by scanning the bytes, so a list of many
// records costs little more than its body. The zero Record is no record.
type Record struct {
	ID   int64  // the value of the key field; meaningful where the decoder found one (Index.ByID)
	JSON []byte // a JSON object; nil: no record
}

// Values are field values by name: what a body sets.
type Values map[string]json.RawMessage

// IsZero reports whether r is no record.
func (r Record) IsZero() bool { return r.JSON == nil }

// Field returns the raw value of the named field (the last, where the
// name is given twice, as encoding/json reads it), and whether r has it.
func (r Record) Field(name string) (json.RawMessage, bool) {
	var out json.RawMessage
	found := false
	_ = spec.Members(r.JSON, func(n, raw []byte) bool {
		if string(n) == name {
			out, found = raw, true
		}
		return true
	})
	return out, found
}

// Int returns an integer field as an int64, and whether it is one.
func (r Record) Int(name string) (int64, bool) {
	raw, ok := r.Field(name)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	return id, err == nil
}

func (r Record) fields() map[string]string {
	m := map[string]string{}
	_ = spec.Members(r.JSON, func(n, raw []byte) bool {
		m[string(n)] = canonical(raw)
		return true
	})
	return m
}

// String renders the record on one line with its fields in name order.
func (r Record) String() string {
	if r.IsZero() {
		return "(none)"
	}
	m := r.fields()
	names := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%q:%s", n, m[n])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// Equal reports whether two records hold the same fields with equal JSON
// values (numbers compared by value: 5 equals 5.0).
func (r Record) Equal(o Record) bool {
	if r.IsZero() || o.IsZero() {
		return r.IsZero() == o.IsZero()
	}
	return bytes.Equal(r.JSON, o.JSON) || r.EqualExcept(o, nil)
}

// EqualExcept is Equal ignoring the named fields.
func (r Record) EqualExcept(o Record, skip []string) bool {
	if r.IsZero() || o.IsZero() {
		return r.IsZero() == o.IsZero()
	}
	a, b := r.fields(), o.fields()
	for _, n := range skip {
		delete(a, n)
		delete(b, n)
	}
	return maps.Equal(a, b)
}

// Diff lists the fields where two records differ, as "field: a → b".
func (r Record) Diff(o Record) []string {
	if r.IsZero() != o.IsZero() {
		return []string{fmt.Sprintf("%s → %s", r, o)}
	}
	a, b := r.fields(), o.fields()
	names := maps.Clone(a)
	maps.Copy(names, b)
	var out []string
	for _, n := range slices.Sorted(maps.Keys(names)) {
		// A present value is never "": canonical renders at least a byte.
		if x, y := cmp.Or(a[n], "(absent)"), cmp.Or(b[n], "(absent)"); x != y {
			out = append(out, fmt.Sprintf("%s: %s → %s", exchange.Printable([]byte(n)), x, y))
		}
	}
	return out
}

// canonical renders a JSON value so that equal values render alike:
// objects with sorted keys, numbers as exact fractions.
func canonical(raw json.RawMessage) string {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return exchange.Printable(raw)
	}
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

func writeCanonical(b *strings.Builder, v any) {
	switch v := v.(type) {
	case json.Number:
		if r, ok := new(big.Rat).SetString(v.String()); ok {
			b.WriteString(r.RatString())
			return
		}
		b.WriteString(v.String())
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "%q:", k)
			writeCanonical(b, v[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	default:
		enc, _ := json.Marshal(v)
		b.Write(enc)
	}
}

// decodeRecord reads one record, an answer's body, with its identifier
// in the key field where it has one.
func decodeRecord(body []byte, key string) (Record, error) {
	if err := spec.Members(body, func([]byte, []byte) bool { return true }); err != nil || !json.Valid(body) {
		return Record{}, fmt.Errorf("not a JSON object")
	}
	r := Record{JSON: body}
	r.ID, _ = r.Int(key)
	return r, nil
}

// An Index is a list's records by identifier, read in one pass over its
// body, each a slice of it.
type Index struct {
	ByID     map[int64]Record
	Order    []int64  // identifiers in the listed order
	Dups     []int64  // identifiers listed more than once
	Bad      []string // the first maxExamples records without an int64 identifier, by position
	BadCount int      // every record without an int64 identifier
}

// maxExamples is how many examples of one kind of problem a message or
// a report keeps; the rest are counted.
const maxExamples = 10

// ErrNotList says a body is not a JSON array of objects.
var ErrNotList = errors.New("not a JSON array of objects")

// DecodeList reads a list's body, a JSON array of objects (or null, which
// lists nothing), into an Index by the key field. It stops with ctx's
// error when ctx ends; another error wraps ErrNotList.
func DecodeList(ctx context.Context, body []byte, key string) (*Index, error) {
	ix := &Index{ByID: map[int64]Record{}}
	var d jsontext.Decoder
	d.Reset(bytes.NewReader(body))
	notList := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrNotList, fmt.Sprintf(format, a...))
	}
	switch d.PeekKind() {
	case 'n':
		if _, err := d.ReadToken(); err != nil {
			return nil, notList("%v", err)
		}
		if _, err := d.ReadToken(); err != io.EOF {
			return nil, notList("data after null")
		}
		return ix, nil
	case '[':
		_, _ = d.ReadToken()
	default:
		raw, err := d.ReadValue()
		if err != nil {
			return nil, notList("%v", err)
		}
		return nil, notList("got %s, want an array", kindName(jsontext.Value(raw).Kind()))
	}
	for i := 0; d.PeekKind() != ']'; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		raw, err := d.ReadValue()
		if err != nil {
			return nil, notList("item %d: %v", i, err)
		}
		end := int(d.InputOffset())
		raw = body[end-len(raw) : end : end] // the body's own bytes, kept
		switch raw[0] {
		case '{':
		case 'n':
			return nil, notList("item %d is null", i)
		default:
			return nil, notList("item %d is %s, not an object", i, kindName(jsontext.Value(raw).Kind()))
		}
		r := Record{JSON: raw}
		id, ok := r.Int(key)
		if !ok {
			if ix.BadCount++; len(ix.Bad) < maxExamples {
				ix.Bad = append(ix.Bad, fmt.Sprintf("item %d: %s is not an int64", i, key))
			}
			continue
		}
		r.ID = id
		if _, dup := ix.ByID[id]; dup {
			ix.Dups = append(ix.Dups, id)
			continue
		}
		ix.ByID[id] = r
		ix.Order = append(ix.Order, id)
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, notList("%v", err)
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return nil, notList("data after the array")
	}
	return ix, nil
}

// kindName names a JSON value's kind as a schema's type does.
func kindName(k jsontext.Kind) string {
	return cmp.Or(map[jsontext.Kind]string{'{': "object", '[': "array", '"': "string", '0': "number", 't': "boolean", 'f': "boolean", 'n': "null"}[k], "no JSON value")
}

// examples renders the first maxExamples of ids, and how many more,
// joined by sep.
func examples[T any](ids []T, sep string) string {
	var parts []string
	for i, id := range ids {
		if i == maxExamples {
			parts = append(parts, fmt.Sprintf("and %d more", len(ids)-maxExamples))
			break
		}
		parts = append(parts, fmt.Sprint(id))
	}
	return strings.Join(parts, sep)
}
