package mockserver

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// journalServer starts s on a real loopback connection, as clients and
// curl reach it.
func journalServer(t *testing.T, s *Server) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// send sends one request with the given headers ("Authorization" absent
// from them: no such header) and returns the status.
func send(t *testing.T, srv *httptest.Server, method, path, body string, header map[string]string) int {
	t.Helper()
	r, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		r.Body = http.NoBody
	}
	for k, v := range header {
		r.Header[k] = []string{v}
	}
	resp, err := srv.Client().Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestJournalKeepsBodiesOfEarlyAnswers pins that a request answered before
// its body was read (no key, a fault, a bad Prefer header or session) is
// journaled with its body, so the dashboard shows it and its curl line
// sends it.
func TestJournalKeepsBodiesOfEarlyAnswers(t *testing.T) {
	key := "Bearer " + testKey
	for _, tc := range []struct {
		name   string
		header map[string]string
		fault  bool // a fault rule answers 503 before the body is read
		want   int
	}{
		{"no key", map[string]string{}, false, 401},
		{"a wrong key", map[string]string{"Authorization": "Bearer wrong-key"}, false, 401},
		{"a bad Prefer header", map[string]string{"Authorization": key, "Prefer": "code=oops"}, false, 400},
		{"a forced answer", map[string]string{"Authorization": key, "Prefer": "code=404"}, false, 404},
		{"a bad session name", map[string]string{"Authorization": key, SessionHeader: "no spaces please"}, false, 400},
		{"a fault", map[string]string{"Authorization": key}, true, 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, func(c *Config) {
				c.JournalSize = 10
				if tc.fault {
					c.Chaos = Chaos{Seed: 1, Rules: []ChaosRule{{Operation: "updateInventory", Fault: FaultStatus, Status: 503}}}
				}
			})
			srv := journalServer(t, s)
			body := `{"quantity": 41, "note": "` + tc.name + `"}`
			tc.header["Content-Type"] = "application/json"
			if got := send(t, srv, "PATCH", "/v1/inventory/3", body, tc.header); got != tc.want {
				t.Fatalf("status %d; want %d", got, tc.want)
			}
			e := journalOf(t, s, "?limit=1")[0]
			if e.Status != tc.want || e.Request.Body != body || e.Request.Bytes != len(body) || e.Request.Truncated {
				t.Errorf("journaled request %+v, status %d; want the body %s whole", e.Request, e.Status, body)
			}
			if !strings.Contains(e.Curl, "--data-binary '"+body+"'") {
				t.Errorf("curl = %s; want it to send the body", e.Curl)
			}
		})
	}
}

// TestJournalJudgesLists pins the verdict on list answers: a list of up
// to four times the body limit is kept whole and judged, a longer one is
// cut and says it was not checked; a path that is no operation's gets no
// operation and no verdict, and a 401 is judged against the operation its
// path and method address.
func TestJournalJudgesLists(t *testing.T) {
	records := func(n int) []fixtures.Record {
		r, err := fixtures.Generate(shape(t), n, 7)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		pets      int
		judged    bool
		truncated bool
	}{
		{pets: 64, judged: true},                   // about 2.5 KiB: shown whole
		{pets: 200, judged: true, truncated: true}, // about 8 KiB: shown cut, judged whole
		{pets: 1000, truncated: true},              // about 40 KiB: past 16 KiB, not kept whole
	} {
		t.Run(strconv.Itoa(tc.pets), func(t *testing.T) {
			s := newServer(t, func(c *Config) { c.JournalSize = 10; c.Records = records(tc.pets) })
			if got := serve(t, s, req{method: "GET", path: "/v1/inventory"}); got.status != 200 {
				t.Fatalf("list: %d", got.status)
			}
			e := journalOf(t, s, "?limit=1")[0]
			if e.Operation != "listInventory" || e.Verdict == nil {
				t.Fatalf("entry = %+v; want listInventory with a verdict", e)
			}
			if judged := e.Verdict.Valid && e.Verdict.Note == ""; judged != tc.judged {
				t.Errorf("verdict = %+v; judged %v, want %v", e.Verdict, judged, tc.judged)
			}
			if e.Response.Truncated != tc.truncated || len(e.Response.Body) > DefaultJournalBodyLimit {
				t.Errorf("response shown: %d bytes, truncated %v; want at most %d, truncated %v",
					len(e.Response.Body), e.Response.Truncated, DefaultJournalBodyLimit, tc.truncated)
			}
			if !strings.HasPrefix(e.Response.Body, `[{"petId":`) {
				t.Errorf("response body starts %.40q; want the list's JSON", e.Response.Body)
			}
		})
	}

	s := newServer(t, func(c *Config) { c.JournalSize = 10 })
	if got := serve(t, s, req{method: "GET", path: "/v1/inventory/"}); got.status != 404 {
		t.Fatalf("GET /v1/inventory/: %d; want 404", got.status)
	}
	if e := journalOf(t, s, "?limit=1")[0]; e.Operation != "" || e.Verdict != nil {
		t.Errorf("GET /v1/inventory/ journaled as %q, verdict %+v; want no operation and no verdict", e.Operation, e.Verdict)
	}
	if got := serve(t, s, req{method: "GET", path: "/v1/inventory", auth: "-"}); got.status != 401 {
		t.Fatalf("GET /v1/inventory without a key: %d; want 401", got.status)
	}
	if e := journalOf(t, s, "?limit=1")[0]; e.Operation != "listInventory" || e.Verdict == nil || !e.Verdict.Valid {
		t.Errorf("401 journaled as %q, verdict %+v; want listInventory, valid (the contract documents 401)", e.Operation, e.Verdict)
	}
}

// TestJournalCurlReplays runs every curl line the journal shows against
// the mock and checks it gets the status the journaled request got: the
// line sends the same credentials (a configured key as its variable, any
// other as a value no server accepts, none where none was sent), the same
// method and body.
func TestJournalCurlReplays(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("INVENTORY_REQUIRE_CURL") != "" {
			t.Fatal("curl is not installed, and INVENTORY_REQUIRE_CURL is set (.ci/run installs curl)")
		}
		t.Skip("curl is not installed: the journal's curl lines cannot be replayed")
	}
	s := newServer(t, func(c *Config) { c.JournalSize = 50 })
	srv := journalServer(t, s)
	json := map[string]string{"Content-Type": "application/json"}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range m {
			out[a] = b
		}
		return out
	}
	key := "Bearer " + testKey
	for _, tc := range []struct {
		method, path, body string
		header             map[string]string
	}{
		{"GET", "/v1/inventory", "", map[string]string{}},
		{"GET", "/v1/inventory", "", map[string]string{"Authorization": ""}},
		{"GET", "/v1/inventory", "", map[string]string{"Authorization": "Bearer"}},
		{"GET", "/v1/inventory", "", map[string]string{"Authorization": "Basic eHl6OnNlY3JldA=="}},
		{"GET", "/v1/inventory", "", map[string]string{"Authorization": "Bearer not-a-key"}},
		{"GET", "/v1/inventory", "", map[string]string{"Authorization": testKey}},
		{"GET", "/v1/inventory", "", map[string]string{"Authorization": key}},
		{"GET", "/v1/inventory", "", map[string]string{"Authorization": "bearer " + testKey}},
		{"HEAD", "/v1/inventory", "", map[string]string{"Authorization": key}},
		{"GET", "/v1/inventory", "", with(map[string]string{"Authorization": key}, SessionHeader, "replay")},
		{"PATCH", "/v1/inventory/3", `{"quantity": 12}`, with(json, "Authorization", key)},
		{"PATCH", "/v1/inventory/3", `{"quantity": "twelve"}`, with(json, "Authorization", key)},
		{"PATCH", "/v1/inventory/999999", `{"quantity": 12}`, with(json, "Authorization", key)},
		{"PATCH", "/v1/inventory/3", `{"quantity": 12}`, with(with(json, "Authorization", key), "Prefer", "code=404")},
		{"PATCH", "/v1/inventory/3", `{"quantity": 12}`, with(json, "Authorization", "Bearer wrong")},
	} {
		name := tc.method + " " + tc.path + " " + tc.header["Authorization"] + " " + tc.body
		want := send(t, srv, tc.method, tc.path, tc.body, tc.header)
		e := journalOf(t, s, "?limit=1")[0]
		if e.Status != want {
			t.Fatalf("%s: journaled %d; sent and got %d", name, e.Status, want)
		}
		if strings.Contains(e.Curl, testKey) || strings.Contains(e.Curl, "eHl6") {
			t.Errorf("%s: curl line shows a credential: %s", name, e.Curl)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, "sh", "-c", e.Curl)
		cmd.Env = append(os.Environ(), "INVENTORY_API_KEY="+testKey)
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("%s: %s: %v", name, e.Curl, err)
		}
		line, _ := bufio.NewReader(strings.NewReader(string(out))).ReadString('\n')
		if f := strings.Fields(line); len(f) < 2 || f[1] != strconv.Itoa(want) {
			t.Errorf("%s: replaying %s\ngave %q; want status %d", name, e.Curl, line, want)
		}
	}
}

// TestJournalBytesBound fills the journal from one client through 1,000
// sessions of 10 entries with 4 KiB bodies each: what it keeps stays
// within its bound in bytes, the sessions used last are kept, and the
// count it keeps matches its entries (after replacements and clears too).
func TestJournalBytesBound(t *testing.T) {
	j := newJournal(10, 4096, 1000)
	j.maxBytes = 1 << 20
	body := make([]byte, 4096)
	start := time.Now()
	for i := range 1000 {
		for k := range 12 { // past the ring: two replaced
			j.add(&entry{Entry: httpapi.Entry{Session: fmt.Sprintf("s%d", i), Start: start.Add(time.Duration(i*12+k) * time.Millisecond)}, x: exchange.Exchange{Body: body, RespBody: body}})
		}
	}
	counted := 0
	for _, r := range j.sessions {
		for _, e := range r.entries {
			counted += entrySize(e)
		}
	}
	if j.bytes > j.maxBytes || counted != j.bytes {
		t.Errorf("the journal keeps %d bytes (counted %d); want at most its bound, %d, and the two equal", j.bytes, counted, j.maxBytes)
	}
	if j.sessions["s999"] == nil || len(j.sessions) < 2 {
		t.Errorf("%d sessions kept, the last used among them: %v; want the ones used last", len(j.sessions), j.sessions["s999"] != nil)
	}
	j.clear("s999")
	j.clear("")
	if j.bytes != 0 {
		t.Errorf("%d bytes counted after clearing the journal; want 0", j.bytes)
	}
	if MaxJournalBytes != 64<<20 {
		t.Errorf("MaxJournalBytes = %d; mockserver/README.md says 64 MiB", MaxJournalBytes)
	}
}
