package conformance

import (
	"github.com/petstore/inventory-kit/spec/exchange"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// A Record is one listed record as the target sent it, field by field.
// The suite does not decode it into a Go struct: its fields are the
// loaded document's.
type Record map[string]json.RawMessage

// ID returns the record's identifier in field, and whether it is an int64.
func (r Record) ID(field string) (int64, bool) {
	raw, ok := r[field]
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	return id, err == nil
}

// Int returns an integer field as a big.Int, nil if it is not one.
func (r Record) Int(field string) *big.Int {
	raw, ok := r[field]
	if !ok {
		return nil
	}
	b, ok := new(big.Int).SetString(string(bytes.TrimSpace(raw)), 10)
	if !ok {
		return nil
	}
	return b
}

// String renders the record on one line with its fields in name order.
func (r Record) String() string {
	if r == nil {
		return "(none)"
	}
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%q:%s", n, canonical(r[n]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// Equal reports whether two records hold the same fields with equal JSON
// values (numbers compared by value: 5 equals 5.0).
func (r Record) Equal(o Record) bool { return r.EqualExcept(o, nil) }

// EqualExcept is Equal ignoring the named fields.
func (r Record) EqualExcept(o Record, skip []string) bool {
	for n, v := range r {
		if slices.Contains(skip, n) {
			continue
		}
		w, ok := o[n]
		if !ok || canonical(v) != canonical(w) {
			return false
		}
	}
	for n := range o {
		if _, ok := r[n]; !ok && !slices.Contains(skip, n) {
			return false
		}
	}
	return true
}

// Diff lists the fields where two records differ, as "field: a → b".
func (r Record) Diff(o Record) []string {
	names := map[string]bool{}
	for n := range r {
		names[n] = true
	}
	for n := range o {
		names[n] = true
	}
	var out []string
	for _, n := range slices.Sorted(mapKeys(names)) {
		a, b := canonicalOr(r, n), canonicalOr(o, n)
		if a != b {
			out = append(out, fmt.Sprintf("%s: %s → %s", exchange.Printable([]byte(n)), a, b))
		}
	}
	return out
}

func canonicalOr(r Record, n string) string {
	v, ok := r[n]
	if !ok {
		return "(absent)"
	}
	return canonical(v)
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
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
		keys := slices.Sorted(mapKeys(v))
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

// DecodeRecordsContext is decodeRecords that stops, with ctx's error,
// when ctx ends: a list of a million records is read in pieces, so an
// interrupt does not wait for the whole of it.
func DecodeRecordsContext(ctx context.Context, body []byte) ([]Record, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	tok, err := d.Token()
	if err != nil {
		return nil, fmt.Errorf("not a JSON array of objects: %v", err)
	}
	if tok == nil && !d.More() { // null, as json.Unmarshal reads it: no records
		if _, err := d.Token(); err != io.EOF {
			return nil, fmt.Errorf("not a JSON array of objects: data after null")
		}
		return nil, nil
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("not a JSON array of objects: it starts with %v", tok)
	}
	var rs []Record
	for i := 0; d.More(); i++ {
		if i%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var r Record
		if err := d.Decode(&r); err != nil {
			return nil, fmt.Errorf("not a JSON array of objects: item %d: %v", i, err)
		}
		if r == nil {
			return nil, fmt.Errorf("item %d is null", i)
		}
		rs = append(rs, r)
	}
	if _, err := d.Token(); err != nil {
		return nil, fmt.Errorf("not a JSON array of objects: %v", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("not a JSON array of objects: data after the array")
	}
	return rs, nil
}

// decodeRecords decodes a list body into records. A body that is not a
// JSON array of objects is an error.
func decodeRecords(body []byte) ([]Record, error) {
	var rs []Record
	if err := json.Unmarshal(body, &rs); err != nil {
		return nil, fmt.Errorf("not a JSON array of objects: %v", err)
	}
	for i, r := range rs {
		if r == nil {
			return nil, fmt.Errorf("item %d is null", i)
		}
	}
	return rs, nil
}

// DecodeRecord decodes one record.
func DecodeRecord(body []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(body, &r); err != nil || r == nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	return r, nil
}

// An Index finds records by identifier in one pass over a list.
type Index struct {
	ByID  map[int64]Record
	Order []int64  // identifiers in the listed order
	Dups  []int64  // identifiers listed more than once
	Bad   []string // records without an int64 identifier
}

// indexRecords indexes rs by field.
func indexRecords(rs []Record, field string) *Index {
	ix := &Index{ByID: make(map[int64]Record, len(rs))}
	for i, r := range rs {
		id, ok := r.ID(field)
		if !ok {
			ix.Bad = append(ix.Bad, fmt.Sprintf("item %d: %s is not an int64", i, field))
			continue
		}
		if _, dup := ix.ByID[id]; dup {
			ix.Dups = append(ix.Dups, id)
			continue
		}
		ix.ByID[id] = r
		ix.Order = append(ix.Order, id)
	}
	return ix
}
