package conformance

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestDecodeList reads lists as a stream into records that point into the
// body, and stops when its context ends.
func TestDecodeList(t *testing.T) {
	tests := []struct {
		body       string
		ids        string // the indexed identifiers, in order
		dups, bads int
		err        string
	}{
		{`[]`, "", 0, 0, ""},
		{`null`, "", 0, 0, ""},
		{` [{"petId":1},{"petId":2}] `, "1 2", 0, 0, ""},
		{`[{"petId":1},{"petId":1,"x":2}]`, "1", 1, 0, ""},
		{`[{"petId":"1"},{"petId":1.5},{"x":1},{"petId":3}]`, "3", 0, 3, ""},
		{`[{"petId":1},null]`, "", 0, 0, "item 1 is null"},
		{`[{"petId":1}][]`, "", 0, 0, "data after the array"},
		{`[1]`, "", 0, 0, "item 0 is number, not an object"},
		{`{"items":[{"petId":1}]}`, "", 0, 0, "got object, want an array"},
		{`[{"petId":1}`, "", 0, 0, "not a JSON array of objects"},
		{``, "", 0, 0, "not a JSON array of objects"},
	}
	for _, tt := range tests {
		ix, err := DecodeList(context.Background(), []byte(tt.body), "petId")
		if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("DecodeList(%q) error = %v; want %q", tt.body, err, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		if got := strings.Trim(fmt.Sprint(ix.Order), "[]"); got != tt.ids || len(ix.Dups) != tt.dups || ix.BadCount != tt.bads {
			t.Errorf("DecodeList(%q) = ids %q, %d dups, %d bad; want %q, %d, %d", tt.body, got, len(ix.Dups), ix.BadCount, tt.ids, tt.dups, tt.bads)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := DecodeList(ctx, []byte(`[{"petId":1}]`), "petId"); err != context.Canceled {
		t.Errorf("an ended context: %v; want context.Canceled", err)
	}
}

// TestRecordCompares: records compare by value, field by field, the same
// bytes at once.
func TestRecordCompares(t *testing.T) {
	a := Record{JSON: []byte(`{"petId":1,"quantity":5,"status":"sold"}`)}
	tests := []struct {
		other string
		equal bool
		diff  string
	}{
		{`{"petId":1,"quantity":5,"status":"sold"}`, true, ""},
		{`{ "status":"sold", "quantity":5.0, "petId":1 }`, true, ""},
		{`{"petId":1,"quantity":6,"status":"sold"}`, false, "quantity: 5 → 6"},
		{`{"petId":1,"status":"sold"}`, false, "quantity: 5 → (absent)"},
		{`{"petId":1,"quantity":5,"status":"sold","x":[1]}`, false, "x: (absent) → [1]"},
	}
	for _, tt := range tests {
		b := Record{JSON: []byte(tt.other)}
		if got := a.Equal(b); got != tt.equal {
			t.Errorf("Equal(%s) = %v; want %v", tt.other, got, tt.equal)
		}
		if got := strings.Join(a.Diff(b), ", "); got != tt.diff {
			t.Errorf("Diff(%s) = %q; want %q", tt.other, got, tt.diff)
		}
	}
	if v, ok := a.Field("status"); !ok || string(v) != `"sold"` {
		t.Errorf(`Field("status") = %s, %v`, v, ok)
	}
	if _, ok := a.Field("nope"); ok {
		t.Error(`Field("nope") found`)
	}
	if got := a.String(); got != `{"petId":1,"quantity":5,"status":"sold"}` {
		t.Errorf("String() = %s", got)
	}
}
