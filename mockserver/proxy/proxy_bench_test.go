package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
)

// BenchmarkForward compares the validating proxy with a bare
// httputil.ReverseProxy in front of the same mock, the client, both
// servers and the mock in one process: their ratio is the cost of the
// checks, the findings and the access log over forwarding alone.
func BenchmarkForward(b *testing.B) {
	mock := httptest.NewServer(newMock(b))
	defer mock.Close()
	u, _ := url.Parse(mock.URL)
	bare := httputil.NewSingleHostReverseProxy(u)
	bare.Transport = &http.Transport{MaxIdleConnsPerHost: 256}
	p, err := New(Config{Contract: mustContract(b), Upstream: mock.URL + "/v1"})
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{{"bare", bare}, {"validating", p}} {
		front := httptest.NewServer(tc.h)
		for _, req := range []struct{ name, method, path, body string }{
			{"list", "GET", "/v1/inventory", ""},
			{"update", "PATCH", "/v1/inventory/3", `{"quantity":5}`},
		} {
			b.Run(tc.name+"/"+req.name, func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						r, _ := http.NewRequest(req.method, front.URL+req.path, strings.NewReader(req.body))
						r.Header.Set("Authorization", "Bearer "+testKey)
						if req.body != "" {
							r.Header.Set("Content-Type", "application/json")
						}
						resp, err := client.Do(r)
						if err != nil {
							b.Fatal(err)
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 {
							b.Fatal(resp.Status)
						}
					}
				})
			})
		}
		front.Close()
	}
}
