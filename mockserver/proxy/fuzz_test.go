package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzProxy sends arbitrary requests through the proxy in front of the
// mock: whatever a client sends, no answer is a 5xx but the mock's own 501
// for the operations without a shape, and the proxy keeps serving.
func FuzzProxy(f *testing.F) {
	for _, s := range [][5]string{
		{"GET", "/v1/inventory", "", "", "Bearer " + testKey},
		{"PATCH", "/v1/inventory/3", "application/json", `{"quantity":5}`, "Bearer " + testKey},
		{"PATCH", "/v1/inventory/3", "application/json", `{"quantity":`, ""},
		{"PATCH", "/v1/inventory/9223372036854775808", "text/plain", `{}`, "Basic x"},
		{"DELETE", "/v1/inventory?x=%zz;y", "", "", "Bearer"},
		{"GET", "/v1/pets/1", "", "", "Bearer " + testKey},
		{"OPTIONS", "/v1/inventory", "", "", ""},
		{"GET", "/v1/../__admin/violations", "", "", ""},
		{"PATCH", "/v1/inventory/3", "application/json; charset=utf-16", "\xff\xfe{", "Bearer " + testKey},
		{"GET", "/elsewhere", "", "", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	mock := httptest.NewServer(newMock(f))
	defer mock.Close()
	addr, _ := startProxy(f, mock.URL+"/v1", Config{})
	f.Fuzz(func(t *testing.T, method, path, contentType, body, auth string) {
		req, err := http.NewRequest(method, addr+path, strings.NewReader(body))
		if err != nil || !strings.HasPrefix(path, "/") {
			return // not a request a client can send
		}
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return // refused by the client or the server's HTTP parser
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented {
			t.Errorf("%s %q: %d %s", method, path, resp.StatusCode, b)
		}
	})
}
