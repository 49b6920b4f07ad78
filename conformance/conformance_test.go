package conformance

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec"
)

// testKey is the key the in-process mock accepts. The leak test looks for
// it in every output.
const testKey = "ck-test-5f1d2e9a7b3c4d6e"

// brokenEnv names, in a child process, the broken server to run against.
const brokenEnv = "CONFORMANCE_BROKEN_SERVER"

// newMock returns the in-process mock with the default fixtures.
func newMock(tb testing.TB) http.Handler {
	c, err := spec.Shared()
	if err != nil {
		tb.Fatal(err)
	}
	sh, err := fixtures.NewShape(c)
	if err != nil {
		tb.Fatal(err)
	}
	records, _, err := fixtures.Default(sh)
	if err != nil {
		tb.Fatal(err)
	}
	h, err := mockserver.New(mockserver.Config{Contract: c, Records: records, APIKeys: []string{testKey}})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// TestConformance runs the whole suite, mutating checks included, against
// the in-process mock, or against the broken server named by
// CONFORMANCE_BROKEN_SERVER (set by TestBrokenServers in a child process).
func TestConformance(t *testing.T) {
	h := newMock(t)
	if name := os.Getenv(brokenEnv); name != "" && name != correctServer {
		b, ok := brokenServerNamed(name)
		if !ok {
			t.Fatalf("no broken server %q", name)
		}
		h = b.wrap(h)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	tg, err := Prepare(context.Background(), Config{BaseURL: srv.URL + "/v1", APIKey: testKey, AllowMutations: true})
	if err != nil {
		t.Fatal(err)
	}
	Use(tg)
	RunSpecs(t, SuiteName)
}
