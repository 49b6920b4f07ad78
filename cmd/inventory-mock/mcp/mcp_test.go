package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/petstore/inventory-kit/cmd/inventory-mock/mcp"
	"github.com/petstore/inventory-kit/mockserver"
)

// The keys of the mock under test: each needs escaping in a URL, so that
// the redactor's escaped forms are tested too.
const (
	apiKey   = "api+key/0123456789"
	adminKey = "admin key=ABCDEFGHIJ"
)

// A transport connects the SDK's own client to a mock's MCP server.
type transport struct {
	name    string
	connect func(t *testing.T, cfg mockserver.Config) (*mockserver.Server, *sdk.ClientSession)
}

// transports are the two the mock serves MCP on: stdio, through
// ServeStdio (what inventory-mock --mcp runs) on a pair of pipes, and
// streamable HTTP at /__admin/mcp behind the admin key.
var transports = []transport{
	{"stdio", connectStdio},
	{"http", connectHTTP},
}

func config() mockserver.Config {
	return mockserver.Config{APIKeys: []string{apiKey}, AdminKey: adminKey, JournalSize: 100, MCP: mcp.Handler("test")}
}

func connectStdio(t *testing.T, cfg mockserver.Config) (*mockserver.Server, *sdk.ClientSession) {
	t.Helper()
	m := mockserver.NewTest(t, cfg)
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcp.ServeStdio(ctx, m, "test", serverIn, serverOut) }()
	cs, err := client().Connect(ctx, &sdk.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		clientOut.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ServeStdio = %v; want nil once stdin ends", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("ServeStdio did not return after stdin ended")
		}
		cancel()
	})
	return m, cs
}

func connectHTTP(t *testing.T, cfg mockserver.Config) (*mockserver.Server, *sdk.ClientSession) {
	t.Helper()
	m, srv := mockserver.StartTest(t, cfg, nil)
	cs, err := client().Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint:   srv.URL + "/__admin/mcp",
		HTTPClient: &http.Client{Transport: bearer{adminKey}, Timeout: 10 * time.Second},
	}, nil)
	if err != nil {
		t.Fatalf("connect over HTTP: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return m, cs
}

func client() *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "mcp-test", Version: "1"}, nil)
}

// bearer sends every request with a bearer key.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// A result is what a tool answered: its structured content decoded, and
// the whole result as the client received it, for the key check.
type result struct {
	isError bool
	text    string
	value   map[string]any
	raw     string
}

// call calls a tool; a protocol error fails the test.
func call(t *testing.T, cs *sdk.ClientSession, name string, args any) result {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v; want a result", name, args, err)
	}
	raw, _ := json.Marshal(res)
	r := result{isError: res.IsError, raw: string(raw)}
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			r.text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &r.value)
	}
	noKey(t, name, r.raw)
	return r
}

// noKey fails the test where text holds a key of the mock, in any form
// the redactor knows.
func noKey(t *testing.T, where, text string) {
	t.Helper()
	for _, k := range []string{apiKey, adminKey} {
		for _, form := range []string{k, url.QueryEscape(k), url.PathEscape(k)} {
			if strings.Contains(text, form) {
				t.Errorf("%s: the result holds a key (%q): %s", where, form, text)
			}
		}
	}
}

// get returns the value at a dotted path of a decoded JSON value.
func get(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// send serves one request of the contract's API with the mock's key.
func send(m http.Handler, method, target, body string, header http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+apiKey)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	m.ServeHTTP(w, r)
	return w
}

// A toolCase is one call of a tool and what a user would notice of its
// answer.
type toolCase struct {
	name    string
	tool    string
	args    any
	wantErr string                                       // a tool error holding this; "": a result
	check   func(t *testing.T, r result, m http.Handler) // of a result
}

// toolCases call every tool with good and bad input, in an order that
// builds on the earlier calls.
var toolCases = []toolCase{
	{name: "describe", tool: "describe_contract", check: func(t *testing.T, r result, _ http.Handler) {
		if got := get(r.value, "record.key"); got != "petId" {
			t.Errorf("record.key = %v; want petId", got)
		}
		ops, _ := r.value["operations"].([]any)
		var names []string
		for _, o := range ops {
			names = append(names, get(o, "name").(string))
		}
		if !strings.Contains(strings.Join(names, ","), "updateInventory") {
			t.Errorf("operations = %v; want updateInventory among them", names)
		}
		if !strings.Contains(r.text, `"stability":"experimental"`) || !strings.Contains(r.text, `"deprecated":true`) {
			t.Errorf("describe_contract does not say what is experimental and deprecated: %s", r.text)
		}
		if !strings.Contains(r.text, "ascending petId") || !strings.Contains(r.text, "2147483647") {
			t.Errorf("silent = %v; want the list's order and quantity's bounds", r.value["silent"])
		}
	}},
	{name: "describe with an argument it does not take", tool: "describe_contract", args: map[string]any{"verbose": true}, wantErr: "verbose"},

	{name: "set a record in a session", tool: "set_record", args: map[string]any{"session": "s1", "key": 7, "fields": map[string]any{"quantity": 0}},
		check: func(t *testing.T, r result, m http.Handler) {
			if q := get(r.value, "quantity"); q != 0.0 {
				t.Errorf("quantity = %v; want 0", q)
			}
			w := send(m, "GET", "/v1/inventory", "", http.Header{"X-Mock-Session": {"s1"}})
			if !strings.Contains(w.Body.String(), `{"petId":7,"quantity":0,`) {
				t.Errorf("the API's list of session s1 does not show pet 7 with quantity 0: %s", w.Body)
			}
		}},
	{name: "set a record to a value the contract refuses", tool: "set_record", args: map[string]any{"key": 7, "fields": map[string]any{"quantity": -1}}, wantErr: "quantity"},
	{name: "set a record that does not exist", tool: "set_record", args: map[string]any{"key": 987654, "fields": map[string]any{"quantity": 1}}, wantErr: "404"},
	{name: "set a record without fields", tool: "set_record", args: map[string]any{"key": 7}, wantErr: "fields"},
	{name: "set a record with fields not an object", tool: "set_record", args: map[string]any{"key": 7, "fields": "quantity=1"}, wantErr: "fields"},
	{name: "set a record of a bad session", tool: "set_record", args: map[string]any{"session": "no spaces", "key": 7, "fields": map[string]any{"quantity": 1}}, wantErr: "session"},

	{name: "get a record", tool: "get_record", args: map[string]any{"session": "s1", "key": 7}, check: func(t *testing.T, r result, _ http.Handler) {
		if get(r.value, "petId") != 7.0 || get(r.value, "quantity") != 0.0 {
			t.Errorf("record = %v; want pet 7 with quantity 0", r.value)
		}
	}},
	{name: "get a record of the default session", tool: "get_record", args: map[string]any{"key": 7}, check: func(t *testing.T, r result, _ http.Handler) {
		if get(r.value, "quantity") == 0.0 {
			t.Errorf("record = %v; the default session's pet 7 has the fixtures' quantity, not session s1's 0", r.value)
		}
	}},
	{name: "get a record that does not exist", tool: "get_record", args: map[string]any{"key": 987654}, wantErr: "no record with petId 987654"},
	{name: "get a record without a key", tool: "get_record", args: map[string]any{}, wantErr: "key"},
	{name: "get a record with a key not a number", tool: "get_record", args: map[string]any{"key": "seven"}, wantErr: "key"},

	{name: "list records filtered", tool: "list_records", args: map[string]any{"session": "s1", "filter": []string{"quantity:0"}}, check: func(t *testing.T, r result, _ http.Handler) {
		if total, _ := r.value["total"].(float64); total < 1 {
			t.Errorf("total = %v; want pet 7 at least", r.value["total"])
		}
	}},
	{name: "list records sorted by a field that is not", tool: "list_records", args: map[string]any{"sort": "colour"}, wantErr: "colour"},
	{name: "list records past the limit", tool: "list_records", args: map[string]any{"limit": 5000}, wantErr: "limit"},
	{name: "list records with a bad filter", tool: "list_records", args: map[string]any{"filter": []string{"status"}}, wantErr: "FIELD:VALUE"},

	{name: "list sessions", tool: "list_sessions", check: func(t *testing.T, r result, _ http.Handler) {
		if !strings.Contains(r.text, `"name":"s1"`) {
			t.Errorf("sessions = %s; want s1 among them", r.text)
		}
	}},
	{name: "reset a session", tool: "reset_session", args: map[string]any{"session": "s1"}, check: func(t *testing.T, _ result, m http.Handler) {
		w := send(m, "GET", "/v1/inventory", "", http.Header{"X-Mock-Session": {"s1"}})
		if strings.Contains(w.Body.String(), `{"petId":7,"quantity":0,`) {
			t.Errorf("session s1 still has pet 7 with quantity 0 after the reset")
		}
	}},
	{name: "reset a session with a bad name", tool: "reset_session", args: map[string]any{"session": "../etc"}, wantErr: "session"},
	{name: "drop a session", tool: "drop_session", args: map[string]any{"session": "s1"}},
	{name: "drop a session with a bad name", tool: "drop_session", args: map[string]any{"session": strings.Repeat("x", 65)}, wantErr: "session"},

	{name: "set chaos", tool: "set_chaos", args: map[string]any{"rules": []any{map[string]any{"operation": "updateInventory", "fault": "status", "status": 503}}},
		check: func(t *testing.T, _ result, m http.Handler) {
			if w := send(m, "PATCH", "/v1/inventory/3", `{"quantity":1}`, nil); w.Code != http.StatusServiceUnavailable {
				t.Errorf("PATCH under the rule: status %d; want 503", w.Code)
			}
		}},
	{name: "set a fault that is not one", tool: "set_chaos", args: map[string]any{"rules": []any{map[string]any{"fault": "explode"}}}, wantErr: "explode"},
	{name: "set chaos on an operation that is not", tool: "set_chaos", args: map[string]any{"rules": []any{map[string]any{"operation": "deletePet", "fault": "reset"}}}, wantErr: "deletePet"},
	{name: "get chaos", tool: "get_chaos", check: func(t *testing.T, r result, _ http.Handler) {
		if !strings.Contains(r.text, `"status":503`) {
			t.Errorf("chaos = %s; want the 503 rule", r.text)
		}
	}},
	{name: "set latency", tool: "set_latency", args: map[string]any{"operation": "updateInventory", "latency": "5ms"}, check: func(t *testing.T, r result, _ http.Handler) {
		if !strings.Contains(r.text, `"latency":"5ms"`) || !strings.Contains(r.text, `"status":503`) {
			t.Errorf("chaos = %s; want the latency beside the 503 fault", r.text)
		}
	}},
	{name: "set a latency that is not one", tool: "set_latency", args: map[string]any{"latency": "fast"}, wantErr: "fast"},
	{name: "clear chaos", tool: "clear_chaos", check: func(t *testing.T, r result, m http.Handler) {
		if strings.Contains(r.text, `"status":503`) {
			t.Errorf("chaos = %s; want no rule", r.text)
		}
		if w := send(m, "PATCH", "/v1/inventory/3", `{"quantity":1}`, nil); w.Code != http.StatusOK {
			t.Errorf("PATCH after clear_chaos: status %d; want 200", w.Code)
		}
	}},

	{name: "set chaos for one session", tool: "set_chaos", args: map[string]any{"session": "s2", "rules": []any{map[string]any{"operation": "updateInventory", "fault": "status", "status": 503}}},
		check: func(t *testing.T, _ result, m http.Handler) {
			if w := send(m, "PATCH", "/v1/inventory/3", `{"quantity":1}`, http.Header{"X-Mock-Session": {"s2"}}); w.Code != http.StatusServiceUnavailable {
				t.Errorf("PATCH in session s2 under its rule: status %d; want 503", w.Code)
			}
			if w := send(m, "PATCH", "/v1/inventory/3", `{"quantity":1}`, nil); w.Code != http.StatusOK {
				t.Errorf("PATCH in the default session under s2's rule: status %d; want 200", w.Code)
			}
		}},
	{name: "set latency for one session", tool: "set_latency", args: map[string]any{"session": "s2", "latency": "1ms"}, check: func(t *testing.T, r result, _ http.Handler) {
		if !strings.Contains(r.text, `"latency":"1ms"`) || !strings.Contains(r.text, `"status":503`) || !strings.Contains(r.text, `"s2"`) {
			t.Errorf("chaos of s2 = %s; want its latency beside its 503 fault", r.text)
		}
	}},
	{name: "get chaos of a session", tool: "get_chaos", args: map[string]any{"session": "s2"}, check: func(t *testing.T, r result, _ http.Handler) {
		if !strings.Contains(r.text, `"latency":"1ms"`) {
			t.Errorf("chaos of s2 = %s; want its own rules", r.text)
		}
	}},
	{name: "get chaos of a bad session", tool: "get_chaos", args: map[string]any{"session": "a b"}, wantErr: "session"},
	{name: "clear chaos of a session", tool: "clear_chaos", args: map[string]any{"session": "s2"}, check: func(t *testing.T, r result, m http.Handler) {
		if strings.Contains(r.text, `"status":503`) {
			t.Errorf("chaos of s2 = %s; want no rule", r.text)
		}
		if w := send(m, "PATCH", "/v1/inventory/3", `{"quantity":1}`, http.Header{"X-Mock-Session": {"s2"}}); w.Code != http.StatusOK {
			t.Errorf("PATCH in s2 after clear_chaos: status %d; want 200", w.Code)
		}
	}},
	{name: "set the rate limit of a session", tool: "set_rate_limit", args: map[string]any{"session": "s2", "rate": "1/m"}, check: func(t *testing.T, _ result, m http.Handler) {
		s2 := http.Header{"X-Mock-Session": {"s2"}}
		send(m, "GET", "/v1/inventory", "", s2)
		if w := send(m, "GET", "/v1/inventory", "", s2); w.Code != http.StatusTooManyRequests {
			t.Errorf("second list of s2 under its 1/m: status %d; want 429", w.Code)
		}
		for range 3 {
			if w := send(m, "GET", "/v1/inventory", "", nil); w.Code != http.StatusOK {
				t.Errorf("list of the default session under s2's limit: status %d; want 200", w.Code)
			}
		}
	}},
	{name: "get the rate limit of a session", tool: "get_rate_limit", args: map[string]any{"session": "s2"}, check: func(t *testing.T, r result, _ http.Handler) {
		if r.value["rate"] != "1/m" {
			t.Errorf("rate limit of s2 = %s; want 1/m", r.text)
		}
	}},
	{name: "clear the rate limit of a session", tool: "clear_rate_limit", args: map[string]any{"session": "s2"}, check: func(t *testing.T, r result, m http.Handler) {
		if r.value["rate"] != nil {
			t.Errorf("rate limit of s2 = %s; want none", r.text)
		}
		if w := send(m, "GET", "/v1/inventory", "", http.Header{"X-Mock-Session": {"s2"}}); w.Code != http.StatusOK {
			t.Errorf("list of s2 after clear_rate_limit: status %d; want 200", w.Code)
		}
	}},

	{name: "set the rate limit", tool: "set_rate_limit", args: map[string]any{"rate": "1/m"}, check: func(t *testing.T, _ result, m http.Handler) {
		send(m, "GET", "/v1/inventory", "", nil)
		if w := send(m, "GET", "/v1/inventory", "", nil); w.Code != http.StatusTooManyRequests {
			t.Errorf("second list under 1/m: status %d; want 429", w.Code)
		}
	}},
	{name: "set a rate that is not one", tool: "set_rate_limit", args: map[string]any{"rate": "lots"}, wantErr: "lots"},
	{name: "get the rate limit", tool: "get_rate_limit", check: func(t *testing.T, r result, _ http.Handler) {
		if r.value["rate"] != "1/m" {
			t.Errorf("rate limit = %s; want 1/m", r.text)
		}
	}},
	{name: "clear the rate limit", tool: "clear_rate_limit", check: func(t *testing.T, r result, m http.Handler) {
		if r.value["rate"] != nil {
			t.Errorf("rate limit = %s; want none", r.text)
		}
		if w := send(m, "GET", "/v1/inventory", "", nil); w.Code != http.StatusOK {
			t.Errorf("list after clear_rate_limit: status %d; want 200", w.Code)
		}
	}},

	{name: "read the journal", tool: "list_requests", args: map[string]any{"operation": "updateInventory", "limit": 2}, check: func(t *testing.T, r result, _ http.Handler) {
		entries, _ := r.value["requests"].([]any)
		if len(entries) != 2 {
			t.Fatalf("requests = %d entries; want 2", len(entries))
		}
		for _, e := range entries {
			if get(e, "verdict.valid") == nil || !strings.HasPrefix(get(e, "curl").(string), "curl ") {
				t.Errorf("entry %v; want a verdict and a curl line", e)
			}
		}
	}},
	{name: "read the journal since a bad time", tool: "list_requests", args: map[string]any{"since": "2026-13-45T99:00:00Z"}, wantErr: "RFC 3339"},
	{name: "read the journal with a bad status", tool: "list_requests", args: map[string]any{"status": 42}, wantErr: "status"},
	{name: "clear the journal", tool: "clear_requests", check: func(t *testing.T, _ result, m http.Handler) {}},
	{name: "clear the journal of a bad session", tool: "clear_requests", args: map[string]any{"session": "a/b"}, wantErr: "session"},

	{name: "judge a good exchange", tool: "judge_exchange", args: map[string]any{"method": "PATCH", "path": "/v1/inventory/7",
		"requestBody": map[string]any{"quantity": 5}, "status": 200, "body": map[string]any{"petId": 7, "quantity": 5, "status": "available"}},
		check: func(t *testing.T, r result, _ http.Handler) {
			if r.value["valid"] != true || r.value["operation"] != "updateInventory" {
				t.Errorf("verdict = %s; want valid, of updateInventory", r.text)
			}
		}},
	{name: "judge an answer that breaks the contract", tool: "judge_exchange", args: map[string]any{"method": "PATCH", "path": "/inventory/7",
		"requestBody": map[string]any{"quantity": 5}, "status": 200, "body": map[string]any{"petId": 7, "quantity": 4, "status": "gone"}},
		check: func(t *testing.T, r result, _ http.Handler) {
			if r.value["valid"] != false || !strings.Contains(r.text, "response-body-schema") || !strings.Contains(r.text, "response-echo-mismatch") {
				t.Errorf("verdict = %s; want invalid: the status enum and the quantity not echoed", r.text)
			}
			if r.value["path"] != "/v1/inventory/7" {
				t.Errorf("path = %v; want the base path added", r.value["path"])
			}
		}},
	{name: "judge a malformed body", tool: "judge_exchange", args: map[string]any{"method": "GET", "path": "/v1/inventory", "status": 200, "bodyText": "{oops"},
		check: func(t *testing.T, r result, _ http.Handler) {
			if r.value["valid"] != false || !strings.Contains(r.text, "malformed JSON") {
				t.Errorf("verdict = %s; want the malformed body", r.text)
			}
		}},
	{name: "judge without a method or status", tool: "judge_exchange", args: map[string]any{"method": "", "path": "/v1/inventory", "status": 0}, wantErr: "status: 0 is not an HTTP status"},
	{name: "judge with both bodies", tool: "judge_exchange", args: map[string]any{"method": "GET", "path": "/v1/inventory", "status": 200, "body": []any{}, "bodyText": "[]"}, wantErr: "give one of them"},
	{name: "judge a relative path", tool: "judge_exchange", args: map[string]any{"method": "GET", "path": "inventory", "status": 200}, wantErr: "does not start with /"},
}

func TestMCPTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			m, cs := tr.connect(t, config())
			// Two updates for the journal.
			send(m, "PATCH", "/v1/inventory/1", `{"quantity":2}`, nil)
			send(m, "PATCH", "/v1/inventory/2", `{"quantity":"two"}`, nil)
			for _, tc := range toolCases {
				t.Run(tc.name, func(t *testing.T) {
					r := call(t, cs, tc.tool, tc.args)
					switch {
					case tc.wantErr != "" && !r.isError:
						t.Fatalf("%s: a result %s; want a tool error saying %q", tc.tool, r.text, tc.wantErr)
					case tc.wantErr != "" && !strings.Contains(r.text, tc.wantErr):
						t.Fatalf("%s: error %q; want it to say %q", tc.tool, r.text, tc.wantErr)
					case tc.wantErr == "" && r.isError:
						t.Fatalf("%s: error %q; want a result", tc.tool, r.text)
					}
					if tc.check != nil && !r.isError {
						tc.check(t, r, m)
					}
				})
			}
		})
	}
}

func TestMCPToolList(t *testing.T) {
	want := map[string]bool{}
	for _, tc := range toolCases {
		want[tc.tool] = true
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			_, cs := tr.connect(t, config())
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range res.Tools {
				if !want[tool.Name] {
					t.Errorf("tool %s is not called by TestMCPTools", tool.Name)
				}
				if tool.Description == "" || tool.InputSchema == nil {
					t.Errorf("tool %s has no description or input schema", tool.Name)
				}
			}
			if len(res.Tools) != len(want) {
				t.Errorf("%d tools; want %d", len(res.Tools), len(want))
			}
			_, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "format_disk"})
			if err == nil || !strings.Contains(err.Error(), "format_disk") {
				t.Errorf("an unknown tool: %v; want an error naming it", err)
			}
		})
	}
}

func TestMCPResources(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			m, cs := tr.connect(t, config())
			send(m, "GET", "/v1/inventory", "", http.Header{"X-Mock-Session": {"team-a"}})
			send(m, "PATCH", "/v1/inventory/3", `{"quantity":1}`, nil)
			for _, tc := range []struct {
				uri, want, notWant string
			}{
				{"inventory-mock://spec/openapi.yaml", "operationId: updateInventory", ""},
				{"inventory-mock://admin/openapi.yaml", "operationId: listRecords", ""},
				{"inventory-mock://journal", `"session":"team-a"`, ""},
				{"inventory-mock://journal/team-a", `"session":"team-a"`, `"method":"PATCH"`},
			} {
				res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: tc.uri})
				if err != nil {
					t.Errorf("read %s: %v", tc.uri, err)
					continue
				}
				text := res.Contents[0].Text
				if !strings.Contains(text, tc.want) || tc.notWant != "" && strings.Contains(text, tc.notWant) {
					t.Errorf("read %s = %.300s; want %q in it and not %q", tc.uri, text, tc.want, tc.notWant)
				}
				noKey(t, tc.uri, text)
			}
			for _, uri := range []string{"inventory-mock://nothing", "inventory-mock://journal/bad%20name"} {
				if _, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri}); err == nil {
					t.Errorf("read %s: no error; want one", uri)
				}
			}
		})
	}
}

// TestMCPNoKey sends the keys in every place the redactor knows of, to
// the API and to the tools, and finds none in what the tools answer (call
// checks each result).
func TestMCPNoKey(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			m, cs := tr.connect(t, config())
			for _, k := range []string{apiKey, adminKey} {
				send(m, "GET", "/v1/inventory?token="+url.QueryEscape(k), "", http.Header{"X-Debug": {k}})
				send(m, "PATCH", "/v1/inventory/"+url.PathEscape(k), `{"quantity":1}`, nil)
				send(m, "PATCH", "/v1/inventory/4", `{"quantity":1,"note":"`+k+`"}`, nil)
				send(m, "PATCH", "/v1/inventory/4", `{"quantity":"`+k+`"}`, nil)
				send(m, "GET", "/v1/inventory", "", http.Header{"X-Mock-Session": {url.PathEscape(k)}})
			}
			r := call(t, cs, "list_requests", map[string]any{"limit": 100})
			if n := len(r.value["requests"].([]any)); n < 10 {
				t.Fatalf("journal holds %d requests; want the 10 sent", n)
			}
			for _, k := range []string{apiKey, adminKey} {
				call(t, cs, "set_record", map[string]any{"key": 4, "fields": map[string]any{"quantity": k}})
				call(t, cs, "set_record", map[string]any{"session": k, "key": 4, "fields": map[string]any{"quantity": 1}})
				call(t, cs, "get_record", map[string]any{"session": url.PathEscape(k), "key": 4})
				call(t, cs, "list_records", map[string]any{"filter": []string{"status:" + k}, "sort": k})
				call(t, cs, "set_chaos", map[string]any{"rules": []any{map[string]any{"operation": k, "latency": k}}})
				call(t, cs, "set_rate_limit", map[string]any{"rate": k})
				call(t, cs, "list_requests", map[string]any{"since": k, "operation": k})
				call(t, cs, "judge_exchange", map[string]any{"method": "PATCH", "path": "/v1/inventory/" + url.PathEscape(k) + "?key=" + url.QueryEscape(k),
					"requestBody": map[string]any{"quantity": k}, "status": 200, "body": map[string]any{"petId": k, "quantity": k}})
				call(t, cs, "judge_exchange", map[string]any{"method": k, "path": k, "status": 200})
				call(t, cs, "reset_session", map[string]any{"session": k, "unknown": k})
			}
		})
	}
}

// TestMCPHTTPRefused: /__admin/mcp takes the admin key only, and the admin
// guard refuses a foreign Host and a page of another origin, as for the
// rest of /__admin/.
func TestMCPHTTPRefused(t *testing.T) {
	_, srv := mockserver.StartTest(t, config(), nil)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		name   string
		header map[string]string
		host   string
		status int
		code   string
	}{
		{"no key", nil, "", http.StatusUnauthorized, "unauthorized"},
		{"an API key", map[string]string{"Authorization": "Bearer " + apiKey}, "", http.StatusUnauthorized, "admin_key_required"},
		{"a wrong key", map[string]string{"Authorization": "Bearer nope-nope-nope"}, "", http.StatusUnauthorized, "unauthorized"},
		{"a page of another origin", map[string]string{"Authorization": "Bearer " + adminKey, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, "", http.StatusForbidden, "cross_origin"},
		{"a foreign Host (DNS rebinding)", map[string]string{"Authorization": "Bearer " + adminKey}, "evil.example", http.StatusForbidden, "host_not_allowed"},
		{"the admin key", map[string]string{"Authorization": "Bearer " + adminKey}, "", http.StatusOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest("POST", srv.URL+"/__admin/mcp", strings.NewReader(initialize))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			if tc.host != "" {
				r.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d; want %d (%s)", resp.StatusCode, tc.status, body)
			}
			if tc.code != "" && !strings.Contains(string(body), `"code":"`+tc.code+`"`) {
				t.Errorf("body %s; want the Error code %s", body, tc.code)
			}
			if tc.code == "" && !strings.Contains(string(body), `"serverInfo"`) {
				t.Errorf("body %s; want the initialize result", body)
			}
			noKey(t, tc.name, string(body))
		})
	}
	// The SDK's client with a wrong key cannot connect.
	_, err := client().Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint: srv.URL + "/__admin/mcp", HTTPClient: &http.Client{Transport: bearer{apiKey}},
	}, nil)
	if err == nil {
		t.Error("the SDK's client connected with an API key; want it refused")
	}
}

// TestMCPHTTPOff: a mock built without Config.MCP answers /__admin/mcp 404.
func TestMCPHTTPOff(t *testing.T) {
	cfg := config()
	cfg.MCP = nil
	_, srv := mockserver.StartTest(t, cfg, nil)
	r, _ := http.NewRequest("POST", srv.URL+"/__admin/mcp", strings.NewReader("{}"))
	r.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %d; want 404", resp.StatusCode)
	}
}
