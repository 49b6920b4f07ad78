package mockserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/petstore/inventory-kit/spec"
)

// kin-openapi is a second, independent validator: every answer the tests
// see to an operation of the contract is checked by it too (in serve), so
// a mistake shared by the mock and our own spec package cannot hide.

var (
	kinMu      sync.Mutex // guards kinRouters
	kinRouters = map[*spec.Contract]routers.Router{}
)

// kinRouter loads the contract's document with kin-openapi, its servers
// replaced by the test host.
func kinRouter(t testing.TB, c *spec.Contract) routers.Router {
	t.Helper()
	kinMu.Lock()
	defer kinMu.Unlock()
	if r, ok := kinRouters[c]; ok {
		return r
	}
	doc, err := openapi3.NewLoader().LoadFromData(c.Raw)
	if err != nil {
		t.Fatalf("kin-openapi cannot load the document: %v", err)
	}
	// The document's examples are the mock's to judge (a stale one is
	// warned about and never sent); kin checks the answers.
	if err := doc.Validate(context.Background(), openapi3.DisableExamplesValidation()); err != nil {
		t.Fatalf("kin-openapi finds the document invalid: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: "http://mock.test" + c.BasePath}}
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	kinRouters[c] = r
	return r
}

// kinCheck validates an answer with kin-openapi: its status must be
// documented, and its body valid against the document.
func kinCheck(t *testing.T, c *spec.Contract, r *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	route, params, err := kinRouter(t, c).FindRoute(r)
	if err != nil {
		return // not an operation of the contract: nothing to check
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: r, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true},
		},
		Status: status, Header: header, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s: kin-openapi: answer %d breaks the contract: %v\n%s", r.Method, r.URL.Path, status, err, body)
	}
}
