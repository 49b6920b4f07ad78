package mockserver

import (
	"fmt"
	"strings"
	"testing"
)

// TestChaosExample switches a forced answer on for every caller: a rule
// with an example answers it, as Prefer: example=NAME would, until the
// rule is removed.
func TestChaosExample(t *testing.T) {
	s := newServer(t, func(c *Config) { c.JournalSize = 10 })
	list := req{method: "GET", path: "/v1/inventory"}
	if got := putChaos(t, s, `{"rules": [{"operation": "listInventory", "example": "empty"}]}`); got.status != 200 || !strings.Contains(string(got.body), `"example":"empty"`) {
		t.Fatalf("PUT chaos: %d %s", got.status, got.body)
	}
	if got := serve(t, s, list); got.status != 200 || string(got.body) != "[]\n" {
		t.Errorf("list under an example rule = %d %q; want 200 []", got.status, got.body)
	}
	if got := serve(t, s, withHeader(list, "Prefer", "example=one-of-each")); string(got.body) != "[]\n" {
		t.Errorf("a request's Prefer under an example rule = %q; want the rule's answer, as a fault's", got.body)
	}
	if e := journalOf(t, s, ""); len(e) == 0 || e[0].Fault != "forced example=empty" {
		t.Errorf("journal = %+v; want the forced example recorded as chaos", e)
	}
	// The update has no rule: it is served.
	if got := serve(t, s, req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity": 9}`}); got.status != 200 {
		t.Errorf("update under a list rule: %d %s", got.status, got.body)
	}
	// The key comes first.
	if got := serve(t, s, req{method: "GET", path: "/v1/inventory", auth: "-"}); got.status != 401 {
		t.Errorf("no key under an example rule: %d; want 401", got.status)
	}
	if got := putChaos(t, s, `{"rules": [{"operation": "listInventory", "example": "empty", "probability": 0}]}`); got.status != 200 {
		t.Fatalf("PUT chaos: %d %s", got.status, got.body)
	}
	if got := serve(t, s, list); !strings.Contains(string(got.body), `"petId":64`) {
		t.Errorf("list under a rule of probability 0 = %.80s; want the records", got.body)
	}
	if got := serve(t, s, req{method: "DELETE", path: "/__admin/chaos"}); got.status != 204 {
		t.Fatalf("DELETE chaos: %d", got.status)
	}
	if got := serve(t, s, list); !strings.Contains(string(got.body), `"petId":64`) {
		t.Errorf("list after the rule is removed = %.80s; want the records", got.body)
	}
}

func TestChaosExampleMistakes(t *testing.T) {
	s := newServer(t)
	tests := []struct{ rules, message string }{
		{`[{"example": "empty"}]`, `example "empty": name the operation whose example it is`},
		{`[{"operation": "listInventory", "example": "nope"}]`, `example "nope": listInventory has no example of that name; it has empty, one-of-each`},
		{`[{"operation": "updateInventory", "example": "empty"}]`, "updateInventory has no example of that name; it has none"},
		{`[{"operation": "listInventory", "example": "empty", "fault": "reset"}]`, "give a fault or an example, not both"},
		{`[{"operation": "listInventory", "example": "empty", "status": 503}]`, "give no status"},
		{`[{"operation": "listInventory", "example": "empty", "probability": 2}]`, "probability"},
		{`[{"operation": "listInventory", "fault": "reset"}, {"operation": "listInventory", "example": "empty"}]`, "a second fault or example for the same operations"},
		{`[{"operation": "listInventory", "fault": "example"}]`, `"example" is not one of`},
	}
	for _, tt := range tests {
		got := putChaos(t, s, `{"rules": `+tt.rules+`}`)
		if got.status != 400 || !strings.Contains(fmt.Sprint(got.Message), tt.message) {
			t.Errorf("PUT %s: %d %s; want 400 with %q", tt.rules, got.status, got.body, tt.message)
		}
	}
	if got := serve(t, s, req{method: "GET", path: "/__admin/chaos"}); !strings.Contains(string(got.body), `"rules":[]`) {
		t.Errorf("after refused rules, GET /__admin/chaos = %s; want none in force", got.body)
	}
}
