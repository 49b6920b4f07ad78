package mockserver

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// NormalizeOrigin returns an allowed origin in the form browsers send in
// the Origin header (RFC 6454): scheme://host[:port], lower case, without
// a path and without the scheme's default port (http://localhost:80 is
// sent as http://localhost). "*" stays "*". What could never match an
// Origin header is refused, with what to give instead.
func NormalizeOrigin(origin string) (string, error) {
	s := strings.TrimSpace(origin)
	switch s {
	case "":
		return "", fmt.Errorf("an empty origin; give one such as http://localhost:3000, or leave the setting out to allow any origin")
	case "*":
		return s, nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("%q is not an origin; want scheme://host[:port], such as http://localhost:3000", s)
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil:
		return "", fmt.Errorf("%q: an origin is only scheme://host[:port], without a path, query or user", s)
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if port := u.Port(); port == "80" && scheme == "http" || port == "443" && scheme == "https" {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return scheme + "://" + host, nil
}

// cors lets browser pages call the mock. With no origins configured any
// origin may call it without credentials; otherwise only the listed origins,
// with credentials. Preflight requests are answered here, before auth,
// because browsers send them without the Authorization header. Configured
// origins are compared in the form browsers send (NormalizeOrigin).
func cors(origins []string) func(http.Handler) http.Handler {
	origins = slices.Clone(origins)
	for i, o := range origins {
		if n, err := NormalizeOrigin(o); err == nil {
			origins[i] = n
		}
	}
	anyOrigin := len(origins) == 0 || slices.Contains(origins, "*")
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			origin := r.Header.Get("Origin")
			if origin == "" {
				next.ServeHTTP(w, r)
				return
			}
			h := w.Header()
			h.Add("Vary", "Origin")
			preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
			switch {
			case anyOrigin:
				h.Set("Access-Control-Allow-Origin", "*")
			case slices.Contains(origins, origin):
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Credentials", "true")
			case preflight:
				// Answered here, before auth (a preflight carries no key), and
				// without CORS headers: the browser does not send the request.
				w.WriteHeader(http.StatusNoContent)
				return
			default:
				next.ServeHTTP(w, r) // no CORS headers: the browser blocks the page
				return
			}
			if preflight {
				h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
				h.Set("Access-Control-Allow-Methods", "GET, HEAD, PATCH, POST, PUT, DELETE, OPTIONS")
				h.Set("Access-Control-Allow-Headers", allowHeaders(r.Header.Get("Access-Control-Request-Headers")))
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
			h.Set("Access-Control-Expose-Headers", "WWW-Authenticate, Deprecation, Allow, X-Stability, X-Request-Id")
			next.ServeHTTP(w, r)
		})

	}
}

// allowHeaders returns the headers a preflight may use: Authorization,
// Content-Type and the mock's own controls, plus whatever else the page
// asked for (the mock ignores
// headers it does not know, so allowing them is harmless).
func allowHeaders(requested string) string {
	allowed := []string{"Authorization", "Content-Type", "Prefer", SessionHeader}
	for _, h := range strings.Split(requested, ",") {
		h = strings.TrimSpace(h)
		if h != "" && !slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, h) }) {
			allowed = append(allowed, h)
		}
	}
	return strings.Join(allowed, ", ")
}
