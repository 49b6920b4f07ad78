package spec_test

import (
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
