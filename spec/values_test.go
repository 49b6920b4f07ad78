package spec_test

import (
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/petstore/inventory-kit/spec"
)

// TestValuesKeepTheSchema: for the update body of the contract and of
// every variant in testdata/specs, each value the generator calls valid
// (the n-th choices, the ends, the grid's specials) passes the field's
// compiled schema, and each it calls invalid fails it.
func TestValuesKeepTheSchema(t *testing.T) {
	docs, _ := filepath.Glob("../testdata/specs/*.yaml")
	docs = append(docs, "openapi.yaml")
	for _, path := range docs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			doc, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c, err := spec.Load(doc)
			if err != nil {
				t.Fatal(err)
			}
			inv, err := c.Inventory()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range inv.Body.Fields {
				if f.Schema == nil {
					continue
				}
				passes := func(v []byte) bool {
					d, err := spec.DecodeJSON(v)
					return err == nil && len(f.Schema.Validate(d)) == 0
				}
				for n := range 20 {
					if v := f.ValueFor(nil, n); !passes(v) {
						t.Errorf("%s: ValueFor(nil, %d) = %s; the schema refuses it", f.Name, n, v)
					}
				}
				for _, p := range f.Ends() {
					if !passes(p.Value) {
						t.Errorf("%s: end %q; the schema refuses it", f.Name, p.What)
					}
				}
				for _, p := range f.Invalid() {
					if passes(p.Value) {
						t.Errorf("%s: invalid %q (%s); the schema accepts it", f.Name, p.What, p.Value)
					}
				}
				if g, ok := f.Grid(true); ok {
					for _, k := range g.Specials() {
						if v := spec.NumberJSON(g.Value(k)); !f.Accepts(v) && passes(v) {
							t.Errorf("%s: special %s: Accepts and the schema disagree", f.Name, v)
						}
						if k.Cmp(g.Lo) < 0 || k.Cmp(g.Hi) > 0 {
							t.Errorf("%s: special step %s outside the grid %s..%s", f.Name, k, g.Lo, g.Hi)
						}
					}
				}
			}
		})
	}
}

// TestUnsure: an integer is unsure only within the stated bounds, on the
// multipleOf and outside the range the suite expects accepted (0 to 1000
// where nothing is stated).
func TestUnsure(t *testing.T) {
	bound := func(v int64) *spec.Bound { return &spec.Bound{Value: big.NewRat(v, 1)} }
	plain := &spec.Facts{Type: "integer", MaxLength: -1}
	atLeast0 := &spec.Facts{Type: "integer", Min: bound(0), MaxLength: -1}
	fives := &spec.Facts{Type: "integer", MultipleOf: big.NewRat(5, 1), MaxLength: -1}
	int32s := &spec.Facts{Type: "integer", Format: "int32", MaxLength: -1}
	for _, c := range []struct {
		name string
		f    *spec.Facts
		v    *big.Int
		want bool
	}{
		{"no bound, within 0 to 1000", plain, big.NewInt(7), false},
		{"no bound, negative", plain, big.NewInt(-1), true},
		{"no bound, past int64", plain, new(big.Int).Lsh(big.NewInt(1), 63), true},
		{"below a stated minimum", atLeast0, big.NewInt(-1), false},
		{"above the safe range", atLeast0, big.NewInt(1 << 31), true},
		{"off the multipleOf", fives, big.NewInt(1<<53 + 1), false},
		{"on the multipleOf", fives, big.NewInt(5 << 40), true},
		{"past the format's range", int32s, big.NewInt(1 << 31), false},
	} {
		if got := c.f.Unsure(c.v); got != c.want {
			t.Errorf("%s: Unsure(%s) = %v; want %v", c.name, c.v, got, c.want)
		}
	}
}
