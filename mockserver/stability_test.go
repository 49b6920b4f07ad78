package mockserver

import (
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/spec"
)

// TestStabilityHeader checks that every answer of an operation the
// contract labels with x-stability carries the label in X-Stability, its
// errors too, and that the label is the one the loaded document gives.
func TestStabilityHeader(t *testing.T) {
	beta := strings.Replace(string(spec.Document), "      operationId: listInventory\n", "      operationId: listInventory\n      x-stability: beta\n", 1)
	c, err := spec.Load([]byte(beta))
	if err != nil {
		t.Fatal(err)
	}
	embedded := newServer(t)
	labelled := newServer(t, func(cfg *Config) { cfg.Contract = c })
	tests := []struct {
		name string
		s    *Server
		r    req
		want string
	}{
		{"the update", embedded, patch("/v1/inventory/3", `{"quantity": 5}`), "experimental"},
		{"a refused update", embedded, patch("/v1/inventory/3", `{"quantity": -5}`), "experimental"},
		{"an update of no pet", embedded, patch("/v1/inventory/424242", `{"quantity": 5}`), "experimental"},
		{"the list, unlabelled", embedded, get("/v1/inventory"), ""},
		{"the list, labelled beta", labelled, get("/v1/inventory"), "beta"},
		{"the update, beside it", labelled, patch("/v1/inventory/3", `{"quantity": 5}`), "experimental"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := serve(t, tt.s, tt.r)
			if h := got.header.Values(StabilityHeader); strings.Join(h, ",") != tt.want {
				t.Errorf("%s: X-Stability = %q; want %q", got.body, h, tt.want)
			}
		})
	}
}
