package main

import (
	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/mockserver/store/redistest"
	"github.com/petstore/inventory-kit/spec"
)

// An engineUnderTest is a store engine the mock runs on, chosen through
// INVENTORY_MOCK_STORE only, as a container would.
type engineUnderTest struct {
	name string
	// place makes a new place to keep state and returns the value of
	// INVENTORY_MOCK_STORE for it, and the store's name in the log's
	// listening line.
	place func(t *testing.T) (value, shown string)
	keeps bool // a mock started again on the place serves its state
}

var enginesUnderTest = []engineUnderTest{
	{name: "memory", place: func(t *testing.T) (string, string) { return "memory", "memory" }},
	{name: "file", keeps: true, place: func(t *testing.T) (string, string) {
		path := filepath.Join(t.TempDir(), "state.db")
		return "file:" + path, "file:" + path
	}},
	{name: "redis", keeps: true, place: func(t *testing.T) (string, string) {
		srv := redistest.Start(t, append(redistest.NoPersistence, "--requirepass", "pw-Zq9s3cret")...)
		return "redis://:pw-Zq9s3cret@" + srv.Addr + "/0", "redis://:xxxxx@" + srv.Addr + "/0"
	}},
}

// startOn runs the mock on the store value names, given in the
// environment only, and returns its base URL.
func startOn(t *testing.T, value string, logs io.Writer) (string, func() error) {
	t.Helper()
	addr, stop := start(t, nil, env(map[string]string{"INVENTORY_MOCK_STORE": value, "INVENTORY_MOCK_API_KEYS": engineKey}), logs)
	return "http://" + addr, stop
}

// engineKey is the API key of the mocks startOn starts: a session name
// must not hold it.
const engineKey = "engine-key-7Qx"

// call sends a request with engineKey, and a session if not empty, and
// returns the status and body.
func call(t *testing.T, method, url, session, body string) (int, []byte) {
	t.Helper()
	status, b, _ := send(t, engineKey, method, url, session, body)
	return status, b
}

// listOf returns the session's list over HTTP: petId -> record.
func listOf(t *testing.T, base, session string) map[int64]map[string]any {
	t.Helper()
	code, body := call(t, "GET", base+"/v1/inventory", session, "")
	if code != 200 {
		t.Fatalf("GET /v1/inventory (session %q) = %d %s", session, code, body)
	}
	var items []map[string]any
	if err := json.Unmarshal(body, &items); err != nil {
		t.Fatalf("the list is not a JSON array: %v", err)
	}
	out := map[int64]map[string]any{}
	for _, it := range items {
		id, _ := it["petId"].(float64)
		out[int64(id)] = it
	}
	return out
}

// fixtureQuantity returns the embedded fixtures' quantity of a pet.
func fixtureQuantity(t *testing.T, id int64) float64 {
	t.Helper()
	c, err := spec.Shared()
	if err != nil {
		t.Fatal(err)
	}
	shape, err := fixtures.NewShape(c)
	if err != nil {
		t.Fatal(err)
	}
	records, _, err := fixtures.Default(shape)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range records {
		if r.ID == id {
			var m map[string]any
			json.Unmarshal(r.JSON, &m)
			return m["quantity"].(float64)
		}
	}
	t.Fatalf("the fixtures have no pet %d", id)
	return 0
}

// TestEnginesOverHTTP runs the mock on each engine, chosen by
// INVENTORY_MOCK_STORE, and checks over HTTP what a client of the mock
// sees: the list, an update read back, sessions kept apart, resets of one
// session and of the default, the Error bodies of a bad update, the
// health check, and for the engines that keep state, a restart.
func TestEnginesOverHTTP(t *testing.T) {
	for _, e := range enginesUnderTest {
		t.Run(e.name, func(t *testing.T) {
			value, shown := e.place(t)
			var logs syncBuffer
			base, stop := startOn(t, value, &logs)
			if !strings.Contains(logs.String(), "store="+shown) {
				t.Errorf("the listening line does not name the store %s:\n%s", shown, logs.String())
			}
			smoke(t, base)

			// Writes a restart must keep: one in the default session, one
			// in a session of its own.
			if code, body := call(t, "PATCH", base+"/v1/inventory/9", "", `{"quantity":999}`); code != 200 {
				t.Fatalf("PATCH pet 9 = %d %s", code, body)
			}
			if code, body := call(t, "PATCH", base+"/v1/inventory/10", "kept", `{"quantity":1010}`); code != 200 {
				t.Fatalf("PATCH pet 10 in session kept = %d %s", code, body)
			}
			if err := stop(); err != nil {
				t.Fatalf("run after shutdown = %v", err)
			}
			var again syncBuffer
			base, _ = startOn(t, value, &again)
			want9, want10 := fixtureQuantity(t, 9), fixtureQuantity(t, 10)
			if e.keeps {
				want9, want10 = 999, 1010
			}
			if q := listOf(t, base, "")[9]["quantity"]; q != want9 {
				t.Errorf("after a restart, pet 9 = %v; want %v", q, want9)
			}
			if q := listOf(t, base, "kept")[10]["quantity"]; q != want10 {
				t.Errorf("after a restart, pet 10 of session kept = %v; want %v", q, want10)
			}
			if e.name == "file" && !strings.Contains(again.String(), "serving the state kept in the file") {
				t.Errorf("the restarted mock does not say it serves the file's state:\n%s", again.String())
			}
		})
	}
}

// smoke is a short run of what the conformance suite and the mockserver's
// session tests check, over HTTP, on a mock with the embedded fixtures.
func smoke(t *testing.T, base string) {
	t.Helper()
	c, err := spec.Shared()
	if err != nil {
		t.Fatal(err)
	}
	errorSchema := c.Schema("Error")
	// The list: every record valid.
	list := listOf(t, base, "")
	item := c.Operation("listInventory").Response(200).Schema.Model.Items.A.GetReference()
	itemSchema := c.Schema(item[strings.LastIndex(item, "/")+1:])
	for id, it := range list {
		b, _ := json.Marshal(it)
		if ps := itemSchema.ValidateJSON(b); len(ps) > 0 {
			t.Errorf("pet %d of the list: %s", id, spec.Join(ps))
		}
	}
	if len(list) == 0 {
		t.Fatal("the list is empty")
	}
	// An update, answered with the record and read back.
	code, body := call(t, "PATCH", base+"/v1/inventory/5", "", `{"quantity":31337}`)
	var rec map[string]any
	json.Unmarshal(body, &rec)
	if code != 200 || rec["quantity"] != 31337.0 || rec["petId"] != 5.0 {
		t.Fatalf("PATCH pet 5 = %d %s; want 200 with quantity 31337", code, body)
	}
	if q := listOf(t, base, "")[5]["quantity"]; q != 31337.0 {
		t.Errorf("read after write: pet 5 = %v; want 31337", q)
	}
	// A session of its own: its writes are its own, and it starts from
	// the fixtures, not from the default session's writes.
	if code, body := call(t, "PATCH", base+"/v1/inventory/7", "s1", `{"quantity":777}`); code != 200 {
		t.Fatalf("PATCH pet 7 in s1 = %d %s", code, body)
	}
	s1, def := listOf(t, base, "s1"), listOf(t, base, "")
	if s1[7]["quantity"] != 777.0 || s1[5]["quantity"] != fixtureQuantity(t, 5) {
		t.Errorf("session s1: pet 7 = %v, pet 5 = %v; want 777 and the fixture's %v", s1[7]["quantity"], s1[5]["quantity"], fixtureQuantity(t, 5))
	}
	if def[7]["quantity"] != fixtureQuantity(t, 7) {
		t.Errorf("the default session sees s1's write: pet 7 = %v", def[7]["quantity"])
	}
	code, body = call(t, "GET", base+"/__admin/sessions", "", "")
	var sessions []store.SessionInfo
	json.Unmarshal(body, &sessions)
	writes := map[string]int64{}
	for _, s := range sessions {
		writes[s.Name] = s.Writes
	}
	if code != 200 || len(sessions) == 0 || sessions[0].Name != store.DefaultSession || writes["s1"] != 1 || writes[store.DefaultSession] != 1 {
		t.Errorf("GET /__admin/sessions = %d %s; want the default first, one write in it and one in s1", code, body)
	}
	// Resets: of s1 by name, then of the default.
	if code, body := call(t, "POST", base+"/__admin/reset?session=s1", "", ""); code != 204 {
		t.Errorf("POST /__admin/reset?session=s1 = %d %s; want 204", code, body)
	}
	if q := listOf(t, base, "s1")[7]["quantity"]; q != fixtureQuantity(t, 7) {
		t.Errorf("after the reset of s1, its pet 7 = %v; want the fixture's", q)
	}
	if q := listOf(t, base, "")[5]["quantity"]; q != 31337.0 {
		t.Errorf("the reset of s1 changed the default session: pet 5 = %v", q)
	}
	if code, body := call(t, "POST", base+"/__admin/reset", "", ""); code != 204 {
		t.Errorf("POST /__admin/reset = %d %s; want 204", code, body)
	}
	if q := listOf(t, base, "")[5]["quantity"]; q != fixtureQuantity(t, 5) {
		t.Errorf("after the reset of the default session, pet 5 = %v; want the fixture's", q)
	}
	// Bad updates: the contract's Error body, the status it documents.
	for _, tt := range []struct {
		path, body string
		status     int
	}{
		{"/v1/inventory/5", `{"quantity":"many"}`, 400},
		{"/v1/inventory/5", `{"quantity":`, 400},
		{"/v1/inventory/999999", `{"quantity":1}`, 404},
	} {
		code, body := call(t, "PATCH", base+tt.path, "", tt.body)
		if code != tt.status || len(errorSchema.ValidateJSON(body)) > 0 {
			t.Errorf("PATCH %s %s = %d %s; want %d with an Error body", tt.path, tt.body, code, body, tt.status)
		}
	}
	if code, body := call(t, "GET", base+"/healthz", "", ""); code != 200 {
		t.Errorf("/healthz = %d %s; want 200", code, body)
	}
}

// TestRedisReplicasOverHTTP runs two mocks on one Redis: a write through
// one is read through the other, in the default session and in another,
// and a reset through one is seen by the other.
func TestRedisReplicasOverHTTP(t *testing.T) {
	srv := redistest.Start(t)
	a, _ := startOn(t, srv.URL(0), io.Discard)
	b, _ := startOn(t, srv.URL(0), io.Discard)
	for _, session := range []string{"", "team-b"} {
		if code, body := call(t, "PATCH", a+"/v1/inventory/3", session, `{"quantity":4242}`); code != 200 {
			t.Fatalf("PATCH on a = %d %s", code, body)
		}
		if q := listOf(t, b, session)[3]["quantity"]; q != 4242.0 {
			t.Errorf("session %q: a write on a, b lists pet 3 as %v; want 4242", session, q)
		}
	}
	if code, _ := call(t, "POST", b+"/__admin/reset?session=team-b", "", ""); code != 204 {
		t.Fatalf("reset on b = %d", code)
	}
	if q := listOf(t, a, "team-b")[3]["quantity"]; q != fixtureQuantity(t, 3) {
		t.Errorf("a reset on b: a lists pet 3 of team-b as %v; want the fixture's", q)
	}
}

// A failingStore is a memory store that fails as an engine whose server
// is down does, while fail is set.
type failingStore struct {
	store.Store
	fail atomic.Bool
}

var errDiskOnFire = fmt.Errorf("%w: file store /var/lib/x.db: a write failed (input/output error)", store.ErrUnavailable)

func (f *failingStore) err() error {
	if f.fail.Load() {
		return errDiskOnFire
	}
	return nil
}

func (f *failingStore) List(ctx context.Context, s string) (store.List, error) {
	if err := f.err(); err != nil {
		return store.List{}, err
	}
	return f.Store.List(ctx, s)
}

func (f *failingStore) Update(ctx context.Context, s string, id int64, change func(fixtures.Record) (fixtures.Record, error)) (fixtures.Record, error) {
	if err := f.err(); err != nil {
		return fixtures.Record{}, err
	}
	return f.Store.Update(ctx, s, id, change)
}

func (f *failingStore) Reset(ctx context.Context, s string) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.Store.Reset(ctx, s)
}

func (f *failingStore) Sessions(ctx context.Context) ([]store.SessionInfo, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.Store.Sessions(ctx)
}

func (f *failingStore) Health(ctx context.Context) error { return f.err() }

// cannot is what a 503 says the store could not do for a request of method.
func cannot(method string) string {
	if method == "GET" || method == "HEAD" {
		return "the mock's store cannot read now"
	}
	return "the mock's store cannot write now"
}

// checkUnavailable checks a 503 answer: the contract's Error body, code
// unavailable, status 503, a message that says what the store could not
// do (why is the log's: it names the server's files and hosts).
func checkUnavailable(t *testing.T, what string, code int, header http.Header, body []byte, why string) {
	t.Helper()
	c, err := spec.Shared()
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Code    string
		Message string
		Status  int
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	switch {
	case code != http.StatusServiceUnavailable:
		t.Errorf("%s = %d %s; want 503", what, code, body)
	case header.Get("Content-Type") != "application/json":
		t.Errorf("%s: Content-Type %q; want application/json", what, header.Get("Content-Type"))
	case len(c.Schema("Error").ValidateJSON(body)) > 0 || dec.Decode(&e) != nil:
		t.Errorf("%s: body %s is not the contract's Error body", what, body)
	case e.Code != httpapi.CodeUnavailable || e.Status != 503 || !strings.Contains(e.Message, why):
		t.Errorf("%s: body %s; want code %q, status 503 and a message saying %q", what, body, httpapi.CodeUnavailable, why)
	}
}

// TestStoreFailureAnswers503 serves the mock from a store that fails, and
// checks every route that reads or writes it: 503 with the Error body,
// then 200 again once the store is back.
func TestStoreFailureAnswers503(t *testing.T) {
	c, err := spec.Shared()
	if err != nil {
		t.Fatal(err)
	}
	shape, err := fixtures.NewShape(c)
	if err != nil {
		t.Fatal(err)
	}
	records, _, err := fixtures.Default(shape)
	if err != nil {
		t.Fatal(err)
	}
	st := &failingStore{Store: store.NewMemory(records, store.Options{})}
	var logs syncBuffer
	mock, err := mockserver.New(mockserver.Config{Store: st, APIKeys: []string{"k"}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()
	srv := httptest.NewServer(mock)
	defer srv.Close()
	requests := []struct{ method, path, body string }{
		{"GET", "/v1/inventory", ""},
		{"PATCH", "/v1/inventory/5", `{"quantity":3}`},
		{"GET", "/healthz", ""},
		{"POST", "/__admin/reset", ""},
		{"GET", "/__admin/sessions", ""},
	}
	st.fail.Store(true)
	for _, r := range requests {
		req, _ := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(r.body))
		req.Header.Set("Authorization", "Bearer k")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		checkUnavailable(t, r.method+" "+r.path, resp.StatusCode, resp.Header, body, cannot(r.method))
	}
	if !strings.Contains(logs.String(), "a write failed (input/output error)") {
		t.Errorf("the log does not say why the store cannot serve:\n%s", logs.String())
	}
	st.fail.Store(false)
	for _, r := range requests {
		req, _ := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(r.body))
		req.Header.Set("Authorization", "Bearer k")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Errorf("%s %s with the store back = %d; want success", r.method, r.path, resp.StatusCode)
		}
	}
}

// TestRedisDownAnswers503 runs the mock on a Redis server that is then
// killed: a list, an update and /healthz answer 503 with the Error body,
// a message naming the cause and not the server's address (/healthz takes
// no key).
func TestRedisDownAnswers503(t *testing.T) {
	srv := redistest.Start(t)
	var logs syncBuffer
	base, stop := startOn(t, srv.URL(0), &logs)
	listOf(t, base, "")
	srv.Kill()
	_, port, _ := strings.Cut(srv.Addr, ":")
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/v1/inventory", ""},
		{"PATCH", "/v1/inventory/5", `{"quantity":3}`},
		{"GET", "/healthz", ""},
	} {
		req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
		req.Header.Set("Authorization", "Bearer "+engineKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		checkUnavailable(t, r.method+" "+r.path, resp.StatusCode, resp.Header, body, cannot(r.method))
		if strings.Contains(string(body), port) {
			t.Errorf("%s %s: the body names the Redis server: %s", r.method, r.path, body)
		}
	}
	stop()
	if !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("the log does not say why the store cannot serve:\n%s", logs.String())
	}
}

// TestStoreRefusedAtStart starts the mock on stores it must refuse: run
// fails at once, with exit status 2 and a message that says what is wrong,
// and the process lives to say it (a truncated bbolt file used to end it
// with SIGBUS).
func TestStoreRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	srv := redistest.Start(t, append(redistest.NoPersistence, "--requirepass", "right-pw")...)
	good := filepath.Join(dir, "good.db")
	{
		base, stop := startOn(t, "file:"+good, io.Discard)
		for id := 1; id <= 64; id++ {
			call(t, "PATCH", fmt.Sprintf("%s/v1/inventory/%d", base, id), "a", `{"quantity":123456}`)
		}
		stop()
	}
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cut := func(n int) string {
		path := filepath.Join(dir, fmt.Sprintf("cut-%d.db", n))
		os.WriteFile(path, whole[:n], 0o600)
		return "file:" + path
	}
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o600)
	for _, tt := range []struct {
		name, value, want string
	}{
		{"an empty file", "file:" + empty, "exists but is empty (0 bytes)"},
		{"a file cut on a page boundary", cut(8192), "truncated: 8192 bytes"},
		{"a file cut inside a page", cut(12000), "truncated: 12000 bytes"},
		{"a directory", "file:" + dir, "a directory, not a file"},
		{"a wrong Redis password", "redis://:wrong-pw@" + srv.Addr + "/0", "authentication refused"},
		{"no Redis password", "redis://" + srv.Addr + "/0", "authentication required"},
		{"an empty Redis prefix", "redis://:right-pw@" + srv.Addr + "/0?prefix=", "?prefix= is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			begin := time.Now()
			err := run(context.Background(), []string{"--addr", "127.0.0.1:0"}, env(map[string]string{"INVENTORY_MOCK_STORE": tt.value}), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run on %s = %v; want an error saying %q", tt.value, err, tt.want)
			}
			if cli.Code(err) != cli.ExitCannotRun {
				t.Errorf("exit status %d; want %d", cli.Code(err), cli.ExitCannotRun)
			}
			if d := time.Since(begin); d > 5*time.Second {
				t.Errorf("run took %v to refuse; want it at once", d)
			}
			if strings.Contains(err.Error(), "wrong-pw") || strings.Contains(err.Error(), "right-pw") {
				t.Errorf("the error shows a password: %v", err)
			}
		})
	}
}

// TestRedisLogStaysJSON runs the mock with --log-format json on a Redis
// server with a password, and kills the server: every line the mock
// writes, go-redis's own included, is a JSON object, none holds the
// password, and go-redis's lines come at most once a minute.
func TestRedisLogStaysJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process and a redis-server")
	}
	srv := redistest.Start(t, append(redistest.NoPersistence, "--requirepass", "pw-Zq9s3cret")...)
	mock := startChild(t, "--log-format", "json", "--store", "redis://:pw-Zq9s3cret@"+srv.Addr+"/0")
	srv.Kill()
	client := &http.Client{Timeout: 5 * time.Second}
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		patch(client, mock.addr, 1, 5)
	}
	out := mock.log.String()
	redisLines := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("a log line that is not JSON: %s", line)
			continue
		}
		if v["msg"] == "redis client" {
			redisLines++
		}
	}
	if redisLines != 1 {
		t.Errorf("%d lines of go-redis's in 3 s with Redis down; want 1 (the first, then at most one a minute):\n%s", redisLines, out)
	}
	if strings.Contains(out, "pw-Zq9s3cret") {
		t.Errorf("the log shows the password:\n%s", out)
	}
}
