package mockserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/fixtures"
)

// FuzzUpdate sends PATCH requests with any petId segment, content type and
// body. Whatever comes in, the mock answers below 500 with either a valid
// InventoryItem or an Error whose status matches, and the store stays
// valid: the same pets, statuses untouched, quantities within bounds, and
// only a 200 changes a quantity. The seed corpus is in testdata/fuzz.
func FuzzUpdate(f *testing.F) {
	for _, seed := range []struct{ petID, contentType, body string }{
		{"3", "application/json", `{"quantity":42}`},
		{"3", "application/json", `{"quantity":5.0}`},
		{"abc", "application/json", `{"quantity":1}`},
		{"9223372036854775808", "application/json", `{"quantity":1}`},
		{"3", "text/plain", `{"quantity":1}`},
		{"3", "application/json", `{"quantity":1,"quantity":2}`},
		{"3", "application/json", `{"quantity":-1e308}`},
		{"3", "application/json; charset=utf-8", "{\"quantity\":\"\xff\"}"},
		{"424242", "application/json", `[]`},
	} {
		f.Add(seed.petID, seed.contentType, []byte(seed.body))
	}
	c := contract(f)
	s, err := New(Config{Contract: c, Records: testRecords(f), APIKeys: []string{testKey}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, petID, contentType string, body []byte) {
		r := httptest.NewRequest("PATCH", "/v1/inventory/0", bytes.NewReader(body))
		r.URL.Path = "/v1/inventory/" + petID
		r.URL.RawPath = ""
		r.Header.Set("Authorization", "Bearer "+testKey)
		r.Header.Set("Content-Type", contentType)
		before := listed(t, s)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented {
			t.Fatalf("status %d for petId %q, body %q: %s", rec.Code, petID, body, rec.Body)
		}
		var updated *item
		if rec.Code == 200 {
			var it item
			if ps := c.ValidateValue("InventoryItem", rec.Body.Bytes()); len(ps) > 0 || json.Unmarshal(rec.Body.Bytes(), &it) != nil {
				t.Fatalf("200 without a valid InventoryItem: %s", rec.Body)
			}
			updated = &it
		} else {
			var e struct{ Status int }
			if ps := c.ValidateValue("Error", rec.Body.Bytes()); len(ps) > 0 || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Status != rec.Code {
				t.Fatalf("%d without a valid Error: %s", rec.Code, rec.Body)
			}
		}
		var was, now []item
		json.Unmarshal(before, &was)
		if err := json.Unmarshal(listed(t, s), &now); err != nil || len(now) != len(was) {
			t.Fatalf("store lost pets: %d -> %d (%v)", len(was), len(now), err)
		}
		for i := range now {
			w, n := was[i], now[i]
			if n.PetID != w.PetID || n.Status != w.Status || n.Quantity < fixtures.DefaultMinimum || n.Quantity > fixtures.DefaultMaximum {
				t.Fatalf("store corrupted: %+v -> %+v", w, n)
			}
			if n.Quantity != w.Quantity && (updated == nil || *updated != n) {
				t.Fatalf("pet %d changed from %d to %d without a 200 saying so (%s)", n.PetID, w.Quantity, n.Quantity, strings.TrimSpace(rec.Body.String()))
			}
		}
	})
}
