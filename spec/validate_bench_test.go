package spec

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
)

// BenchmarkValidateRequest compares the two ways of validating the
// requests the mock serves most, a list, an update with a small body and
// an update with an invalid one: "plan" is what the mock runs on every
// request (the operation's checks compiled at load time, CheckRequest), and
// "validator" is libopenapi-validator's whole-request validation of the same
// request, which finds the route and looks up each schema again per call.
// Compare the pairs: their ratio, not their absolute times, is the figure.
func BenchmarkValidateRequest(b *testing.B) {
	c, err := Shared()
	if err != nil {
		b.Fatal(err)
	}
	full := validator.NewValidatorFromV3Model(c.Model, config.WithRegexCache(&sync.Map{}), config.WithoutSecurityValidation())
	list, update := c.Operation("listInventory"), c.Operation("updateInventory")
	cases := []struct {
		name, method, path, body string
		op                       *Operation
		valid                    bool
	}{
		{"list", "GET", "/v1/inventory", "", list, true},
		{"update", "PATCH", "/v1/inventory/3", `{"quantity":12}`, update, true},
		{"update-invalid", "PATCH", "/v1/inventory/3", `{"quantity":"many"}`, update, false},
	}
	for _, tc := range cases {
		body := strings.NewReader(tc.body)
		r := httptest.NewRequest(tc.method, "http://mock.test"+tc.path, body)
		r.Header.Set("Authorization", "Bearer k")
		if tc.body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		r.SetPathValue("petId", "3")
		raw := []byte(tc.body)
		b.Run(tc.name+"/plan", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ps := tc.op.CheckRequest(r, r.PathValue, raw); (ps == nil) != tc.valid {
					b.Fatal(ps)
				}
			}
		})
		b.Run(tc.name+"/validator", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				body.Seek(0, io.SeekStart)
				r.Body = io.NopCloser(body)
				if ok, errs := full.ValidateHttpRequestSyncWithPathItem(r, tc.op.PathItem, tc.op.Path); ok != tc.valid {
					b.Fatal(errs)
				}
			}
		})
	}
}

// BenchmarkValidateResponse is the check the conformance suite and the
// proxy run on each answer: a list of 64 pets and an update's record.
func BenchmarkValidateResponse(b *testing.B) {
	c, err := Shared()
	if err != nil {
		b.Fatal(err)
	}
	var items []string
	for i := range 64 {
		items = append(items, `{"petId":`+strings.Repeat("1", 1+i%5)+`,"quantity":12,"status":"available"}`)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		name string
		op   *Operation
		body string
	}{
		{"list-64", c.Operation("listInventory"), "[" + strings.Join(items, ",") + "]"},
		{"update", c.Operation("updateInventory"), items[0]},
	} {
		body := []byte(tc.body)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ps := tc.op.CheckResponse(200, h, body); ps != nil {
					b.Fatal(ps)
				}
			}
		})
	}
}
