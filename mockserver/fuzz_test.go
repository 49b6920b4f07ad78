package mockserver

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/spec"
)

// FuzzUpdate sends PATCH requests with any petId segment, content type and
// body. Whatever comes in, the mock answers below 500 with either a valid
// InventoryItem or an Error whose status matches, an answer the contract
// documents for the update where the path addresses it, and the store stays
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
		if rec.Code >= 500 {
			t.Fatalf("status %d for petId %q, body %q: %s", rec.Code, petID, body, rec.Body)
		}
		if op := operationOf(c, r.Method, r.URL.Path); op != nil {
			if ps := op.CheckResponse(rec.Code, rec.Header(), rec.Body.Bytes()); len(ps) > 0 {
				t.Fatalf("%d for petId %q, body %q breaks the contract: %s: %s", rec.Code, petID, body, spec.Join(ps), rec.Body)
			}
		}
		var updated *item
		if rec.Code == 200 {
			var it item
			if ps := c.Schema("InventoryItem").ValidateJSON(rec.Body.Bytes()); len(ps) > 0 || json.Unmarshal(rec.Body.Bytes(), &it) != nil {
				t.Fatalf("200 without a valid InventoryItem: %s", rec.Body)
			}
			updated = &it
		} else {
			var e struct{ Status int }
			if ps := c.Schema("Error").ValidateJSON(rec.Body.Bytes()); len(ps) > 0 || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Status != rec.Code {
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

// FuzzPrefer sends any Prefer header on the list and the update. Whatever
// comes in, the mock answers 5xx only where the header forces that code
// (the contract's default response documents it), every answer is one the
// contract documents, and a header it accepts renders back to one it
// accepts the same way.
func FuzzPrefer(f *testing.F) {
	for _, seed := range []string{
		"code=404", "example=empty", "delay=5", "code=200, example=one-of-each", "return=minimal",
		"code=404; x=y, delay=1", "CODE=401", `example="empty"`, "code=", "dynamic=true", "code=404,code=401",
		"delay=99999999999999999999", ",,", "example=", "code=+401", "code=4e2",
	} {
		f.Add(seed)
	}
	s, err := New(Config{Contract: contract(f), Records: testRecords(f), APIKeys: []string{testKey}, MaxDelay: 10 * time.Millisecond})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, prefer string) {
		p, perr := parsePrefer([]string{prefer}, 10*time.Millisecond)
		if perr == nil {
			again, err := parsePrefer([]string{p.String()}, 10*time.Millisecond)
			if err != nil || again != p {
				t.Fatalf("Prefer %q reads as %+v, renders as %q, which reads as %+v, %v", prefer, p, p.String(), again, err)
			}
		}
		for _, method := range []string{"GET", "PATCH"} {
			path, body := "/v1/inventory", ""
			if method == "PATCH" {
				path, body = "/v1/inventory/3", `{"quantity":4242}`
			}
			r := httptest.NewRequest(method, path, strings.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+testKey)
			r.Header.Set("Content-Type", "application/json")
			r.Header["Prefer"] = []string{prefer}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, r)
			if rec.Code >= 500 && (perr != nil || p.code != rec.Code) {
				t.Fatalf("%s with Prefer %q: status %d: %s", method, prefer, rec.Code, rec.Body)
			}
			if ps := operationOf(s.contract, method, path).CheckResponse(rec.Code, rec.Header(), rec.Body.Bytes()); len(ps) > 0 {
				t.Fatalf("%s with Prefer %q: %d breaks the contract: %s: %s", method, prefer, rec.Code, spec.Join(ps), rec.Body)
			}
			if perr != nil && rec.Code != 400 {
				t.Fatalf("%s with Prefer %q, which parsePrefer refuses (%v): status %d", method, prefer, perr, rec.Code)
			}
		}
	})
}

// FuzzChaosFlags reads any --latency and --fault value and puts the rule
// in force. Nothing panics; a rule that is refused changes nothing; one
// that is accepted is the rule GET /__admin/chaos then shows.
func FuzzChaosFlags(f *testing.F) {
	for _, seed := range []string{"200ms", "updateInventory=50ms-1s", "reset@0.1", "listInventory=status:503@0.5", "status", "slow@NaN", "=", "x=y=z", "1s-", "-1s", "status:99999999999999999999"} {
		f.Add(seed)
	}
	c := contract(f)
	f.Fuzz(func(t *testing.T, v string) {
		ch := newChaos(c, time.Second)
		for _, parse := range []func(string) (ChaosRule, error){ParseLatencyFlag, ParseFaultFlag} {
			r, err := parse(v)
			if err != nil {
				continue
			}
			before, _ := ch.get("")
			if err := ch.set("", Chaos{Seed: 1, Rules: []ChaosRule{r}}); err != nil {
				if after, _ := ch.get(""); after.Seed != before.Seed || len(after.Rules) != len(before.Rules) {
					t.Fatalf("a refused rule %+v changed the rules in force", r)
				}
				continue
			}
			if got, _ := ch.get(""); len(got.Rules) != 1 || got.Seed != 1 {
				t.Fatalf("rule %+v accepted, but in force: %+v", r, got)
			}
			for range 3 {
				d := ch.draw(c.Operations[0], "")
				if d.delay < 0 || d.delay > time.Second {
					t.Fatalf("rule %+v drew a delay of %s", r, d.delay)
				}
			}
		}
	})
}
