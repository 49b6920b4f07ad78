package spec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/spec/exchange"
)

func TestFindingsGroup(t *testing.T) {
	c, _ := Shared()
	var jsonl bytes.Buffer
	var announced []string
	f := NewFindings(c, FindingsOptions{JSONL: &jsonl, OnNew: func(g Finding) { announced = append(announced, g.Rule) }})
	judge := NewJudge(c, nil)
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for i, body := range []string{
		`[{"petId":1,"quantity":1,"status":"lost"}]`,
		`[{"petId":1,"quantity":1,"status":"sold"},{"petId":2,"quantity":1,"status":"gone"}]`,
		`[]`,
	} {
		x := exchangeOf("GET", "/v1/inventory", "", nil, 200, appJSON, body)
		x.Time = t0.Add(time.Duration(i) * time.Minute)
		f.Record(x, "listInventory", check(judge, x))
	}
	x := exchangeOf("GET", "/v1/inventory", "", http.Header{}, 401, appJSON, `{"code":"unauthorized","message":"m","status":400}`)
	f.Record(x, "listInventory", check(judge, x))
	gs := f.List()
	if len(gs) != 3 {
		t.Fatalf("%d groups; want 3: %+v", len(gs), gs)
	}
	g := gs[0]
	if g.Rule != RuleResponseBody || g.Path != "$[*].status" || g.Count != 2 || !g.FirstSeen.Equal(t0) || !g.LastSeen.Equal(t0.Add(time.Minute)) || g.Status != 200 {
		t.Errorf("first group %+v; want response-body-schema at $[*].status, twice, from t0 to t0+1m", g)
	}
	if !strings.Contains(g.Example.Response.Body, "lost") || g.Example.Request.Headers["Authorization"][0] != "Bearer [REDACTED]" {
		t.Errorf("example %+v; want the first exchange, its key redacted", g.Example)
	}
	if len(g.ID) != 12 || gs[1].ID == g.ID {
		t.Errorf("ids %q, %q; want 12 hex digits, distinct", g.ID, gs[1].ID)
	}
	again := NewFindings(c, FindingsOptions{})
	xx := exchangeOf("GET", "/v1/inventory", "", nil, 200, appJSON, `[{"petId":9,"quantity":1,"status":"x"}]`)
	again.Record(xx, "listInventory", check(judge, xx))
	if id := again.List()[0].ID; id != g.ID {
		t.Errorf("the same violation has id %s in another run; want %s", id, g.ID)
	}
	if strings.Join(announced, ",") != "response-body-schema,request-auth-missing,error-status-mismatch" {
		t.Errorf("OnNew saw %q", announced)
	}
	if f.Errors() != 4 {
		t.Errorf("Errors() = %d; want 4", f.Errors())
	}
	byOp, unknown := f.Traffic()
	if byOp["listInventory"] != 4 || unknown != 0 {
		t.Errorf("traffic %v, %d; want 4 lists", byOp, unknown)
	}
	// One JSON line per violation, the example with the first of each group.
	sc := bufio.NewScanner(&jsonl)
	var lines []line
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 4 || lines[0].Example == nil || lines[1].Example != nil || lines[1].Count != 2 || lines[1].Path != "$[1].status" {
		t.Errorf("JSON lines %+v; want 4, the second of the group without example, count 2, at its own index", lines)
	}
	f.Clear()
	if len(f.List()) != 0 || f.Errors() != 0 {
		t.Error("Clear left findings")
	}
}

func TestFindingsBounded(t *testing.T) {
	c, _ := Shared()
	f := NewFindings(c, FindingsOptions{MaxGroups: 2, ExampleLimit: 10})
	for _, p := range []string{"/v1/a", "/v1/b", "/v1/c", "/v1/a"} {
		x := exchangeOf("GET", p, "", nil, 404, appJSON, strings.Repeat("z", 100))
		f.Record(x, "GET "+p, check(NewJudge(c, nil), x))
	}
	gs := f.List()
	if len(gs) != 2 || f.Dropped() != 1 || gs[0].Count != 2 {
		t.Errorf("%d groups, %d dropped; want 2 groups and 1 dropped", len(gs), f.Dropped())
	}
	if b := gs[0].Example.Response; len(b.Body) != 10 || !b.Truncated || b.Bytes != 100 {
		t.Errorf("example body %q (%d bytes, truncated %v); want 10 of 100 bytes", b.Body, b.Bytes, b.Truncated)
	}
}

// check judges x and returns its violations.
func check(j *Judge, x *exchange.Exchange) []Violation {
	_, vs := j.Exchange(x)
	return vs
}

// TestFindingsKeyReplays checks that with KeyVar an example's bearer token
// reads $INVENTORY_API_KEY, so that the curl line a report makes of the
// example (exchange.Curl with the findings' redactor, as the proxy's
// Markdown, HTML and step summary do) replays where the key is set; a
// token the backend answered 401 stays hidden, so the replay is refused
// as the original was; without KeyVar every token is hidden.
func TestFindingsKeyReplays(t *testing.T) {
	c, _ := Shared()
	judge := NewJudge(c, nil)
	const token = "backend-token-4c1f9e"
	configured := exchange.NewRedactor(exchange.Secret{Value: "dev-key-configured", Var: exchange.APIKeyVar})
	tests := []struct {
		name     string
		keyVar   string
		status   int
		body     string
		wantHdr  string // the example's Authorization
		wantCurl string // in its curl line
	}{
		{"a token the backend took", exchange.APIKeyVar, 200, `[{"petId":1,"quantity":1,"status":"lost"}]`,
			"Bearer $INVENTORY_API_KEY", `-H "Authorization: Bearer $INVENTORY_API_KEY"`},
		{"a token the backend refused", exchange.APIKeyVar, 401, `{"code":"unauthorized","message":"m","status":400}`,
			"Bearer [REDACTED]", `-H 'Authorization: Bearer [REDACTED]'`},
		{"no KeyVar", "", 200, `[{"petId":1,"quantity":1,"status":"lost"}]`,
			"Bearer [REDACTED]", `-H 'Authorization: Bearer [REDACTED]'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFindings(c, FindingsOptions{Redactor: configured, KeyVar: tt.keyVar})
			x := exchangeOf("GET", "/v1/inventory", "", http.Header{"Authorization": {"Bearer " + token}}, tt.status, appJSON, tt.body)
			f.Record(x, "listInventory", check(judge, x))
			gs := f.List()
			if len(gs) == 0 {
				t.Fatal("no finding")
			}
			e := gs[0].Example
			if got := e.Request.Headers["Authorization"][0]; got != tt.wantHdr {
				t.Errorf("example's Authorization = %q; want %q", got, tt.wantHdr)
			}
			curl := exchange.Curl(&exchange.Exchange{Method: e.Method, URL: e.URL, Header: http.Header(e.Request.Headers)}, f.Redactor())
			if !strings.Contains(curl, tt.wantCurl) || strings.Contains(curl, token) {
				t.Errorf("curl line %s; want it to hold %s, and never the token", curl, tt.wantCurl)
			}
		})
	}
}
