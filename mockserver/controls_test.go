package mockserver

import (
	"slices"

	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/spec"
)

// withHeader returns a req with one more header.
func withHeader(r req, name, value string) req {
	h := http.Header{}
	for k, v := range r.header {
		h[k] = v
	}
	h.Add(name, value)
	r.header = h
	return r
}

func TestPrefer(t *testing.T) {
	update := req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity": 42}`}
	list := req{method: "GET", path: "/v1/inventory"}
	tests := []struct {
		name    string
		r       req
		prefer  string
		status  int
		code    string // the Error code; "" for a success
		message string // a part of the Error message, or of the body
		written bool   // the update was applied
	}{
		{"forced 404", update, "code=404", 404, httpapi.CodeNotFound, "forced by the request's Prefer: code=404; the contract says: The requested resource could not be found.", false},
		{"forced 400", update, "code=400", 400, httpapi.CodeInvalidBody, "forced", false},
		{"forced 401", update, "code=401", 401, httpapi.CodeUnauthorized, "forced", false},
		// code=200 on a write is a dry run (a forced answer writes
		// nothing): the record as the update would leave it, not stored;
		// what the update refuses is refused as without Prefer.
		{"code=200 on the update: a dry run", update, "code=200", 200, "", `"petId":3,"quantity":42`, false},
		{"code=200 on the update of an unknown pet", req{method: "PATCH", path: "/v1/inventory/999999", body: `{"quantity": 42}`}, "code=200", 404, httpapi.CodeNotFound, "no record", false},
		{"code=200 on an update with a bad body", req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity": "many"}`}, "code=200", 400, httpapi.CodeInvalidBody, "quantity", false},
		{"code=200 on the list: the list", list, "code=200", 200, "", `"petId":64`, false},
		{"named example", list, "example=empty", 200, "", "[]", false},
		{"named example with its code", list, "code=200, example=one-of-each", 200, "", `"petId":3,"quantity":0,"status":"sold"`, false},
		{"an answer without a body", req{method: "GET", path: "/v1/store/orders"}, "code=200", 200, "", "", false},
		{"delay", list, "delay=30", 200, "", `"petId":64`, false},
		{"preferences of RFC 7240 are ignored", update, "return=minimal, handling=lenient", 200, "", `"quantity":42`, true},
		{"parameters are ignored", list, "code=401; charset=x", 401, httpapi.CodeUnauthorized, "forced", false},
		// Mistakes: a clear 400, nothing written.
		// The contract's default response documents every other error.
		{"forced 500, the default response", list, "code=500", 500, httpapi.CodeInternal, "forced by the request's Prefer: code=500; the contract says: Any other error, with an Error body as every error has (the seed, section 7).", false},
		{"forced 503 on the update", update, "code=503", 503, httpapi.CodeUnavailable, "forced", false},
		{"unknown example", list, "example=nope", 400, httpapi.CodeInvalidPreference, "listInventory has no example of that name; it has empty, one-of-each", false},
		{"unknown preference", update, "dynamic=true", 400, httpapi.CodeInvalidPreference, `Prefer: "dynamic" is not a preference the mock knows`, false},
		{"code not a number", update, "code=abc", 400, httpapi.CodeInvalidPreference, "want an HTTP status", false},
		{"delay past the cap", update, "delay=600000", 400, httpapi.CodeInvalidPreference, "longer than the mock's cap", false},
		{"negative delay", update, "delay=-5", 400, httpapi.CodeInvalidPreference, "whole number of milliseconds", false},
		{"twice", update, "code=404, code=400", 400, httpapi.CodeInvalidPreference, "code is given twice", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			before := stored(t, s, 3)
			start := time.Now()
			got := serve(t, s, withHeader(tt.r, "Prefer", tt.prefer))
			if got.status != tt.status {
				t.Fatalf("status = %d; want %d: %s", got.status, tt.status, got.body)
			}
			if tt.code != "" {
				if got.Code != tt.code || !strings.Contains(fmt.Sprint(got.Message), tt.message) {
					t.Errorf("error = %s; want code %s and a message with %q", got.body, tt.code, tt.message)
				}
			} else if !strings.Contains(string(got.body), tt.message) {
				t.Errorf("body = %s; want it to hold %q", got.body, tt.message)
			}
			if tt.name == "delay" && time.Since(start) < 30*time.Millisecond {
				t.Errorf("answered after %s; want at least the 30 ms asked for", time.Since(start))
			}
			if after := stored(t, s, 3); (after != before) != tt.written {
				t.Errorf("pet 3 was %+v, is %+v; written = %v, want %v", before, after, after != before, tt.written)
			}
		})
	}
	// The key comes first: Prefer never bypasses it.
	s := newServer(t)
	if got := serve(t, s, withHeader(req{method: "PATCH", path: "/v1/inventory/3", auth: "-", body: `{"quantity":1}`}, "Prefer", "code=200")); got.status != 401 {
		t.Errorf("Prefer without a key: status %d; want 401", got.status)
	}
	if got := serve(t, s, withHeader(req{method: "GET", path: "/v1/inventory", auth: "Bearer wrong"}, "Prefer", "example=empty")); got.status != 401 {
		t.Errorf("Prefer with a wrong key: status %d; want 401", got.status)
	}
}

func TestChaosFlags(t *testing.T) {
	p := func(f float64) *float64 { return &f }
	tests := []struct {
		kind, value string
		want        ChaosRule
		err         string
	}{
		{"latency", "200ms", ChaosRule{Latency: "200ms"}, ""},
		{"latency", "updateInventory=50ms-1s", ChaosRule{Operation: "updateInventory", Latency: "50ms-1s"}, ""},
		{"latency", "updateInventory=", ChaosRule{}, "want [OPERATION=]DELAY"},
		{"fault", "reset@0.1", ChaosRule{Fault: "reset", Probability: p(0.1)}, ""},
		{"fault", "listInventory=status:503@0.5", ChaosRule{Operation: "listInventory", Fault: "status", Status: 503, Probability: p(0.5)}, ""},
		{"fault", "empty", ChaosRule{Fault: "empty"}, ""},
		{"fault", "status:abc", ChaosRule{}, `status "abc" is not a number`},
		{"fault", "reset@lots", ChaosRule{}, `probability "lots" is not a number`},
	}
	for _, tt := range tests {
		parse := ParseLatencyFlag
		if tt.kind == "fault" {
			parse = ParseFaultFlag
		}
		got, err := parse(tt.value)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("--%s %s: error %v; want %q", tt.kind, tt.value, err, tt.err)
			}
			continue
		}
		if err != nil || show(got) != show(tt.want) {
			t.Errorf("--%s %s = %s, %v; want %s", tt.kind, tt.value, show(got), err, show(tt.want))
		}
	}
}

// show renders a rule with its probability's value rather than its address.
func show(r ChaosRule) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// putChaos sets the chaos rules through the admin API.
func putChaos(t *testing.T, s *Server, body string) result {
	t.Helper()
	return serve(t, s, req{method: "PUT", path: "/__admin/chaos", body: body})
}

func TestChaosAdmin(t *testing.T) {
	s := newServer(t)
	good := `{"seed": 7, "rules": [{"operation": "updateInventory", "fault": "status", "status": 503, "probability": 0.5}, {"latency": "1ms-2ms"}]}`
	if got := putChaos(t, s, good); got.status != 200 || !strings.Contains(string(got.body), `"seed":7`) {
		t.Fatalf("PUT %s: %d %s", good, got.status, got.body)
	}
	bad := []struct{ body, message string }{
		{`{"rules": [{"fault": "reset", "probability": 1.5}]}`, "probability"},
		{`{"rules": [{"fault": "meltdown"}]}`, "fault"},
		{`{"rules": [{"fault": "status"}]}`, "a status fault needs a status from 400 to 599"},
		{`{"rules": [{"fault": "reset", "status": 503}]}`, "only a status fault takes a status"},
		{`{"rules": [{"operation": "deleteEverything", "fault": "reset"}]}`, `no operation "deleteEverything" in the contract`},
		{`{"rules": [{"latency": "10m"}]}`, "longer than the mock's cap"},
		{`{"rules": [{"latency": "soon"}]}`, "want a duration such as 200ms"},
		{`{"rules": [{"latency": "2s-1s"}]}`, "want 0 <= low <= high"},
		{`{"rules": [{}]}`, "give a latency, a fault, or both"},
		{`{"rules": [{"latency": "1ms"}, {"latency": "2ms"}]}`, "a second latency"},
		{`{"rules": [], "extra": 1}`, "extra"},
		{`{"rules": `, "malformed JSON"},
	}
	for _, b := range bad {
		got := putChaos(t, s, b.body)
		if got.status != 400 || !strings.Contains(fmt.Sprint(got.Message), b.message) {
			t.Errorf("PUT %s: %d %s; want 400 with %q", b.body, got.status, got.body, b.message)
		}
	}
	if got := serve(t, s, req{method: "GET", path: "/__admin/chaos"}); !strings.Contains(string(got.body), `"status":503`) || !strings.Contains(string(got.body), `"seed":7`) {
		t.Errorf("after refused changes, GET /__admin/chaos = %s; want the rules set first", got.body)
	}
	if got := serve(t, s, req{method: "DELETE", path: "/__admin/chaos"}); got.status != 204 {
		t.Errorf("DELETE: %d", got.status)
	}
	if got := serve(t, s, req{method: "GET", path: "/__admin/chaos"}); !strings.Contains(string(got.body), `"rules":[]`) {
		t.Errorf("after DELETE: %s", got.body)
	}
}

// faultClient sends one request through a real connection, so that
// connection faults reach the client as they would a browser.
func faultClient(t *testing.T, srv *httptest.Server, method, path, body string) (*http.Response, []byte, error) {
	t.Helper()
	r, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+testKey)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := client.Do(r)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func TestFaults(t *testing.T) {
	tests := []struct {
		rule    string
		written bool   // the update is applied
		status  int    // the answer's status; 0: no answer
		errPart string // a part of the client's error; "" for none
	}{
		{`{"fault": "status", "status": 503}`, false, 503, ""},
		{`{"fault": "reset"}`, false, 0, "connection reset"},
		{`{"fault": "empty"}`, false, 0, "EOF"},
		{`{"fault": "truncate"}`, true, 200, "unexpected EOF"},
		{`{"fault": "slow"}`, true, 200, ""},
		{`{"latency": "20ms"}`, true, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			s := newServer(t, func(c *Config) { c.JournalSize = 10 })
			srv := httptest.NewServer(s)
			defer srv.Close()
			rule := strings.Replace(tt.rule, "{", `{"operation": "updateInventory", `, 1)
			if got := putChaos(t, s, `{"rules": [`+rule+`]}`); got.status != 200 {
				t.Fatalf("PUT chaos: %d %s", got.status, got.body)
			}
			before := stored(t, s, 3)
			start := time.Now()
			resp, body, err := faultClient(t, srv, "PATCH", "/v1/inventory/3", `{"quantity": 123}`)
			switch {
			case tt.errPart != "" && (err == nil || !strings.Contains(err.Error(), tt.errPart)):
				t.Errorf("client error = %v; want one with %q", err, tt.errPart)
			case tt.errPart == "" && err != nil:
				t.Errorf("client error = %v", err)
			}
			if tt.status != 0 && (resp == nil || resp.StatusCode != tt.status) {
				t.Errorf("answer = %v; want status %d", resp, tt.status)
			}
			if tt.status == 503 && !strings.Contains(string(body), `"code":"unavailable"`) {
				t.Errorf("status fault body = %s; want an Error", body)
			}
			if tt.rule == `{"fault": "slow"}` && (string(body) != `{"petId":3,"quantity":123,"status":"available"}`+"\n" || time.Since(start) < 1900*time.Millisecond) {
				t.Errorf("slow body = %q after %s; want the whole record, in 20 pieces over 1.9 s as mockserver/README.md says", body, time.Since(start))
			}
			if after := stored(t, s, 3); (after.Quantity == 123) != tt.written || (!tt.written && after != before) {
				t.Errorf("pet 3 after the fault = %+v; written want %v", after, tt.written)
			}
			// The list is not touched by an update's rule.
			if resp, _, err := faultClient(t, srv, "GET", "/v1/inventory", ""); err != nil || resp.StatusCode != 200 {
				t.Errorf("list under an update rule: %v %v", resp, err)
			}
			// The journal says what was done on purpose. An entry is added
			// once its handler has returned, which may be just after the
			// client has read the answer.
			entries := journalOf(t, s, "")
			for i := 0; i < 100 && len(entries) < 2; i++ {
				time.Sleep(10 * time.Millisecond)
				entries = journalOf(t, s, "")
			}
			if len(entries) < 2 || !strings.Contains(entries[1].Fault, strings.Trim(strings.Split(tt.rule, `"`)[3], " ")) {
				t.Errorf("journal = %+v; want the update's fault recorded", entries)
			}
		})
	}
}

func TestChaosReplays(t *testing.T) {
	pattern := func() string {
		s := newServer(t)
		if got := putChaos(t, s, `{"seed": 99, "rules": [{"fault": "status", "status": 500, "probability": 0.5}]}`); got.status != 200 {
			t.Fatalf("PUT chaos: %s", got.body)
		}
		var b strings.Builder
		for range 40 {
			b.WriteString(strconv.Itoa(serve(t, s, req{method: "GET", path: "/v1/inventory"}).status / 100))
		}
		return b.String()
	}
	first, second := pattern(), pattern()
	if first != second || !strings.Contains(first, "2") || !strings.Contains(first, "5") {
		t.Errorf("the same seed gave %s then %s; want the same mix of 2xx and 5xx", first, second)
	}
}

func TestSessions(t *testing.T) {
	s := newServer(t)
	write := func(session string, q int) result {
		r := req{method: "PATCH", path: "/v1/inventory/3", body: fmt.Sprintf(`{"quantity": %d}`, q)}
		if session != "" {
			r = withHeader(r, SessionHeader, session)
		}
		return serve(t, s, r)
	}
	read := func(session string) item {
		r := req{method: "GET", path: "/v1/inventory"}
		if session != "" {
			r = withHeader(r, SessionHeader, session)
		}
		var items []item
		json.Unmarshal(serve(t, s, r).body, &items)
		return items[2]
	}
	write("checkout-e2e-1", 11)
	write("checkout-e2e-2", 22)
	orig := testItems(t)[2].Quantity
	for session, want := range map[string]int64{"checkout-e2e-1": 11, "checkout-e2e-2": 22, "": orig, "never-written": orig} {
		if got := read(session); got.Quantity != want {
			t.Errorf("session %q: pet 3 = %d; want %d", session, got.Quantity, want)
		}
	}
	// Each bad name is refused for its own fault, nothing written; the
	// longest good name is taken.
	for _, bad := range []string{"", "has space", " padded", "semi;colon", strings.Repeat("x", 65), "café", "nul\x00byte", "a/b", testKey, "x-" + testKey} {
		r := req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity": 1}`, header: http.Header{SessionHeader: {bad}}}
		if got := serve(t, s, r); got.status != 400 || got.Code != httpapi.CodeInvalidSession {
			t.Errorf("session %q: %d %s; want 400 %s", bad, got.status, got.body, httpapi.CodeInvalidSession)
		}
	}
	if got := serve(t, s, withHeader(withHeader(req{method: "GET", path: "/v1/inventory"}, SessionHeader, "a"), SessionHeader, "b")); got.status != 400 || got.Code != httpapi.CodeInvalidSession {
		t.Errorf("two session headers: %d %s; want 400 %s", got.status, got.body, httpapi.CodeInvalidSession)
	}
	longest := strings.Repeat("x", 64)
	if got := write(longest, 64); got.status != 200 || read(longest).Quantity != 64 {
		t.Errorf("session of 64 characters: %d %s; want it written", got.status, got.body)
	}
	if listed := serve(t, s, req{method: "GET", path: "/__admin/sessions"}); strings.Count(string(listed.body), `"name"`) != 5 {
		t.Errorf("sessions = %s; want default, checkout-e2e-1, checkout-e2e-2, never-written and the 64-character one, no other", listed.body)
	}
	if got := stored(t, s, 3); got.Quantity != orig {
		t.Errorf("pet 3 of the default session = %d after refused sessions; want %d", got.Quantity, orig)
	}
	// Reset one session: the other keeps its write.
	if got := serve(t, s, req{method: "POST", path: "/__admin/reset?session=checkout-e2e-1"}); got.status != 204 {
		t.Fatalf("reset: %d %s", got.status, got.body)
	}
	if read("checkout-e2e-1").Quantity != orig || read("checkout-e2e-2").Quantity != 22 {
		t.Error("the reset of one session did not restore it alone")
	}
	got := serve(t, s, req{method: "GET", path: "/__admin/sessions"})
	for _, want := range []string{`"name":"default"`, `"name":"checkout-e2e-2"`, `"writes":1`} {
		if !strings.Contains(string(got.body), want) {
			t.Errorf("sessions = %s; want %s in it", got.body, want)
		}
	}
	if got := serve(t, s, req{method: "DELETE", path: "/__admin/sessions/checkout-e2e-2"}); got.status != 204 {
		t.Fatalf("drop: %d %s", got.status, got.body)
	}
	if read("checkout-e2e-2").Quantity != orig {
		t.Error("a dropped session kept its write")
	}
}

// TestSessionsConcurrently has 50 sessions, like 50 CI jobs, write and
// read the same pets at once over real connections: no session sees
// another's writes, and within a session no update is lost.
func TestSessionsConcurrently(t *testing.T) {
	s := newServer(t)
	srv := httptest.NewServer(s)
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	do := func(session, method, path, body string) (int, []byte, error) {
		r, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+testKey)
		r.Header.Set(SessionHeader, session)
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(r)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	const sessions, rounds = 50, 10
	var wg sync.WaitGroup
	var failures atomic.Int32
	errs := make(chan error, 20)
	report := func(err error) { // keeps the first few; never blocks
		if failures.Add(1) <= 20 {
			errs <- err
		}
	}
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := fmt.Sprintf("ci-job-%d", i)
			for n := range rounds {
				q := i*1000 + n
				// Every session writes pets 1 to 3, the same pets as the others.
				for id := 1; id <= 3; id++ {
					status, body, err := do(session, "PATCH", fmt.Sprintf("/v1/inventory/%d", id), fmt.Sprintf(`{"quantity": %d}`, q))
					if err != nil || status != 200 || decodeItem(t, body).Quantity != int64(q) {
						report(fmt.Errorf("%s: PATCH %d with %d: %d %s %v", session, id, q, status, body, err))
					}
				}
				status, body, err := do(session, "GET", "/v1/inventory", "")
				var items []item
				if err != nil || status != 200 || json.Unmarshal(body, &items) != nil {
					report(fmt.Errorf("%s: list: %d %v", session, status, err))
					continue
				}
				for _, it := range items[:3] {
					if it.Quantity != int64(q) {
						report(fmt.Errorf("%s: after writing %d, pet %d shows %d (another session's write, or a lost one)", session, q, it.PetID, it.Quantity))
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := failures.Load(); n > 20 {
		t.Errorf("... and %d more failures", n-20)
	}
	if got := stored(t, s, 1); got != testItems(t)[0] {
		t.Errorf("the default session changed: %+v", got)
	}
}

// journalOf reads the journal through the admin API.
func journalOf(t *testing.T, s *Server, query string) []journalEntry {
	t.Helper()
	got := serve(t, s, req{method: "GET", path: "/__admin/requests" + query})
	if got.status != 200 {
		t.Fatalf("GET /__admin/requests%s: %d %s", query, got.status, got.body)
	}
	var entries []journalEntry
	if err := json.Unmarshal(got.body, &entries); err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestJournal(t *testing.T) {
	s := newServer(t, func(c *Config) { c.JournalSize = 3; c.JournalBodyLimit = 64 })
	serve(t, s, withHeader(req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity": 5}`}, SessionHeader, "a"))
	serve(t, s, withHeader(req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity": "x"}`}, SessionHeader, "a"))
	serve(t, s, req{method: "GET", path: "/v1/inventory?api_key=" + testKey, auth: "-"})
	serve(t, s, req{method: "GET", path: "/v1/inventory"})
	serve(t, s, withHeader(req{method: "GET", path: "/v1/inventory"}, "Prefer", "example=empty"))

	all := journalOf(t, s, "")
	raw, _ := json.Marshal(all)
	if bytes.Contains(raw, []byte(testKey)) {
		t.Errorf("the journal shows the API key: %s", raw)
	}
	if bytes.Contains(raw, []byte("Bearer")) && !bytes.Contains(raw, []byte("$INVENTORY_API_KEY")) {
		t.Errorf("the journal shows an Authorization header: %s", raw)
	}
	if len(all) != 5 {
		t.Fatalf("journal has %d entries; want 5 (3 kept per session, 2 sessions)", len(all))
	}
	newest := all[0]
	if newest.Forced != "example=empty" || newest.Response.Body != "[]\n" || newest.Verdict == nil || !newest.Verdict.Valid || newest.Operation != "listInventory" {
		t.Errorf("newest entry = %+v; want the forced empty list, judged valid", newest)
	}
	unauth := all[2]
	if unauth.Status != 401 || unauth.Code != httpapi.CodeUnauthorized || !strings.Contains(unauth.Path, "api_key=$INVENTORY_API_KEY") {
		t.Errorf("unauthenticated entry = %+v; want 401 with the key in its query redacted", unauth)
	}
	list := all[1]
	if !list.Response.Truncated || list.Response.Bytes <= 64 || len(list.Response.Body) != 64 || list.Verdict.Note == "" {
		t.Errorf("list entry: response %+v, verdict %+v; want the body cut to 64 bytes and not judged", list.Response, list.Verdict)
	}
	a := journalOf(t, s, "?session=a")
	if len(a) != 2 || a[0].Status != 400 || a[0].Code != httpapi.CodeInvalidBody || a[1].Status != 200 {
		t.Fatalf("session a = %+v; want the 400 then the 200", a)
	}
	if want := `curl -sS -i -X PATCH 'http://mock.test/v1/inventory/3' -H "Authorization: Bearer $INVENTORY_API_KEY" -H 'Content-Type: application/json' -H 'X-Mock-Session: a' --data-binary '{"quantity": 5}'`; a[1].Curl != want {
		t.Errorf("curl = %s\nwant   %s", a[1].Curl, want)
	}
	for query, n := range map[string]int{"?status=401": 1, "?operation=updateInventory": 2, "?limit=2": 2, "?since=" + a[0].ID: 3, "?session=nobody": 0} {
		if got := journalOf(t, s, query); len(got) != n {
			t.Errorf("%s: %d entries; want %d", query, len(got), n)
		}
	}
	for _, bad := range []string{"?status=99", "?limit=0", "?session=bad%20name"} {
		if got := serve(t, s, req{method: "GET", path: "/__admin/requests" + bad}); got.status != 400 {
			t.Errorf("%s: %d; want 400", bad, got.status)
		}
	}
	// Past the size, the oldest entries of a session go.
	for range 4 {
		serve(t, s, req{method: "GET", path: "/v1/inventory"})
	}
	if got := journalOf(t, s, "?session=default"); len(got) != 3 {
		t.Errorf("default session: %d entries; want 3", len(got))
	}
	if got := serve(t, s, req{method: "DELETE", path: "/__admin/requests?session=a"}); got.status != 204 {
		t.Fatal(got.status)
	}
	if len(journalOf(t, s, "?session=a")) != 0 || len(journalOf(t, s, "")) != 3 {
		t.Error("DELETE of one session's journal did not clear it alone")
	}
}

func TestAdminSurface(t *testing.T) {
	s := newServer(t, func(c *Config) { c.AdminKey = "admin-secret" })
	endpoints := []req{
		{method: "POST", path: "/__admin/reset"},
		{method: "GET", path: "/__admin/sessions"},
		{method: "DELETE", path: "/__admin/sessions/x"},
		{method: "GET", path: "/__admin/requests"},
		{method: "DELETE", path: "/__admin/requests"},
		{method: "GET", path: "/__admin/chaos"},
		{method: "PUT", path: "/__admin/chaos", body: `{"rules":[]}`},
		{method: "DELETE", path: "/__admin/chaos"},
		{method: "GET", path: "/__admin/nothing-here"},
	}
	for _, e := range endpoints {
		e.auth = "-"
		if got := serve(t, s, e); got.status != 401 || got.Code != httpapi.CodeUnauthorized {
			t.Errorf("%s %s without a key: %d %s; want 401", e.method, e.path, got.status, got.body)
		}
		e.auth = ""
		if got := serve(t, s, e); got.status != 401 || got.Code != httpapi.CodeAdminKeyRequired || !strings.Contains(fmt.Sprint(got.Message), "needs the admin key") {
			t.Errorf("%s %s with an API key: %d %s; want 401 %s", e.method, e.path, got.status, got.body, httpapi.CodeAdminKeyRequired)
		}
		e.auth = "Bearer admin-secret"
		want := 200
		switch {
		case e.method == "POST" || e.method == "DELETE":
			want = 204
		case strings.HasSuffix(e.path, "nothing-here"):
			want = 404
		}
		if got := serve(t, s, e); got.status != want {
			t.Errorf("%s %s with the admin key: %d %s; want %d", e.method, e.path, got.status, got.body, want)
		}
	}
	got := serve(t, s, req{method: "GET", path: "/__admin/openapi.yaml", auth: "-"})
	if got.status != 200 || !strings.Contains(string(got.body), "inventory-mock admin API") {
		t.Errorf("/__admin/openapi.yaml: %d", got.status)
	}
}

// TestAdminDocumentIsServed checks that every admin handler is an operation
// of the admin document and every operation has a handler, in the mux the
// mock builds when its admin API is first used.
func TestAdminDocumentIsServed(t *testing.T) {
	s := newServer(t)
	if _, err := s.admin(); err != nil {
		t.Fatal(err)
	}
	doc, err := spec.Admin()
	if err != nil {
		t.Fatal(err)
	}
	mine := 0
	for _, op := range doc.Operations {
		if !slices.Contains(op.Operation.Tags, httpapi.ProxyTag) {
			mine++
		}
	}
	if len(s.adminHandlers()) != mine || mine == len(doc.Operations) {
		t.Errorf("%d handlers for the %d operations of the mock (of %d)", len(s.adminHandlers()), mine, len(doc.Operations))
	}
}

func TestAcceptsGzip(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "x-gzip": true, "gzip;q=0": false, "gzip;Q=0": false, "gzip; q=0.000": false,
		"gzip;q=0.5": true, "br, gzip;q=0.1": true, "*": true, "*;q=0": false, "*;q=0, gzip": true, "gzip;q=0, *": false,
		"identity": false, "br": false, "deflate, *;q=0.2": true,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if v != "" {
			r.Header.Set("Accept-Encoding", v)
		}
		if got := acceptsGzip(r); got != want {
			t.Errorf("Accept-Encoding %q: gzip %v; want %v", v, got, want)
		}
	}
}

// TestReviewedInputs holds inputs a review found mishandled: each gets a
// clear answer now.
func TestReviewedInputs(t *testing.T) {
	s := newServer(t, func(c *Config) { c.JournalSize = 10 })
	huge := `{"quantity":1` + strings.Repeat("1", 200_000) + `}`
	tests := []struct {
		name   string
		r      req
		status int
		want   string
	}{
		{"a number of 200,001 digits", req{method: "PATCH", path: "/v1/inventory/3", body: huge}, 400, "a number of 200001 characters; the mock reads numbers of at most 100"},
		{"an exponent past 1000", req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity":1e400000}`}, 400, "has an exponent past ±1000"},
		{"-0 as a quantity", req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity":-0}`}, 200, `"quantity":0,`},
		{"-0 as a petId", req{method: "PATCH", path: "/v1/inventory/-0", body: `{"quantity":1}`}, 400, `petId: \"-0\" is not an integer`},
		{"two Content-Types", req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity":1}`, header: http.Header{"Content-Type": {"application/json", "text/plain"}}}, 400, "Content-Type is given 2 times"},
		{"a mistyped since", req{method: "GET", path: "/__admin/requests?since=2026-13-99T00:00:00Z"}, 400, "since: \\\"2026-13-99T00:00:00Z\\\" is not an RFC 3339 time"},
		{"a whole number written with an exponent", req{method: "PUT", path: "/__admin/chaos", body: `{"rules":[{"operation":"updateInventory","fault":"status","status":5.03e2}]}`}, 200, `"status":503`},
	}
	for _, tt := range tests {
		start := time.Now()
		got := serve(t, s, tt.r)
		if got.status != tt.status || !strings.Contains(string(got.body), tt.want) {
			t.Errorf("%s: %d %.300s; want %d with %s", tt.name, got.status, got.body, tt.status, tt.want)
		}
		if len(got.body) > 4096 {
			t.Errorf("%s: the answer has %d bytes; a message quotes at most a short part of what was sent", tt.name, len(got.body))
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Logf("%s took %s", tt.name, d) // not a failure: the machine may be loaded
		}
	}
}

// TestControlViewJSON checks the admin API's answer about a setting, a
// struct that embeds it and its scope (controlAPI's as): the setting's
// fields, then its scope's, whichever of them is empty.
func TestControlViewJSON(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"rules, global", struct {
			Chaos
			scope
		}{Chaos{Seed: 7, Rules: []ChaosRule{}}, scope{Sessions: []string{"a"}}}, `{"seed":7,"rules":[],"sessions":["a"]}`},
		{"no limit, a session", struct {
			RateLimit
			scope
		}{RateLimit{}, scope{Scope: "global", Session: "a"}}, `{"scope":"global","session":"a"}`},
		{"a limit, no scope", struct {
			RateLimit
			scope
		}{RateLimit{Rate: "10/s"}, scope{}}, `{"rate":"10/s"}`},
		{"nothing", struct {
			RateLimit
			scope
		}{}, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			if string(b) != tt.want || err != nil {
				t.Errorf("json.Marshal = %s, %v; want %s", b, err, tt.want)
			}
		})
	}
}
