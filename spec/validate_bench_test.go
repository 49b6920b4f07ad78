package spec

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkValidateRequest is the contract's validation of the two requests
// the mock serves most: a list, and an update with a small body. The mock
// runs it on every request (mockserver/operation.go).
func BenchmarkValidateRequest(b *testing.B) {
	c, err := Shared()
	if err != nil {
		b.Fatal(err)
	}
	list, update := c.Operation("listInventory"), c.Operation("updateInventory")
	b.Run("list", func(b *testing.B) {
		r := httptest.NewRequest("GET", "http://mock.test/v1/inventory", nil)
		r.Header.Set("Authorization", "Bearer k")
		b.ReportAllocs()
		for b.Loop() {
			if ps := c.ValidateRequest(r, list); ps != nil {
				b.Fatal(ps)
			}
		}
	})
	b.Run("update", func(b *testing.B) {
		body := strings.NewReader(`{"quantity":12}`)
		r := httptest.NewRequest("PATCH", "http://mock.test/v1/inventory/3", body)
		r.Header.Set("Authorization", "Bearer k")
		r.Header.Set("Content-Type", "application/json")
		r.SetPathValue("petId", "3")
		b.ReportAllocs()
		for b.Loop() {
			body.Seek(0, 0)
			r.Body = readCloser{body}
			if ps := c.ValidateRequest(r, update); ps != nil {
				b.Fatal(ps)
			}
		}
	})
	b.Run("update-invalid", func(b *testing.B) {
		body := strings.NewReader(`{"quantity":"many"}`)
		r := httptest.NewRequest("PATCH", "http://mock.test/v1/inventory/3", body)
		r.Header.Set("Authorization", "Bearer k")
		r.Header.Set("Content-Type", "application/json")
		r.SetPathValue("petId", "3")
		b.ReportAllocs()
		for b.Loop() {
			body.Seek(0, 0)
			r.Body = readCloser{body}
			if ps := c.ValidateRequest(r, update); ps == nil {
				b.Fatal("no problems with a string quantity")
			}
		}
	})
}

// A readCloser lets a benchmark rewind one body for every request.
type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }
