package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/metrics"

	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	rscors "github.com/rs/cors"
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

// A corsPolicy says which browser pages may call the mock: the contract's
// operations (and /healthz, /openapi.yaml) from any origin, without
// credentials, where no origin is listed, else from the listed origins,
// with credentials (so a page's fetch with credentials: 'include' sends
// the mock-session cookie); the admin API under adminBase only from the
// pages of adminOrigins, with credentials, besides its own dashboard (same
// origin, which needs no CORS header). Origins are compared in the form
// browsers send (NormalizeOrigin).
type corsPolicy struct {
	origins      []string
	adminOrigins []string
	adminBase    string
	refusals     *httpapi.OriginRefusals // logs each refused origin once; nil: none
}

// corsMethods are the methods a preflight allows.
var corsMethods = []string{"GET", "HEAD", "PATCH", "POST", "PUT", "DELETE", "OPTIONS"}

// cors lets browser pages call the mock as p says, through
// github.com/rs/cors: the contract's operations from origins, the admin
// API from adminOrigins only. Preflight requests are answered here, before
// auth, because browsers send them without the Authorization header. A
// page of an origin refused gets no CORS header (its browser then keeps
// the answer from it, or does not send the request) and is logged once.
func cors(p corsPolicy) httpapi.Step {
	normalize := func(list []string) []string {
		list = slices.Clone(list)
		for i, o := range list {
			if n, err := NormalizeOrigin(o); err == nil {
				list[i] = n
			}
		}
		return list
	}
	newCORS := func(allowed []string, anyOrigin bool, what, flag string) *rscors.Cors {
		opts := rscors.Options{
			AllowedMethods:     corsMethods,
			AllowedHeaders:     []string{"*"}, // the mock ignores headers it does not know
			ExposedHeaders:     []string{"WWW-Authenticate", "Deprecation", "Allow", "X-Stability", "X-Request-Id"},
			MaxAge:             600,
			OptionsPassthrough: true, // preflightDone completes and answers it
		}
		if anyOrigin {
			opts.AllowedOrigins = []string{"*"}
			return rscors.New(opts)
		}
		opts.AllowCredentials = true
		opts.AllowOriginVaryRequestFunc = func(r *http.Request, origin string) (bool, []string) {
			if slices.Contains(allowed, origin) {
				return true, nil
			}
			if !sameOrigin(origin, r.Host) {
				p.refusals.Refused(origin, what, flag)
			}
			return false, nil
		}
		return rscors.New(opts)
	}
	origins := normalize(p.origins)
	api := newCORS(origins, len(origins) == 0 || slices.Contains(origins, "*"), "the API", "--cors-origin")
	admin := newCORS(normalize(p.adminOrigins), false, "the admin API", "--admin-origin")
	return func(w http.ResponseWriter, r *http.Request) *http.Request {
		c := api
		switch {
		case r.Header.Get("Origin") == "":
			return r
		case httpapi.Under(r.URL.Path, p.adminBase) || r.URL.Path == metrics.Path: // the metrics tell what was served: the admin API's rules
			c = admin
		}
		var next *http.Request
		c.ServeHTTP(w, r, func(w http.ResponseWriter, r *http.Request) { next = preflightDone(w, r) })
		return next
	}
}

// preflightDone answers a preflight rs/cors has passed on: for an allowed
// origin, with every method and header the mock takes (rs/cors names only
// those asked for), then 204. It hands other requests on.
func preflightDone(w http.ResponseWriter, r *http.Request) *http.Request {
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return r
	}
	h := w.Header()
	if h.Get("Access-Control-Allow-Origin") != "" {
		h.Set("Access-Control-Allow-Methods", strings.Join(corsMethods, ", "))
		h.Set("Access-Control-Allow-Headers", allowHeaders(r.Header.Get("Access-Control-Request-Headers")))
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sameOrigin reports whether an Origin header names the host the request
// was sent to: the mock's own page (the dashboard), which needs no CORS.
func sameOrigin(origin, host string) bool {
	_, rest, ok := strings.Cut(origin, "://")
	return ok && host != "" && strings.EqualFold(rest, host)
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
