package mockserver

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/spec"
)

// TestUpdateAppliesValuesAsSent checks that a PATCH stores the values the
// client sent, digit for digit, and keeps the fields it did not send byte
// for byte, as the update answers the record and as the list serves it
// afterwards: the largest int64, a whole number written as 1e2 or 100.0
// (an integer in JSON Schema), a field the record does not have, and a
// stored string with escapes that look like the field changed.
func TestUpdateAppliesValuesAsSent(t *testing.T) {
	// quantity as int64 with no maximum: the mock's bound is the largest int64.
	doc, err := os.ReadFile(filepath.Join(variantDir, "wide-bounds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc = regexp.MustCompile(`(?m)^ +maximum: 9999999999\n`).ReplaceAll(doc, nil)
	int64Contract, err := spec.Load(doc)
	if err != nil {
		t.Fatal(err)
	}
	// A record with a note whose escapes read like another quantity.
	noteContract := variant(t, "openapi-3.1.yaml")
	const note = `"a \"quote\", \\ back\",\"quantity\":1} é \u2028 ☃"`
	tests := []struct {
		name     string
		contract *spec.Contract
		stored   string // pet 3 before the update
		body     string
		status   int
		want     string // pet 3 after: the answer and the list's entry
	}{
		{"largest int64", int64Contract, `{"petId":3,"quantity":0,"status":"sold"}`, `{"quantity":9223372036854775807}`, 200, `{"petId":3,"quantity":9223372036854775807,"status":"sold"}`},
		{"one past the largest int64", int64Contract, `{"petId":3,"quantity":0,"status":"sold"}`, `{"quantity":9223372036854775808}`, 400, `{"petId":3,"quantity":0,"status":"sold"}`},
		{"smallest allowed", int64Contract, `{"petId":3,"quantity":0,"status":"sold"}`, `{"quantity":-100}`, 200, `{"petId":3,"quantity":-100,"status":"sold"}`},
		{"1e2 as an integer", int64Contract, `{"petId":3,"quantity":0,"status":"sold"}`, `{"quantity":1e2}`, 200, `{"petId":3,"quantity":100,"status":"sold"}`},
		{"100.0 as an integer", int64Contract, `{"petId":3,"quantity":0,"status":"sold"}`, `{"quantity":100.0}`, 200, `{"petId":3,"quantity":100,"status":"sold"}`},
		{"-0 as 0", int64Contract, `{"petId":3,"quantity":5,"status":"sold"}`, `{"quantity":-0}`, 200, `{"petId":3,"quantity":0,"status":"sold"}`},
		{"a field the record does not have", int64Contract, `{"petId":3,"quantity":0,"status":"sold"}`, `{"quantity":7,"bin":"B-12"}`, 200, `{"petId":3,"quantity":7,"status":"sold"}`},
		{"a stored note with escapes", noteContract, `{"petId":3,"quantity":0,"status":"sold","note":` + note + `}`, `{"quantity":8}`, 200, `{"petId":3,"quantity":8,"status":"sold","note":` + note + `}`},
		{"a stored null note", noteContract, `{"petId":3,"quantity":0,"status":"sold","note":null}`, `{"quantity":9}`, 200, `{"petId":3,"quantity":9,"status":"sold","note":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh, err := fixtures.NewShape(tt.contract)
			if err != nil {
				t.Fatal(err)
			}
			var records []fixtures.Record
			for _, raw := range []string{`{"petId":1,"quantity":12,"status":"available"}`, tt.stored} {
				v, err := spec.DecodeJSON([]byte(raw))
				if err != nil {
					t.Fatal(err)
				}
				rec, ps := sh.Make(v)
				if len(ps) > 0 {
					t.Fatalf("record %s: %s", raw, spec.Join(ps))
				}
				records = append(records, rec)
			}
			s, err := New(Config{Contract: tt.contract, Shape: sh, Records: records, APIKeys: []string{testKey}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			got := serve(t, s, req{method: "PATCH", path: "/v1/inventory/3", body: tt.body})
			if got.status != tt.status {
				t.Fatalf("PATCH %s: status = %d; want %d (%s)", tt.body, got.status, tt.status, got.body)
			}
			if tt.status == 200 && string(bytes.TrimSpace(got.body)) != tt.want {
				t.Errorf("PATCH %s answers\n%s\nwant\n%s", tt.body, bytes.TrimSpace(got.body), tt.want)
			}
			list := serve(t, s, req{method: "GET", path: "/v1/inventory"})
			if !bytes.Contains(list.body, []byte(tt.want)) {
				t.Errorf("after PATCH %s the list is\n%s\nwant it to hold\n%s", tt.body, list.body, tt.want)
			}
		})
	}
}
