package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An answer is one request sent over a real connection, and what came
// back.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error // the client's error: a dropped connection, a cut body
	took   time.Duration
}

// exchangeWith sends one request to srv over a new connection. auth ""
// sends the test key, "-" no Authorization header.
func exchangeWith(t *testing.T, client *http.Client, srv *httptest.Server, method, path, auth, body string, header http.Header) answer {
	t.Helper()
	r, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		r.Header[k] = v
	}
	switch auth {
	case "":
		r.Header.Set("Authorization", "Bearer "+testKey)
	case "-":
	default:
		r.Header.Set("Authorization", auth)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	resp, err := client.Do(r)
	if err != nil {
		return answer{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err, took: time.Since(start)}
}

// oneShot is a client that opens a new connection for every request, so
// that a dropped connection affects that request alone.
func oneShot() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 20 * time.Second}
}

// journalAfter waits for the journal to hold n entries (an entry is added
// once its handler has returned, which may be just after the client has
// read the answer) and returns them, newest first.
func journalAfter(t *testing.T, s *Server, query string, n int) []journalEntry {
	t.Helper()
	entries := journalOf(t, s, query)
	for i := 0; i < 200 && len(entries) < n; i++ {
		time.Sleep(10 * time.Millisecond)
		entries = journalOf(t, s, query)
	}
	if len(entries) < n {
		t.Fatalf("journal%s holds %d entries; want %d: %+v", query, len(entries), n, entries)
	}
	return entries
}

// TestControlsNeedTheKeyFirst sends every control without a key: each
// gets the 401 at once, with no delay, no fault and no session made.
func TestControlsNeedTheKeyFirst(t *testing.T) {
	tests := []struct {
		name   string
		rules  string // chaos rules put first; "" for none
		method string
		path   string
		header http.Header
	}{
		{"Prefer: delay", "", "GET", "/v1/inventory", http.Header{"Prefer": {"delay=3000"}}},
		{"Prefer: delay on an update", "", "PATCH", "/v1/inventory/3", http.Header{"Prefer": {"delay=3000, code=200"}}},
		{"a latency rule for every operation", `[{"latency": "3s"}]`, "GET", "/v1/inventory", nil},
		{"a latency rule for the operation", `[{"operation": "updateInventory", "latency": "3s"}]`, "PATCH", "/v1/inventory/3", nil},
		{"a reset fault", `[{"fault": "reset"}]`, "GET", "/v1/inventory", nil},
		{"an empty fault", `[{"fault": "empty"}]`, "PATCH", "/v1/inventory/3", nil},
		{"a status fault", `[{"fault": "status", "status": 503}]`, "GET", "/v1/inventory", nil},
		{"a truncate fault", `[{"operation": "listInventory", "fault": "truncate"}]`, "GET", "/v1/inventory", nil},
		{"a slow fault", `[{"fault": "slow"}]`, "PATCH", "/v1/inventory/3", nil},
		{"an example rule", `[{"operation": "listInventory", "example": "empty"}]`, "GET", "/v1/inventory", nil},
		{"X-Mock-Session", "", "PATCH", "/v1/inventory/3", http.Header{SessionHeader: {"made-without-a-key"}}},
		{"X-Mock-Session with a fault", `[{"fault": "reset"}, {"latency": "3s"}]`, "GET", "/v1/inventory", http.Header{SessionHeader: {"made-without-a-key"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(c *Config) { c.JournalSize = 10 })
			srv := httptest.NewServer(s)
			defer srv.Close()
			if tt.rules != "" {
				if got := putChaos(t, s, `{"rules": `+tt.rules+`}`); got.status != 200 {
					t.Fatalf("PUT chaos: %d %s", got.status, got.body)
				}
			}
			body := ""
			if tt.method == "PATCH" {
				body = `{"quantity": 77}`
			}
			for _, auth := range []string{"-", "Bearer wrong-key"} {
				got := exchangeWith(t, oneShot(), srv, tt.method, tt.path, auth, body, tt.header)
				var e errorBody
				json.Unmarshal(got.body, &e)
				if got.err != nil || got.status != 401 || e.Code != httpapi.CodeUnauthorized {
					t.Errorf("%s: %d %s %v; want 401 %s", auth, got.status, got.body, got.err, httpapi.CodeUnauthorized)
				}
				if got.took > 2*time.Second {
					t.Errorf("%s: answered after %s; want the 401 at once, not after the 3 s asked for", auth, got.took)
				}
			}
			if got := stored(t, s, 3); got != testItems(t)[2] {
				t.Errorf("pet 3 = %+v after updates without a key", got)
			}
			sessions := serve(t, s, req{method: "GET", path: "/__admin/sessions"})
			if strings.Contains(string(sessions.body), "made-without-a-key") {
				t.Errorf("a request without a key made its session: %s", sessions.body)
			}
			for _, e := range journalAfter(t, s, "", 2) {
				if e.Status != 401 || e.Fault != "" || e.Forced != "" || e.Session != "default" {
					t.Errorf("journal entry %d %q fault %q forced %q; want a 401 in the default session, with neither", e.Status, e.Session, e.Fault, e.Forced)
				}
			}
		})
	}
}

// TestFaultsDamageEveryAnswer checks that truncate and slow damage the
// answer sent after the latency whatever it is: a validation 400 and a
// forced answer too, not only a success; and that the journal says so.
func TestFaultsDamageEveryAnswer(t *testing.T) {
	tests := []struct {
		name   string
		fault  string
		method string
		path   string
		body   string
		prefer string
		status int
		code   string // the Error code of the answer; "" for a success
	}{
		{"truncate, a bad body", "truncate", "PATCH", "/v1/inventory/3", `{"quantity": "x"}`, "", 400, httpapi.CodeInvalidBody},
		{"truncate, an unknown pet", "truncate", "PATCH", "/v1/inventory/4242", `{"quantity": 1}`, "", 404, httpapi.CodeNotFound},
		{"truncate, a forced 404", "truncate", "PATCH", "/v1/inventory/3", `{"quantity": 1}`, "code=404", 404, httpapi.CodeNotFound},
		{"truncate, the list", "truncate", "GET", "/v1/inventory", "", "", 200, ""},
		{"slow, the list", "slow", "GET", "/v1/inventory", "", "", 200, ""},
		{"truncate, a forced example", "truncate", "GET", "/v1/inventory", "", "example=one-of-each", 200, ""},
		{"truncate, a bad Prefer example", "truncate", "GET", "/v1/inventory", "", "example=nope", 400, httpapi.CodeInvalidPreference},
		{"slow, a bad body", "slow", "PATCH", "/v1/inventory/3", `{"quantity": "x"}`, "", 400, httpapi.CodeInvalidBody},
		{"slow, a forced 404", "slow", "PATCH", "/v1/inventory/3", `{"quantity": 1}`, "code=404", 404, httpapi.CodeNotFound},
		{"slow, a forced example", "slow", "GET", "/v1/inventory", "", "example=one-of-each", 200, ""},
		{"slow, a short forced example", "slow", "GET", "/v1/inventory", "", "example=empty", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, func(c *Config) { c.JournalSize = 10 })
			srv := httptest.NewServer(s)
			defer srv.Close()
			if got := putChaos(t, s, `{"rules": [{"fault": "`+tt.fault+`"}]}`); got.status != 200 {
				t.Fatalf("PUT chaos: %d %s", got.status, got.body)
			}
			var h http.Header
			if tt.prefer != "" {
				h = http.Header{"Prefer": {tt.prefer}}
			}
			got := exchangeWith(t, oneShot(), srv, tt.method, tt.path, "", tt.body, h)
			if got.status != tt.status {
				t.Fatalf("status %d %s %v; want %d", got.status, got.body, got.err, tt.status)
			}
			n, _ := strconv.Atoi(got.header.Get("Content-Length"))
			switch tt.fault {
			case FaultTruncate:
				if !errors.Is(got.err, io.ErrUnexpectedEOF) || len(got.body) != n/2 {
					t.Errorf("got %d of %d bytes, error %v; want half the body, then the connection closed", len(got.body), n, got.err)
				}
			case FaultSlow:
				least := slowEvery * time.Duration(min(n, slowPieces)-1)
				if got.err != nil || len(got.body) != n || got.took < least {
					t.Errorf("got %d of %d bytes after %s, error %v; want the whole body over at least %s", len(got.body), n, got.took, got.err, least)
				}
			}
			e := journalAfter(t, s, "", 1)[0]
			if e.Status != tt.status || e.Fault != "fault "+tt.fault || e.Code != tt.code {
				t.Errorf("journal: %d fault %q code %q; want %d fault %q code %q", e.Status, e.Fault, e.Code, tt.status, "fault "+tt.fault, tt.code)
			}
			// The journal keeps what was sent: a cut body breaks the contract.
			if e.Response.Bytes != len(got.body) || e.Response.Body != string(got.body) {
				t.Errorf("journal keeps %d bytes %q; want the %d bytes sent %q", e.Response.Bytes, e.Response.Body, len(got.body), got.body)
			}
			if cut := tt.fault == FaultTruncate; e.Verdict == nil || e.Verdict.Valid == cut {
				t.Errorf("journal verdict %+v; want valid %v", e.Verdict, !cut)
			}
		})
	}
}

// pieceCounter counts the writes of a body, as the client gets them.
type pieceCounter struct {
	*httptest.ResponseRecorder
	pieces int
}

func (p *pieceCounter) Write(b []byte) (int, error) {
	p.pieces++
	return p.ResponseRecorder.Write(b)
}

// TestSlowPieces checks what mockserver/README.md and the admin document say of a
// slow body: 20 pieces, one every 100 ms, so 1.9 s for a body of 20 bytes
// or more (an update's answer is about 46), a byte every 100 ms for a
// shorter one.
func TestSlowPieces(t *testing.T) {
	for _, size := range []int{3, 46, 2926} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			t.Parallel()
			body := strings.Repeat("x", size)
			w := &pieceCounter{ResponseRecorder: httptest.NewRecorder()}
			b := &bufferedWriter{ResponseWriter: w}
			b.Write([]byte(body))
			start := time.Now()
			b.send(httptest.NewRequest("GET", "/", nil), FaultSlow)
			took := time.Since(start)
			want := min(size, 20)
			if w.pieces != want || w.Body.String() != body {
				t.Errorf("%d bytes went in %d pieces (body whole: %v); want %d", size, w.pieces, w.Body.String() == body, want)
			}
			if least := time.Duration(want-1) * 100 * time.Millisecond; took < least {
				t.Errorf("%d bytes took %s; want at least %s", size, took, least)
			}
		})
	}
}

// TestChaosSeedIsKept checks that rules put without a seed keep the seed
// in force (the --chaos-seed), so a replay stays one, and that a seed put
// is kept in turn.
func TestChaosSeedIsKept(t *testing.T) {
	s := newServer(t, func(c *Config) { c.Chaos = Chaos{Seed: 42} })
	seed := func() int64 {
		var c Chaos
		json.Unmarshal(serve(t, s, req{method: "GET", path: "/__admin/chaos"}).body, &c)
		return c.Seed
	}
	const rules = `{"rules": [{"fault": "status", "status": 500, "probability": 0.5}]}`
	pattern := func(body string) string {
		if got := putChaos(t, s, body); got.status != 200 {
			t.Fatalf("PUT %s: %d %s", body, got.status, got.body)
		}
		var b strings.Builder
		for range 40 {
			b.WriteString(strconv.Itoa(serve(t, s, req{method: "GET", path: "/v1/inventory"}).status / 100))
		}
		return b.String()
	}
	if got := seed(); got != 42 {
		t.Fatalf("seed at start = %d; want 42", got)
	}
	first := pattern(rules)
	if got := seed(); got != 42 {
		t.Errorf("after a PUT without a seed, seed = %d; want the 42 in force", got)
	}
	if again := pattern(rules); again != first {
		t.Errorf("the same rules put twice without a seed gave %s then %s; want the same", first, again)
	}
	if explicit := pattern(`{"seed": 42, ` + rules[1:]); explicit != first {
		t.Errorf("seed 42 put explicitly gave %s; without a seed %s; want the same", explicit, first)
	}
	if !strings.Contains(first, "2") || !strings.Contains(first, "5") {
		t.Errorf("pattern %s; want a mix of 2xx and 5xx", first)
	}
	other := pattern(`{"seed": 7, ` + rules[1:])
	if serve(t, s, req{method: "DELETE", path: "/__admin/chaos"}); seed() != 7 {
		t.Errorf("after DELETE, seed = %d; want the 7 put last", seed())
	}
	if again := pattern(rules); again != other {
		t.Errorf("after seed 7, rules without a seed gave %s; want seed 7's %s", again, other)
	}
}

// TestDelayLongerThanReadTimeout sends a 20 KB body with a delay longer
// than the server's read timeout: the body is read before the delay, so
// the request is served, not refused as a body that "ended early".
func TestDelayLongerThanReadTimeout(t *testing.T) {
	s := newServer(t, func(c *Config) { c.MaxDelay = 40 * time.Second })
	srv := httptest.NewUnstartedServer(s)
	srv.Config.ReadTimeout = 300 * time.Millisecond // inventory-mock's is 30 s, less than --max-delay 40s
	srv.Start()
	defer srv.Close()
	body := `{"quantity": 4242` + strings.Repeat(" ", 20<<10) + `}`
	for _, tt := range []struct{ name, prefer, rules string }{
		{"Prefer: delay", "delay=800", ""},
		{"a latency rule", "", `{"rules": [{"latency": "800ms"}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rules != "" {
				putChaos(t, s, tt.rules)
				defer serve(t, s, req{method: "DELETE", path: "/__admin/chaos"})
			}
			h := http.Header{}
			if tt.prefer != "" {
				h.Set("Prefer", tt.prefer)
			}
			got := exchangeWith(t, oneShot(), srv, "PATCH", "/v1/inventory/3", "", body, h)
			if got.err != nil || got.status != 200 || !strings.Contains(string(got.body), `"quantity":4242`) {
				t.Errorf("PATCH of %d bytes: %d %s %v; want 200 with the record", len(body), got.status, got.body, got.err)
			}
			if got.took < 800*time.Millisecond {
				t.Errorf("answered after %s; want the 800 ms asked for", got.took)
			}
		})
	}
}

// TestResetOverTLS checks that reset is a TCP RST over TLS too, not a
// close that looks like empty; and what HTTP/2 does with both: it resets
// the stream.
func TestResetOverTLS(t *testing.T) {
	tests := []struct {
		fault, proto, errPart string
	}{
		{"reset", "HTTP/1.1", "connection reset by peer"},
		{"empty", "HTTP/1.1", "EOF"},
		{"reset", "HTTP/2.0", "INTERNAL_ERROR"},
		{"empty", "HTTP/2.0", "INTERNAL_ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.fault+" "+tt.proto, func(t *testing.T) {
			s := newServer(t)
			srv := httptest.NewUnstartedServer(s)
			srv.EnableHTTP2 = tt.proto == "HTTP/2.0"
			srv.StartTLS()
			defer srv.Close()
			if got := putChaos(t, s, `{"rules": [{"operation": "updateInventory", "fault": "`+tt.fault+`"}]}`); got.status != 200 {
				t.Fatalf("PUT chaos: %d %s", got.status, got.body)
			}
			client := srv.Client()
			if tr := client.Transport.(*http.Transport); !srv.EnableHTTP2 {
				tr.DisableKeepAlives = true
			}
			// The list is served, over the protocol wanted.
			if got := exchangeWith(t, client, srv, "GET", "/v1/inventory", "", "", nil); got.err != nil || got.status != 200 {
				t.Fatalf("list: %d %v", got.status, got.err)
			}
			got := exchangeWith(t, client, srv, "PATCH", "/v1/inventory/3", "", `{"quantity": 1}`, nil)
			if got.err == nil || !strings.Contains(got.err.Error(), tt.errPart) {
				t.Errorf("client error = %v; want one with %q", got.err, tt.errPart)
			}
			if tt.errPart == "EOF" && strings.Contains(got.err.Error(), "reset") {
				t.Errorf("client error = %v; an empty fault is a close, not a reset", got.err)
			}
			r, _ := http.NewRequest("GET", srv.URL+"/v1/inventory", nil)
			r.Header.Set("Authorization", "Bearer "+testKey)
			if resp, err := client.Do(r); err == nil {
				if resp.Proto != tt.proto {
					t.Errorf("served over %s; want %s", resp.Proto, tt.proto)
				}
				resp.Body.Close()
			}
		})
	}
}
