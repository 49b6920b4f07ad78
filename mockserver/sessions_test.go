package mockserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/store"
)

// quantityOf returns the quantity of pet 3 as session's list shows it.
func quantityOf(t *testing.T, s *Server, session string) int {
	t.Helper()
	got := serve(t, s, withHeader(req{method: "GET", path: "/v1/inventory"}, SessionHeader, session))
	var items []struct {
		PetID    int64 `json:"petId"`
		Quantity int   `json:"quantity"`
	}
	if err := json.Unmarshal(got.body, &items); err != nil {
		t.Fatalf("list of %s: %d %s", session, got.status, got.body)
	}
	for _, it := range items {
		if it.PetID == 3 {
			return it.Quantity
		}
	}
	t.Fatalf("list of %s has no pet 3", session)
	return 0
}

// TestSessionPrecedence: a request may name its session three ways; the
// most specific wins (query over header over cookie), and a way that is
// present but wrong is a 400 naming it, never passed over.
func TestSessionPrecedence(t *testing.T) {
	cookie := func(v string) string { return SessionCookie + "=" + v }
	tests := []struct {
		name   string
		query  string // appended to the path
		header http.Header
		status int
		want   string // the session written into; "" for none
		msg    string // a part of the Error message
	}{
		{"none: the default session", "", nil, 200, store.DefaultSession, ""},
		{"cookie", "", http.Header{"Cookie": {cookie("c")}}, 200, "c", ""},
		{"cookie among others", "", http.Header{"Cookie": {"theme=dark; " + cookie("c") + "; x=1"}}, 200, "c", ""},
		{"header", "", http.Header{SessionHeader: {"h"}}, 200, "h", ""},
		{"query", "?mock-session=q", nil, 200, "q", ""},
		{"header over cookie", "", http.Header{SessionHeader: {"h"}, "Cookie": {cookie("c")}}, 200, "h", ""},
		{"query over header and cookie", "?mock-session=q", http.Header{SessionHeader: {"h"}, "Cookie": {cookie("c")}}, 200, "q", ""},
		{"query over cookie", "?mock-session=q", http.Header{"Cookie": {cookie("c")}}, 200, "q", ""},
		{"a bad query is not passed over", "?mock-session=no+spaces", http.Header{SessionHeader: {"h"}}, 400, "", "mock-session query parameter: want one session name"},
		{"two query values", "?mock-session=a&mock-session=b", nil, 400, "", "mock-session query parameter"},
		{"an empty query value", "?mock-session=", nil, 400, "", "mock-session query parameter"},
		{"a bad header is not passed over", "", http.Header{SessionHeader: {"x y"}, "Cookie": {cookie("c")}}, 400, "", "X-Mock-Session header: want"},
		{"a bad cookie", "", http.Header{"Cookie": {cookie("a/b")}}, 400, "", "mock-session cookie: want"},
		{"a key as the cookie", "", http.Header{"Cookie": {cookie(testKey)}}, 400, "", "mock-session cookie: a session name must not hold a key"},
		{"another cookie only", "", http.Header{"Cookie": {"theme=dark"}}, 200, store.DefaultSession, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			q := 100 + i
			got := serve(t, s, req{method: "PATCH", path: "/v1/inventory/3" + tt.query, body: fmt.Sprintf(`{"quantity": %d}`, q), header: tt.header})
			if got.status != tt.status {
				t.Fatalf("PATCH = %d %s; want %d", got.status, got.body, tt.status)
			}
			if tt.status != 200 {
				if got.Code != httpapi.CodeInvalidSession || !strings.Contains(fmt.Sprint(got.Message), tt.msg) {
					t.Errorf("Error = %s %q; want %s with %q", got.Code, got.Message, httpapi.CodeInvalidSession, tt.msg)
				}
				return
			}
			if n := quantityOf(t, s, tt.want); n != q {
				t.Errorf("session %s: quantity %d; want %d, the write", tt.want, n, q)
			}
			for _, other := range []string{store.DefaultSession, "c", "h", "q"} {
				if other != tt.want && quantityOf(t, s, other) == q {
					t.Errorf("session %s got the write meant for %s", other, tt.want)
				}
			}
		})
	}
}

// TestRequireSession: under RequireSession a request of the contract that
// names no session is a 400 that says the three ways; one that names the
// default session, /healthz and the admin API are served.
func TestRequireSession(t *testing.T) {
	s := newServer(t, func(c *Config) { c.RequireSession = true })
	tests := []struct {
		name   string
		r      req
		status int
	}{
		{"no session", req{method: "GET", path: "/v1/inventory"}, 400},
		{"a write without one", req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity": 1}`}, 400},
		{"by cookie", req{method: "GET", path: "/v1/inventory", header: http.Header{"Cookie": {"mock-session=a"}}}, 200},
		{"by header", req{method: "GET", path: "/v1/inventory", header: http.Header{SessionHeader: {"a"}}}, 200},
		{"by query", req{method: "GET", path: "/v1/inventory?mock-session=a"}, 200},
		{"the default, named", req{method: "GET", path: "/v1/inventory", header: http.Header{SessionHeader: {"default"}}}, 200},
		{"no key comes first", req{method: "GET", path: "/v1/inventory", auth: "-"}, 401},
		{"healthz", req{method: "GET", path: "/healthz", auth: "-"}, 200},
		{"the admin API", req{method: "GET", path: "/__admin/sessions"}, 200},
		{"a reset", req{method: "POST", path: "/__admin/reset"}, 204},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := serve(t, s, tt.r)
			if got.status != tt.status {
				t.Fatalf("%s %s = %d %s; want %d", tt.r.method, tt.r.path, got.status, got.body, tt.status)
			}
			if tt.status == 400 {
				for _, way := range []string{"mock-session cookie", "X-Mock-Session header", "mock-session query parameter", "--require-session"} {
					if got.Code != httpapi.CodeMissingSession || !strings.Contains(fmt.Sprint(got.Message), way) {
						t.Errorf("Error = %s %q; want %s naming %q", got.Code, got.Message, httpapi.CodeMissingSession, way)
					}
				}
			}
		})
	}
}

// TestSessionChaos: chaos rules put for one session apply to its requests
// only, win over the global ones, say whom they apply to, show in the
// session's journal, and go with the session.
func TestSessionChaos(t *testing.T) {
	s := newServer(t, func(c *Config) { c.JournalSize = 10 })
	put := func(query, body string) result {
		t.Helper()
		got := serve(t, s, req{method: "PUT", path: "/__admin/chaos" + query, body: body})
		if got.status != 200 {
			t.Fatalf("PUT /__admin/chaos%s = %d %s", query, got.status, got.body)
		}
		return got
	}
	put("?session=a", `{"rules": [{"operation": "updateInventory", "fault": "status", "status": 503}]}`)
	put("", `{"rules": [{"fault": "status", "status": 502}, {"operation": "listInventory", "latency": "1ms"}]}`)
	serve(t, s, req{method: "PUT", path: "/__admin/chaos", body: `{"rules": [{"operation": "updateInventory", "fault": "status", "status": 500}]}`, header: http.Header{SessionHeader: {"b"}}})

	update := func(session string) req {
		return req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity": 9}`, header: http.Header{"Cookie": {SessionCookie + "=" + session}}}
	}
	for _, tt := range []struct {
		session string
		status  int
	}{
		{"a", 503},       // its own rule for the operation
		{"b", 500},       // its own, put with the header
		{"c", 502},       // the global rule
		{"default", 502}, // the global rule
	} {
		if got := serve(t, s, update(tt.session)); got.status != tt.status {
			t.Errorf("PATCH in session %s = %d; want %d", tt.session, got.status, tt.status)
		}
	}
	for _, tt := range []struct{ query, want string }{
		{"", `"sessions":["a","b"]`},
		{"?session=a", `"scope":"session","session":"a"`},
		{"?session=c", `"rules":[{"fault":"status","status":502},{"operation":"listInventory","latency":"1ms"}],"scope":"global","session":"c"`},
	} {
		if got := serve(t, s, req{method: "GET", path: "/__admin/chaos" + tt.query}); !strings.Contains(string(got.body), tt.want) {
			t.Errorf("GET /__admin/chaos%s = %s; want %s in it", tt.query, got.body, tt.want)
		}
	}
	if got := serve(t, s, req{method: "GET", path: "/__admin/requests?session=a"}); !strings.Contains(string(got.body), `fault status 503`) {
		t.Errorf("the journal of session a does not show its fault: %s", got.body)
	}
	// What GET answers can be put back.
	got := serve(t, s, req{method: "GET", path: "/__admin/chaos?session=a"})
	if back := serve(t, s, req{method: "PUT", path: "/__admin/chaos?session=a", body: string(got.body)}); back.status != 200 {
		t.Errorf("PUT back what GET answered = %d %s", back.status, back.body)
	}
	if got := serve(t, s, req{method: "DELETE", path: "/__admin/chaos?session=a"}); got.status != 204 {
		t.Fatalf("DELETE ?session=a = %d", got.status)
	}
	if got := serve(t, s, update("a")); got.status != 502 {
		t.Errorf("after its rules are removed, session a = %d; want the global 502", got.status)
	}
	if got := serve(t, s, req{method: "DELETE", path: "/__admin/sessions/b"}); got.status != 204 {
		t.Fatalf("DELETE /__admin/sessions/b = %d", got.status)
	}
	if got := serve(t, s, update("b")); got.status != 502 {
		t.Errorf("a dropped session b = %d; want the global 502: its rules went with it", got.status)
	}
	if got := serve(t, s, req{method: "PUT", path: "/__admin/chaos?session=no+spaces", body: `{"rules": []}`}); got.status != 400 {
		t.Errorf("a bad session name = %d; want 400", got.status)
	}
}

// TestSessionRateLimit: a session's own rate limit governs its requests
// only; the others follow the global one.
func TestSessionRateLimit(t *testing.T) {
	s := newServer(t, func(c *Config) { c.RateLimit = RateLimit{Rate: "1/m", Burst: 3} })
	if got := serve(t, s, req{method: "PUT", path: "/__admin/rate-limit?session=tight", body: `{"rate": "1/m", "burst": 1}`}); got.status != 200 || !strings.Contains(string(got.body), `"scope":"session","session":"tight"`) {
		t.Fatalf("PUT ?session=tight = %d %s", got.status, got.body)
	}
	list := func(session string) int {
		return serve(t, s, req{method: "GET", path: "/v1/inventory?mock-session=" + session}).status
	}
	for i, want := range []int{200, 429, 429} {
		if got := list("tight"); got != want {
			t.Errorf("tight, request %d = %d; want %d", i+1, got, want)
		}
	}
	for i, want := range []int{200, 200, 200, 429} {
		if got := list("loose"); got != want {
			t.Errorf("loose, request %d = %d; want %d (the global burst of 3)", i+1, got, want)
		}
	}
	if got := serve(t, s, req{method: "GET", path: "/__admin/rate-limit"}); !strings.Contains(string(got.body), `{"rate":"1/m","burst":3,"sessions":["tight"]}`) {
		t.Errorf("GET /__admin/rate-limit = %s", got.body)
	}
	serve(t, s, req{method: "DELETE", path: "/__admin/rate-limit?session=tight"})
	if got := list("tight"); got != 200 {
		t.Errorf("tight, after its limit is lifted = %d; want 200 under the global limit, its buckets full", got)
	}
	if got := serve(t, s, req{method: "PUT", path: "/__admin/rate-limit?session=open", body: `{}`}); got.status != 200 {
		t.Fatalf("PUT no limit for a session = %d", got.status)
	}
	for range 5 {
		if got := list("open"); got != 200 {
			t.Fatalf("a session with no limit of its own = %d; want 200", got)
		}
	}
}

// TestSessionControlsBounded: sessions' own rules and limits are kept for
// at most --max-sessions sessions; the least recently used go first.
func TestSessionControlsBounded(t *testing.T) {
	s := newServer(t, func(c *Config) { c.Sessions.MaxSessions = 3 })
	for i := range 10 {
		q := fmt.Sprintf("?session=s%d", i)
		if got := serve(t, s, req{method: "PUT", path: "/__admin/chaos" + q, body: `{"rules": [{"fault": "status", "status": 503}]}`}); got.status != 200 {
			t.Fatalf("PUT chaos%s = %d", q, got.status)
		}
		if got := serve(t, s, req{method: "PUT", path: "/__admin/rate-limit" + q, body: `{"rate": "10/s"}`}); got.status != 200 {
			t.Fatalf("PUT rate-limit%s = %d", q, got.status)
		}
		// s0 stays in use, so it is never the least recently used.
		serve(t, s, req{method: "GET", path: "/v1/inventory?mock-session=s0"})
	}
	if got := s.chaos.withSessions(); len(got) != 3 || got[0] != "s0" || got[2] != "s9" {
		t.Errorf("sessions with chaos rules: %v; want 3, s0 (in use) and the last two", got)
	}
	if got := s.limiter.withSessions(); len(got) != 3 || got[0] != "s0" || got[2] != "s9" {
		t.Errorf("sessions with a rate limit: %v; want 3, s0 (in use) and the last two", got)
	}
}

// BenchmarkSessionMemory reports the heap a session holds with its own
// chaos rule and rate limit after one write and one journal entry
// (bytes/session), over 1,000 sessions: what --max-sessions bounds.
//
//	go test -run '^$' -bench BenchmarkSessionMemory -benchtime 1x ./mockserver
func BenchmarkSessionMemory(b *testing.B) {
	const n = 1000
	for range b.N {
		s := NewTest(b, Config{Contract: contract(b), Records: testRecords(b), APIKeys: []string{testKey}, AllowedHosts: []string{"mock.test"}, JournalSize: 100})
		do := func(method, path, body string) {
			r := httptest.NewRequest(method, "http://mock.test"+path, strings.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+testKey)
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			if w.Code >= 300 {
				b.Fatalf("%s %s = %d %s", method, path, w.Code, w.Body)
			}
		}
		before := heapInUse()
		for i := range n {
			q := fmt.Sprintf("?session=s%d", i)
			do("PUT", "/__admin/chaos"+q, `{"rules": [{"operation": "updateInventory", "latency": "1ms-2ms"}, {"fault": "status", "status": 503, "probability": 0.01}]}`)
			do("PUT", "/__admin/rate-limit"+q, `{"rate": "100/s"}`)
			do("PATCH", fmt.Sprintf("/v1/inventory/3?mock-session=s%d", i), `{"quantity": 7}`)
		}
		b.ReportMetric(float64(heapInUse()-before)/n, "bytes/session")
		runtime.KeepAlive(s)
	}
}

// heapInUse returns the bytes in use on the heap after a collection.
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
