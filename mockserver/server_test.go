package mockserver

import (
	"path"

	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/metrics"
	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
)

const testKey = "test-key-1"

func contract(t testing.TB) *spec.Contract {
	t.Helper()
	c, err := spec.Shared()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func shape(t testing.TB) *fixtures.Shape {
	t.Helper()
	s, err := fixtures.NewShape(contract(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testRecords(t testing.TB) []fixtures.Record {
	t.Helper()
	records, _, err := fixtures.Default(shape(t))
	if err != nil {
		t.Fatal(err)
	}
	return records
}

// An item is a decoded InventoryItem of the embedded contract.
type item struct {
	PetID    int64  `json:"petId"`
	Quantity int64  `json:"quantity"`
	Status   string `json:"status"`
}

// testItems returns the fixtures, decoded.
func testItems(t testing.TB) []item {
	t.Helper()
	var items []item
	for _, r := range testRecords(t) {
		items = append(items, decodeItem(t, r.JSON))
	}
	return items
}

func decodeItem(t testing.TB, b []byte) item {
	t.Helper()
	var it item
	if err := json.Unmarshal(b, &it); err != nil {
		t.Fatalf("not an InventoryItem: %v: %s", err, b)
	}
	return it
}

// stored returns a pet as the default session's store holds it.
func stored(t testing.TB, s *Server, id int64) item {
	t.Helper()
	r, err := s.Store().Get(context.Background(), store.DefaultSession, id)
	if err != nil {
		t.Fatalf("pet %d: %v", id, err)
	}
	return decodeItem(t, r.JSON)
}

// listed returns the default session's list as the store holds it.
func listed(t testing.TB, s *Server) []byte {
	t.Helper()
	l, err := s.Store().List(context.Background(), store.DefaultSession)
	if err != nil {
		t.Fatal(err)
	}
	return l.Bytes()
}

func newServer(t testing.TB, mod ...func(*Config)) *Server {
	t.Helper()
	// mock.test: the host serve sends its requests to.
	cfg := Config{Contract: contract(t), Records: testRecords(t), APIKeys: []string{testKey, "test-key-2"}, AllowedHosts: []string{"mock.test"}}
	for _, m := range mod {
		m(&cfg)
	}
	return NewTest(t, cfg)
}

// A req describes one request; auth "" sends the test key, "-" sends no header.
type req struct {
	method, path, auth, contentType, body string
	header                                http.Header
}

type result struct {
	status int
	header http.Header
	body   []byte
	errorBody
}

type errorBody struct {
	Code    any `json:"code"`
	Message any `json:"message"`
	Status  any `json:"status"`
}

// serve sends r to s and checks what every response must satisfy: an error
// is the contract's Error body with status equal to the HTTP status, and a
// response to one of the contract's operations is valid against the spec.
func serve(t *testing.T, s *Server, r req) result {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr := httptest.NewRequest(r.method, "http://mock.test"+r.path, body)
	switch r.auth {
	case "":
		hr.Header.Set("Authorization", "Bearer "+testKey)
	case "-":
	default:
		hr.Header.Set("Authorization", r.auth)
	}
	if r.contentType != "" {
		hr.Header.Set("Content-Type", r.contentType)
	} else if r.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		hr.Header[k] = v
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, hr)
	resp := rec.Result()
	out := result{status: resp.StatusCode, header: resp.Header, body: rec.Body.Bytes()}
	if out.status >= 400 {
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type = %q; want application/json", r.method, r.path, ct)
		}
		if err := json.Unmarshal(out.body, &out.errorBody); err != nil {
			t.Fatalf("%s %s: error body is not JSON: %s", r.method, r.path, out.body)
		}
		if ps := s.Contract().Schema("Error").ValidateJSON(out.body); len(ps) > 0 {
			t.Errorf("%s %s: body is not an Error: %s: %s", r.method, r.path, spec.Join(ps), out.body)
		}
		if st, _ := out.Status.(float64); int(st) != out.status {
			t.Errorf("%s %s: Error.status = %v; want %d", r.method, r.path, out.Status, out.status)
		}
		if m, _ := out.Message.(string); m == "" {
			t.Errorf("%s %s: Error.message is empty", r.method, r.path)
		}
	}
	// Every answer to an operation of the contract is one the contract
	// documents, the mock's controls (Prefer, X-Mock-Session) and its chaos
	// rules included: the contract's default response covers their errors.
	if op := operationOf(s.Contract(), r.method, r.path); op != nil {
		if ps := op.CheckResponse(out.status, resp.Header, out.body); len(ps) > 0 {
			t.Errorf("%s %s: response %d breaks the contract: %s\n%s", r.method, r.path, out.status, spec.Join(ps), out.body)
		}
		if r.method != "HEAD" {
			kinCheck(t, s.Contract(), hr, out.status, resp.Header, out.body)
		}
	}
	admin, err := spec.Admin()
	if err != nil {
		t.Fatal(err)
	}
	path, _, _ := strings.Cut(r.path, "?")
	if op, _, _ := admin.Match(r.method, path); op != nil {
		if ps := op.CheckResponse(out.status, resp.Header, out.body); len(ps) > 0 {
			t.Errorf("%s %s: answer %d breaks the admin document: %s\n%s", r.method, r.path, out.status, spec.Join(ps), out.body)
		}
	}
	return out
}

// operationOf finds the contract operation a request path names, if any.
func operationOf(c *spec.Contract, method, path string) *spec.Operation {
	path, _, _ = strings.Cut(path, "?")
	segs := strings.Split(strings.TrimPrefix(path, c.BasePath), "/")
	for _, op := range c.Operations {
		tmpl := strings.Split(op.Path, "/")
		if op.Method != method || len(tmpl) != len(segs) || !strings.HasPrefix(path, c.BasePath+"/") {
			continue
		}
		match := true
		for i := range tmpl {
			if !strings.HasPrefix(tmpl[i], "{") && tmpl[i] != segs[i] {
				match = false
			}
		}
		if match {
			return op
		}
	}
	return nil
}

func TestAuth(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name      string
		r         req
		status    int
		challenge string // the WWW-Authenticate header wanted on a 401
	}{
		{"no header", req{method: "GET", path: "/v1/inventory", auth: "-"}, 401, `Bearer realm="inventory"`},
		{"scheme only", req{method: "GET", path: "/v1/inventory", auth: "Bearer"}, 401, `Bearer realm="inventory"`},
		{"empty token", req{method: "GET", path: "/v1/inventory", auth: "Bearer   "}, 401, `Bearer realm="inventory"`},
		{"unknown key", req{method: "GET", path: "/v1/inventory", auth: "Bearer nope"}, 401, `Bearer realm="inventory", error="invalid_token"`},
		{"key prefix", req{method: "GET", path: "/v1/inventory", auth: "Bearer " + testKey[:5]}, 401, `Bearer realm="inventory", error="invalid_token"`},
		{"key with suffix", req{method: "GET", path: "/v1/inventory", auth: "Bearer " + testKey + "x"}, 401, `Bearer realm="inventory", error="invalid_token"`},
		{"no space", req{method: "GET", path: "/v1/inventory", auth: "Bearer" + testKey}, 401, `Bearer realm="inventory"`},
		{"basic", req{method: "GET", path: "/v1/inventory", auth: "Basic dGVzdDp0ZXN0"}, 401, `Bearer realm="inventory"`},
		{"key in query", req{method: "GET", path: "/v1/inventory?api_key=" + testKey, auth: "-"}, 401, `Bearer realm="inventory"`},
		{"dev key when keys are set", req{method: "GET", path: "/v1/inventory", auth: "Bearer " + httpapi.DevKey}, 401, `Bearer realm="inventory", error="invalid_token"`},
		{"two headers", req{method: "GET", path: "/v1/inventory", header: http.Header{"Authorization": {"Bearer " + testKey, "Bearer " + testKey}}, auth: "-"}, 401, `Bearer realm="inventory"`},
		{"lower-case scheme", req{method: "GET", path: "/v1/inventory", auth: "bearer " + testKey}, 200, ""},
		{"upper-case scheme", req{method: "GET", path: "/v1/inventory", auth: "BEARER " + testKey}, 200, ""},
		{"second key", req{method: "GET", path: "/v1/inventory", auth: "Bearer test-key-2"}, 200, ""},
		// Auth comes first: nothing else is revealed without a key.
		{"unknown pet", req{method: "PATCH", path: "/v1/inventory/424242", auth: "-", body: `{"quantity":1}`}, 401, `Bearer realm="inventory"`},
		{"bad body", req{method: "PATCH", path: "/v1/inventory/1", auth: "-", body: `{`}, 401, `Bearer realm="inventory"`},
		{"bad petId", req{method: "PATCH", path: "/v1/inventory/abc", auth: "Bearer x", body: `{"quantity":1}`}, 401, `Bearer realm="inventory", error="invalid_token"`},
		{"unknown path", req{method: "GET", path: "/v1/nope", auth: "-"}, 401, `Bearer realm="inventory"`},
		{"wrong method", req{method: "DELETE", path: "/v1/inventory", auth: "-"}, 401, `Bearer realm="inventory"`},
		{"deprecated pet detail", req{method: "GET", path: "/v1/pets/1", auth: "-"}, 401, `Bearer realm="inventory"`},
		{"orders", req{method: "GET", path: "/v1/store/orders", auth: "Basic x"}, 401, `Bearer realm="inventory"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := serve(t, s, tt.r)
			if got.status != tt.status {
				t.Fatalf("status = %d; want %d: %s", got.status, tt.status, got.body)
			}
			if tt.status == 401 {
				if got.Code != httpapi.CodeUnauthorized {
					t.Errorf("code = %v; want %s", got.Code, httpapi.CodeUnauthorized)
				}
				if h := got.header.Get("WWW-Authenticate"); h != tt.challenge {
					t.Errorf("WWW-Authenticate = %q; want %q", h, tt.challenge)
				}
			}
		})
	}
	// Nothing was written by the unauthenticated PATCHes.
	if it := stored(t, s, 1); it.Quantity != testItems(t)[0].Quantity {
		t.Errorf("pet 1 changed to %d by unauthenticated requests", it.Quantity)
	}
}

func TestDevKeyWhenNoneConfigured(t *testing.T) {
	s := newServer(t, func(c *Config) { c.APIKeys = nil })
	if got := serve(t, s, req{method: "GET", path: "/v1/inventory", auth: "Bearer " + httpapi.DevKey}); got.status != 200 {
		t.Errorf("dev key: status = %d; want 200", got.status)
	}
	if got := serve(t, s, req{method: "GET", path: "/v1/inventory", auth: "Bearer other"}); got.status != 401 {
		t.Errorf("other key: status = %d; want 401", got.status)
	}
}

func TestList(t *testing.T) {
	s := newServer(t)
	got := serve(t, s, req{method: "GET", path: "/v1/inventory"})
	if got.status != 200 {
		t.Fatalf("status = %d; want 200", got.status)
	}
	var items []item
	if err := json.Unmarshal(got.body, &items); err != nil {
		t.Fatal(err)
	}
	want := testItems(t)
	if !slices.Equal(items, want) {
		t.Errorf("list = %v; want the fixtures %v", items, want)
	}
	if !slices.IsSortedFunc(items, func(a, b item) int { return int(a.PetID - b.PetID) }) {
		t.Error("list is not in ascending petId order")
	}
	if h := got.header.Get("Cache-Control"); h != "no-store" {
		t.Errorf("Cache-Control = %q; want no-store", h)
	}
	// Unknown query parameters are ignored: the contract defines none.
	if got := serve(t, s, req{method: "GET", path: "/v1/inventory?status=sold"}); got.status != 200 {
		t.Errorf("with a query: status = %d; want 200", got.status)
	}
}

func TestUpdate(t *testing.T) {
	tests := []struct {
		name, path, contentType, body string
		status                        int
		code, message                 string // on error: the code and a part of the message
		quantity                      int64  // on 200: the quantity wanted
	}{
		{"set", "/v1/inventory/3", "", `{"quantity": 42}`, 200, "", "", 42},
		{"zero", "/v1/inventory/3", "", `{"quantity": 0}`, 200, "", "", 0},
		{"largest", "/v1/inventory/3", "", `{"quantity": 2147483647}`, 200, "", "", fixtures.DefaultMaximum},
		{"whole float", "/v1/inventory/3", "", `{"quantity": 5.0}`, 200, "", "", 5},
		{"exponent", "/v1/inventory/3", "", `{"quantity": 1e2}`, 200, "", "", 100},
		{"extra field ignored", "/v1/inventory/3", "", `{"quantity": 7, "status": "sold"}`, 200, "", "", 7},
		{"charset", "/v1/inventory/3", "application/json; charset=utf-8", `{"quantity": 8}`, 200, "", "", 8},
		{"no body", "/v1/inventory/3", "application/json", ``, 400, httpapi.CodeInvalidBody, "body: required", 0},
		{"empty object", "/v1/inventory/3", "", `{}`, 400, httpapi.CodeInvalidBody, "quantity", 0},
		{"malformed", "/v1/inventory/3", "", `{"quantity":`, 400, httpapi.CodeInvalidBody, "malformed JSON", 0},
		{"trailing garbage", "/v1/inventory/3", "", `{"quantity":1} x`, 400, httpapi.CodeInvalidBody, "malformed JSON", 0},
		{"null", "/v1/inventory/3", "", `null`, 400, httpapi.CodeInvalidBody, "got null, want object", 0},
		{"array", "/v1/inventory/3", "", `[{"quantity":1}]`, 400, httpapi.CodeInvalidBody, "got array, want object", 0},
		{"string quantity", "/v1/inventory/3", "", `{"quantity":"5"}`, 400, httpapi.CodeInvalidBody, "quantity: got string, want integer", 0},
		{"fraction", "/v1/inventory/3", "", `{"quantity":1.5}`, 400, httpapi.CodeInvalidBody, "quantity: got number, want integer", 0},
		{"boolean", "/v1/inventory/3", "", `{"quantity":true}`, 400, httpapi.CodeInvalidBody, "quantity: got boolean, want integer", 0},
		{"null quantity", "/v1/inventory/3", "", `{"quantity":null}`, 400, httpapi.CodeInvalidBody, "quantity: got null, want integer", 0},
		{"negative", "/v1/inventory/3", "", `{"quantity":-1}`, 400, httpapi.CodeInvalidBody, "quantity: -1 is out of range: below the minimum 0", 0},
		{"past int32", "/v1/inventory/3", "", `{"quantity":2147483648}`, 400, httpapi.CodeInvalidBody, "out of range", 0},
		{"past int64", "/v1/inventory/3", "", `{"quantity":9223372036854775808}`, 400, httpapi.CodeInvalidBody, "out of range", 0},
		{"past float64", "/v1/inventory/3", "", `{"quantity":1e400}`, 400, httpapi.CodeInvalidBody, "out of range", 0},
		{"duplicate key", "/v1/inventory/3", "", `{"quantity":1,"quantity":2}`, 400, httpapi.CodeInvalidBody, "more than once", 0},
		{"text/plain", "/v1/inventory/3", "text/plain", `{"quantity":1}`, 400, httpapi.CodeUnsupportedMediaType, `"text/plain" is not accepted; send application/json`, 0},
		{"form", "/v1/inventory/3", "application/x-www-form-urlencoded", `quantity=1`, 400, httpapi.CodeUnsupportedMediaType, "send application/json", 0},
		{"petId abc", "/v1/inventory/abc", "", `{"quantity":1}`, 400, httpapi.CodeInvalidParameter, "petId", 0},
		{"petId fraction", "/v1/inventory/1.5", "", `{"quantity":1}`, 400, httpapi.CodeInvalidParameter, "petId", 0},
		{"petId past int64", "/v1/inventory/9223372036854775808", "", `{"quantity":1}`, 400, httpapi.CodeInvalidParameter, "petId", 0},
		// JSON Schema counts these as integers; as path segments they are not int64s.
		{"petId 1.0", "/v1/inventory/1.0", "", `{"quantity":1}`, 400, httpapi.CodeInvalidParameter, `petId: "1.0" is not an integer`, 0},
		{"petId 3e0", "/v1/inventory/3e0", "", `{"quantity":1}`, 400, httpapi.CodeInvalidParameter, `petId: "3e0" is not an integer`, 0},
		{"petId 1E2", "/v1/inventory/1E2", "", `{"quantity":1}`, 400, httpapi.CodeInvalidParameter, `petId: "1E2" is not an integer`, 0},
		{"petId 3.", "/v1/inventory/3.", "", `{"quantity":1}`, 400, httpapi.CodeInvalidParameter, `petId: "3." is not an integer`, 0},
		{"petId 03", "/v1/inventory/03", "", `{"quantity":1}`, 400, httpapi.CodeInvalidParameter, `petId: "03" is not an integer`, 0},
		{"petId +3", "/v1/inventory/+3", "", `{"quantity":1}`, 400, httpapi.CodeInvalidParameter, `petId: "+3" is not an integer`, 0},
		{"almost whole", "/v1/inventory/3", "", `{"quantity":7.00000000000000000000000001}`, 400, httpapi.CodeInvalidBody, "quantity: got number, want integer", 0},
		{"invalid UTF-8", "/v1/inventory/3", "", "{\"quantity\":1,\"note\":\"\xff\"}", 400, httpapi.CodeInvalidBody, "malformed JSON", 0},
		{"unknown pet", "/v1/inventory/424242", "", `{"quantity":1}`, 404, httpapi.CodeNotFound, "no record with petId 424242", 0},
		{"largest int64 pet", "/v1/inventory/9223372036854775807", "", `{"quantity":1}`, 404, httpapi.CodeNotFound, "9223372036854775807", 0},
		{"negative pet", "/v1/inventory/-3", "", `{"quantity":1}`, 404, httpapi.CodeNotFound, "-3", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			before := listed(t, s)
			got := serve(t, s, req{method: "PATCH", path: tt.path, contentType: tt.contentType, body: tt.body})
			if got.status != tt.status {
				t.Fatalf("status = %d; want %d: %s", got.status, tt.status, got.body)
			}
			if tt.status != 200 {
				if got.Code != tt.code || !strings.Contains(got.Message.(string), tt.message) {
					t.Errorf("error = %s; want code %s and a message with %q", got.body, tt.code, tt.message)
				}
				if after := listed(t, s); !bytes.Equal(before, after) {
					t.Error("a rejected update changed the store")
				}
				return
			}
			var it item
			json.Unmarshal(got.body, &it)
			orig := testItems(t)[2]
			if it.PetID != 3 || it.Quantity != tt.quantity || it.Status != orig.Status {
				t.Errorf("response = %+v; want petId 3, quantity %d, status %s (unchanged)", it, tt.quantity, orig.Status)
			}
			if stored := stored(t, s, 3); stored != it {
				t.Errorf("stored %+v; response said %+v", stored, it)
			}
		})
	}
}

func TestBodyTooLarge(t *testing.T) {
	s := newServer(t)
	big := `{"quantity":1,"pad":"` + strings.Repeat("x", 2<<20) + `"}`
	got := serve(t, s, req{method: "PATCH", path: "/v1/inventory/3", body: big})
	if got.status != 400 || got.Code != httpapi.CodePayloadTooLarge {
		t.Errorf("Content-Length 2 MiB: %d %v; want 400 %s", got.status, got.Code, httpapi.CodePayloadTooLarge)
	}
	// Without Content-Length (chunked), the limit still holds.
	hr := httptest.NewRequest("PATCH", "/v1/inventory/3", io.MultiReader(strings.NewReader(big)))
	hr.ContentLength = -1
	hr.Header.Set("Authorization", "Bearer "+testKey)
	hr.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, hr)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), httpapi.CodePayloadTooLarge) {
		t.Errorf("chunked 2 MiB: %d %s; want 400 %s", rec.Code, rec.Body, httpapi.CodePayloadTooLarge)
	}
}

func TestWritesAreKept(t *testing.T) {
	s := newServer(t)
	for range 2 { // the same PATCH twice gives the same answer
		got := serve(t, s, req{method: "PATCH", path: "/v1/inventory/5", body: `{"quantity": 77}`})
		if got.status != 200 || !strings.Contains(string(got.body), `"quantity":77`) {
			t.Fatalf("PATCH: %d %s", got.status, got.body)
		}
	}
	list := serve(t, s, req{method: "GET", path: "/v1/inventory"})
	var items []item
	json.Unmarshal(list.body, &items)
	want := testItems(t)
	for i, it := range items {
		w := want[i]
		if w.PetID == 5 {
			w.Quantity = 77
		}
		if it != w {
			t.Errorf("after PATCH of pet 5, list has %+v; want %+v", it, w)
		}
	}
	if got := serve(t, s, req{method: "POST", path: "/__admin/reset"}); got.status != 204 {
		t.Fatalf("reset: %d %s", got.status, got.body)
	}
	if it := stored(t, s, 5); it != want[4] {
		t.Errorf("after reset pet 5 = %+v; want %+v", it, want[4])
	}
}

func TestRouting(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		r                 req
		status            int
		code, allow, depr string
	}{
		{req{method: "GET", path: "/v1/nope"}, 404, httpapi.CodeNotFound, "", ""},
		{req{method: "GET", path: "/nope", auth: "-"}, 404, httpapi.CodeNotFound, "", ""},
		{req{method: "GET", path: "/v1/inventory/"}, 404, httpapi.CodeNotFound, "", ""},
		{req{method: "GET", path: "//v1/inventory"}, 404, httpapi.CodeNotFound, "", ""},
		{req{method: "GET", path: "/v1/./inventory"}, 404, httpapi.CodeNotFound, "", ""},
		{req{method: "PATCH", path: "/v1/inventory/1/x", body: `{"quantity":1}`}, 404, httpapi.CodeNotFound, "", ""},
		{req{method: "DELETE", path: "/v1/inventory"}, 405, httpapi.CodeMethodNotAllowed, "GET, HEAD", ""},
		{req{method: "POST", path: "/v1/inventory"}, 405, httpapi.CodeMethodNotAllowed, "GET, HEAD", ""},
		{req{method: "HEAD", path: "/v1/inventory"}, 200, "", "", ""},
		{req{method: "GET", path: "/v1"}, 404, httpapi.CodeNotFound, "", ""},
		{req{method: "GET", path: "/v1", auth: "-"}, 401, httpapi.CodeUnauthorized, "", ""},
		{req{method: "GET", path: "/v1/inventory/1"}, 405, httpapi.CodeMethodNotAllowed, "PATCH", ""},
		{req{method: "PUT", path: "/v1/inventory/1"}, 405, httpapi.CodeMethodNotAllowed, "PATCH", ""},
		{req{method: "GET", path: "/__admin/reset"}, 405, httpapi.CodeMethodNotAllowed, "POST", ""},
		{req{method: "GET", path: "/v1/pets/1"}, 501, httpapi.CodeNotImplemented, "", "true"},
		{req{method: "GET", path: "/v1/pets/abc"}, 400, httpapi.CodeInvalidParameter, "", "true"},
		{req{method: "GET", path: "/v1/store/orders"}, 501, httpapi.CodeNotImplemented, "", ""},
		{req{method: "GET", path: "/healthz", auth: "-"}, 200, "", "", ""},
		{req{method: "GET", path: "/openapi.yaml", auth: "-"}, 200, "", "", ""},
		{req{method: "POST", path: "/__admin/reset", auth: "-"}, 401, httpapi.CodeUnauthorized, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.r.method+" "+tt.r.path, func(t *testing.T) {
			got := serve(t, s, tt.r)
			if got.status != tt.status {
				t.Fatalf("status = %d; want %d: %s", got.status, tt.status, got.body)
			}
			if tt.code != "" && got.Code != tt.code {
				t.Errorf("code = %v; want %s", got.Code, tt.code)
			}
			if h := got.header.Get("Allow"); h != tt.allow {
				t.Errorf("Allow = %q; want %q", h, tt.allow)
			}
			if h := got.header.Get("Deprecation"); h != tt.depr {
				t.Errorf("Deprecation = %q; want %q", h, tt.depr)
			}
		})
	}
	// /openapi.yaml is the loaded document with the mock first in servers,
	// so a tool pointed at the running mock calls the mock.
	served := serve(t, s, req{method: "GET", path: "/openapi.yaml", auth: "-"})
	c, err := spec.Load(served.body)
	if err != nil {
		t.Fatalf("/openapi.yaml is not a valid document: %v", err)
	}
	if got := c.Model.Servers[0].URL; got != "http://mock.test/v1" {
		t.Errorf("first server = %s; want http://mock.test/v1", got)
	}
	if len(c.Model.Servers) != len(s.contract.Model.Servers)+1 || len(c.Operations) != len(s.contract.Operations) {
		t.Errorf("/openapi.yaml lost parts of the document: %d servers, %d operations", len(c.Model.Servers), len(c.Operations))
	}
}

func TestAdminKey(t *testing.T) {
	s := newServer(t, func(c *Config) { c.AdminKey = "admin-secret" })
	if got := serve(t, s, req{method: "POST", path: "/__admin/reset"}); got.status != 401 {
		t.Errorf("reset with an API key: %d; want 401 when an admin key is set", got.status)
	}
	if got := serve(t, s, req{method: "POST", path: "/__admin/reset", auth: "Bearer admin-secret"}); got.status != 204 {
		t.Errorf("reset with the admin key: %d; want 204", got.status)
	}
	if got := serve(t, s, req{method: "GET", path: "/v1/inventory", auth: "Bearer admin-secret"}); got.status != 401 {
		t.Errorf("the admin key on the API: %d; want 401", got.status)
	}
}

func TestCORS(t *testing.T) {
	tests := []struct {
		name       string
		origins    []string
		r          req
		status     int
		allowOrig  string
		allowCreds string
	}{
		{"preflight, any origin", nil, req{method: "OPTIONS", path: "/v1/inventory/3", auth: "-", header: http.Header{"Origin": {"http://localhost:3000"}, "Access-Control-Request-Method": {"PATCH"}, "Access-Control-Request-Headers": {"authorization,content-type"}}}, 204, "*", ""},
		{"401 readable by the page", nil, req{method: "GET", path: "/v1/inventory", auth: "-", header: http.Header{"Origin": {"http://localhost:3000"}}}, 401, "*", ""},
		{"allowed origin", []string{"http://app.test"}, req{method: "GET", path: "/v1/inventory", header: http.Header{"Origin": {"http://app.test"}}}, 200, "http://app.test", "true"},
		{"other origin", []string{"http://app.test"}, req{method: "GET", path: "/v1/inventory", header: http.Header{"Origin": {"http://evil.test"}}}, 200, "", ""},
		{"preflight, allowed origin", []string{"http://app.test"}, req{method: "OPTIONS", path: "/v1/inventory", auth: "-", header: http.Header{"Origin": {"http://app.test"}, "Access-Control-Request-Method": {"GET"}}}, 204, "http://app.test", "true"},
		{"preflight, other origin", []string{"http://app.test"}, req{method: "OPTIONS", path: "/v1/inventory", auth: "-", header: http.Header{"Origin": {"http://evil.test"}, "Access-Control-Request-Method": {"GET"}}}, 204, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(c *Config) { c.CORSOrigins = tt.origins })
			got := serve(t, s, tt.r)
			if got.status != tt.status {
				t.Fatalf("status = %d; want %d", got.status, tt.status)
			}
			if h := got.header.Get("Access-Control-Allow-Origin"); h != tt.allowOrig {
				t.Errorf("Access-Control-Allow-Origin = %q; want %q", h, tt.allowOrig)
			}
			if h := got.header.Get("Access-Control-Allow-Credentials"); h != tt.allowCreds {
				t.Errorf("Access-Control-Allow-Credentials = %q; want %q", h, tt.allowCreds)
			}
			if tt.status == 204 && tt.allowOrig != "" {
				if h := got.header.Get("Access-Control-Allow-Headers"); !strings.Contains(h, "Authorization") {
					t.Errorf("Access-Control-Allow-Headers = %q; want Authorization in it", h)
				}
				if h := got.header.Get("Access-Control-Allow-Methods"); !strings.Contains(h, "PATCH") {
					t.Errorf("Access-Control-Allow-Methods = %q; want PATCH in it", h)
				}
			}
		})
	}
}

func TestAccessLogHidesKeys(t *testing.T) {
	var logs bytes.Buffer
	s := newServer(t, func(c *Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	serve(t, s, req{method: "GET", path: "/v1/inventory"})
	serve(t, s, req{method: "GET", path: "/v1/inventory?api_key=" + testKey, auth: "-"})
	out := logs.String()
	if strings.Contains(out, testKey) {
		t.Errorf("the log holds the API key:\n%s", out)
	}
	for _, want := range []string{`"method":"GET"`, `"path":"/v1/inventory"`, `"status":200`, `"status":401`, `"duration"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	// The zero Config is the mock on its embedded defaults.
	s, err := New(Config{})
	if err != nil {
		t.Fatalf("New(Config{}) = %v", err)
	}
	if got := serve(t, s, req{method: "GET", path: "/v1/inventory", auth: "Bearer " + httpapi.DevKey}); got.status != 200 || !strings.Contains(string(got.body), `"petId":64`) {
		t.Errorf("the zero Config serves %d %s; want the embedded fixtures to the development key", got.status, got.body)
	}
	doc := strings.Replace(string(spec.Document), "/store/orders:", "/files/{name}.json:", 1)
	c, err := spec.Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Contract: c}); err == nil || !strings.Contains(err.Error(), "/files/{name}.json") {
		t.Errorf("New with an unservable path: error = %v; want one naming the path", err)
	}
}

// TestGzip checks that a large list goes gzip-compressed to a client that
// accepts it, and plain to one that does not, the same records either way.
func TestGzip(t *testing.T) {
	records, err := fixtures.Generate(shape(t), 2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, func(c *Config) { c.Records = records })
	srv := httptest.NewServer(s)
	defer srv.Close()
	get := func(encoding string) (*http.Response, []byte) {
		r, _ := http.NewRequest("GET", srv.URL+"/v1/inventory", nil)
		r.Header.Set("Authorization", "Bearer "+testKey)
		if encoding != "" {
			r.Header.Set("Accept-Encoding", encoding)
		}
		resp, err := http.DefaultTransport.RoundTrip(r) // no transparent decompression
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	plainResp, plain := get("")
	if plainResp.Header.Get("Content-Encoding") != "" || plainResp.Header.Get("Vary") != "Accept-Encoding" {
		t.Errorf("without Accept-Encoding: %v", plainResp.Header)
	}
	for _, enc := range []string{"gzip", "br, gzip;q=0.5", "GZIP", "*"} {
		resp, body := get(enc)
		if resp.Header.Get("Content-Encoding") != "gzip" || resp.ContentLength != int64(len(body)) || len(body) >= len(plain)/2 {
			t.Errorf("Accept-Encoding %q: %v, %d bytes of %d", enc, resp.Header, len(body), len(plain))
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("Accept-Encoding %q: the gzip body does not read back to the list (%v)", enc, err)
		}
	}
	if resp, _ := get("gzip;q=0"); resp.Header.Get("Content-Encoding") != "" {
		t.Error("gzip;q=0 got gzip")
	}
	// A small list stays plain.
	small := newServer(t)
	got := serve(t, small, req{method: "GET", path: "/v1/inventory", header: http.Header{"Accept-Encoding": {"gzip"}}})
	if got.header.Get("Content-Encoding") != "" {
		t.Error("64 pets were compressed")
	}
}

// TestIsCleanPath checks the one-pass check against path.Clean, which it
// stands in for: a path is clean where Clean leaves it as it is, but for
// a trailing slash.
func TestIsCleanPath(t *testing.T) {
	for _, p := range []string{"", "/", "//", "v1", "/v1", "/v1/", "/v1//", "//v1", "/v1/./x", "/v1/../x", "/v1/..", "/v1/.", "/.", "/..", "/v1/inventory/3",
		"/v1/inventory/.3", "/v1/inventory/..3", "/v1/inventory/3.", "/a/b/c/", "/a//b", "/./", "/../"} {
		want := p != "" && p[0] == '/' && (p == "/" || path.Clean(p) == strings.TrimSuffix(p, "/"))
		if got := isCleanPath(p); got != want {
			t.Errorf("isCleanPath(%q) = %v; want %v, as path.Clean has it", p, got, want)
		}
	}
}

// pathStore records, on each Update, the files of the mock's own code the
// call passed through.
type pathStore struct {
	store.Store
	files map[string]bool
}

func (p *pathStore) Update(ctx context.Context, session string, id int64, change func(fixtures.Record) (fixtures.Record, error)) (fixtures.Record, error) {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "petstore/inventory-kit/") && !strings.HasSuffix(f.File, "_test.go") {
			p.files[filepath.Base(filepath.Dir(f.File))+"/"+filepath.Base(f.File)] = true
		}
		if !more {
			break
		}
	}
	return p.Store.Update(ctx, session, id, change)
}

// TestUpdatePathFiles: a PATCH passes at most 6 files of the mock's own
// on its way to the store, each once, since the steps of its path run one
// after the other (mockserver/README.md, The request chain), also with
// every step in use: a session, a rate limit, CORS, the journal and
// metrics. With the store's own file and the listener's
// (cmd/inventory-mock/conns.go), 8.
func TestUpdatePathFiles(t *testing.T) {
	ps := &pathStore{Store: store.NewMemory(testRecords(t), store.Options{}), files: map[string]bool{}}
	s := newServer(t, func(c *Config) {
		c.Store, c.JournalSize, c.Metrics = ps, 10, metrics.New()
		c.RateLimit = RateLimit{Rate: "1000/s"}
		c.CORSOrigins = []string{"http://localhost:3000"}
	})
	h := http.Header{"Origin": {"http://localhost:3000"}, SessionHeader: {"files"}}
	if got := serve(t, s, req{method: "PATCH", path: "/v1/inventory/1", contentType: "application/json", body: `{"quantity":3}`, header: h}); got.status != 200 {
		t.Fatalf("PATCH = %d %s; want 200", got.status, got.body)
	}
	files := slices.Sorted(maps.Keys(ps.files))
	t.Logf("files passed: %v", files)
	if len(files) > 6 {
		t.Errorf("a PATCH passed %d files on its way to the store: %v; want at most 6", len(files), files)
	}
}
