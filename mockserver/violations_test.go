package mockserver

import "testing"

// TestNoViolations checks that the mock answers the proxy's endpoints 404,
// behind the admin key like every admin endpoint.
func TestNoViolations(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct {
		r      req
		status int
	}{
		{req{method: "GET", path: "/__admin/violations"}, 404},
		{req{method: "DELETE", path: "/__admin/violations"}, 404},
		{req{method: "GET", path: "/__admin/violations", auth: "-"}, 401},
	} {
		if got := serve(t, s, tc.r); got.status != tc.status {
			t.Errorf("%s %s: %d; want %d", tc.r.method, tc.r.path, got.status, tc.status)
		}
	}
}
