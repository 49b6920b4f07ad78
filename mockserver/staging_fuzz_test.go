package mockserver

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/spec"
)

// FuzzRateLimit: any --rate-limit value is refused with a message or
// gives a limit whose buckets hand out tokens and say how long to wait,
// never a negative or endless wait.
func FuzzRateLimit(f *testing.F) {
	for _, s := range []string{"10/s", "600/m:50", "0.5/s", "1000000/s:1000000", "0/s", "-1/s", "1e3/s", "NaN/s", "10/h", "10/s:", ":5", "/s", "1/s:99999999999999999999", "0.0000001/s", " 5 / s "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		rl, err := ParseRateLimitFlag(v)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--rate-limit ") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		now := time.Unix(1e9, 0)
		l := newLimiter(4, func() time.Time { return now })
		if err := l.set("", rl); err != nil {
			t.Fatalf("ParseRateLimitFlag(%q) accepted what set refuses: %v", v, err)
		}
		id := sha256.Sum256([]byte(v))
		if ok, _, _ := l.take(id, ""); !ok {
			t.Fatalf("%q: a full bucket refused its first request", v)
		}
		for range 3 {
			if ok, wait, _ := l.take(id, ""); !ok && (wait <= 0 || wait > 24*time.Hour*365*10) {
				t.Fatalf("%q: refused with a wait of %s", v, wait)
			}
		}
	})
}

// FuzzReshape: any stored object, reshaped under a contract that drops a
// field and requires one with a default, is a JSON object with only that
// contract's fields, and a write keeps the fields it does not serve.
func FuzzReshape(f *testing.F) {
	for _, s := range []string{`{"petId":1,"quantity":2,"status":"sold"}`, `{"petId":1,"note":"x"}`, `{}`, `{"status":{"nested":[1,2]},"petId":-0}`, `{"a":1,"a":2}`, `[]`, `{"petId":1,"quantity":2,"status":"sold","shelf":"B"}`, `{"petId":1,"quantity":2,"shelf":"\u0000"}`} {
		f.Add(s)
	}
	s := newServer(f, func(c *Config) { c.Reloadable = true })
	shelf := edited(f, set("components.schemas.InventoryItem.properties.shelf", "{type: string, default: A1}"),
		set("components.schemas.InventoryItem.required", "[petId, quantity, shelf]"), del("components.schemas.InventoryItem.properties.status"))
	if err := s.Reload(f.Context(), shelf); err != nil {
		f.Fatal(err)
	}
	p := s.live.Load().reshape
	f.Fuzz(func(t *testing.T, raw string) {
		if err := spec.Members([]byte(raw), func(_, _ []byte) bool { return true }); err != nil {
			return // not an object the store could hold
		}
		out := p.record([]byte(raw))
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("reshaped %s into %s, not an object: %v", raw, out, err)
		}
		for name := range m {
			if name != "petId" && name != "quantity" && name != "shelf" {
				t.Errorf("reshaped %s serves %q", raw, name)
			}
		}
		if _, ok := m["shelf"]; !ok {
			t.Errorf("reshaped %s lacks the required shelf, whose default is A1", raw)
		}
		written := p.write(fixtures.Record{JSON: []byte(raw)}, fixtures.Record{JSON: out})
		var all map[string]json.RawMessage
		if err := json.Unmarshal(written.JSON, &all); err != nil {
			t.Fatalf("written %s: not an object: %v", written.JSON, err)
		}
		var before map[string]json.RawMessage
		json.Unmarshal([]byte(raw), &before)
		for name := range before {
			if _, ok := all[name]; !ok {
				t.Errorf("the write of %s lost %q: %s", raw, name, written.JSON)
			}
		}
	})
}
