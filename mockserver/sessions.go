package mockserver

import (
	"net/http"
	"regexp"
	"time"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/store"
)

// The three ways a request names its session: its own copy of the data,
// made on first use from the fixtures, with chaos rules and a rate limit
// of its own if the admin API gave it some. A request that names none
// uses the default session (or, under Config.RequireSession, is refused).
const (
	// SessionQuery is the query parameter a link a test opens names its
	// session by. It is taken off the request before the contract's checks,
	// which know no such parameter.
	SessionQuery = "mock-session"
	// SessionHeader is the header code that calls the API names its
	// session by.
	SessionHeader = "X-Mock-Session"
	// SessionCookie is the cookie a browser test sets once for its page, so
	// that every request the page makes (fetches with credentials, links,
	// forms, images) names the test's session.
	SessionCookie = "mock-session"
)

// sessionName is what a session may be called: short, and safe in a log
// line, a URL and a Redis key.
var sessionName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// sessions reads the session a request names and puts it in the request's
// Entry ("" for the default session), for the rate limit, the operation
// and the journal. In order of precedence, the most specific first: the
// mock-session query parameter (one link), the X-Mock-Session header (one
// call the code makes), the mock-session cookie (every request of the
// page). A source that is present but holds no valid name is a 400, never
// passed over for the next. The query parameter is taken off the request.
// With require, a request that names no session is a 400 that says the
// three ways.
func (s *Server) sessions(require bool) httpapi.Step {
	return func(w http.ResponseWriter, r *http.Request) *http.Request {
		name, named, r, ok := s.sessionOf(w, r)
		if !ok {
			return nil
		}
		if !named && require {
			httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeMissingSession,
				"this mock runs with --require-session: name a session with the "+SessionCookie+" cookie, the "+SessionHeader+" header or the "+SessionQuery+" query parameter")
			return nil
		}
		if name != store.DefaultSession {
			httpapi.EntryOf(r).Session = name
		}
		return r
	}
}

// sessionOf returns the session r names, whether it names one, and r
// without the mock-session query parameter; or answers 400 and reports
// false. It allocates only for a query parameter or a cookie.
func (s *Server) sessionOf(w http.ResponseWriter, r *http.Request) (string, bool, *http.Request, bool) {
	if r.URL.RawQuery != "" {
		q := r.URL.Query()
		if v, found := q[SessionQuery]; found {
			q.Del(SessionQuery)
			u := *r.URL
			u.RawQuery = q.Encode()
			r2 := r.WithContext(r.Context())
			r2.URL, r2.RequestURI = &u, u.RequestURI()
			name, ok := s.checkSession(w, r2, v, SessionQuery+" query parameter")
			return name, true, r2, ok
		}
	}
	if v := r.Header[SessionHeader]; len(v) > 0 {
		name, ok := s.checkSession(w, r, v, SessionHeader+" header")
		return name, true, r, ok
	}
	if len(r.Header["Cookie"]) > 0 {
		// A page may hold the cookie twice, set for two paths; the browser
		// sends the one of the longer path first, and that one counts.
		if c := r.CookiesNamed(SessionCookie); len(c) > 0 {
			name, ok := s.checkSession(w, r, []string{c[0].Value}, SessionCookie+" cookie")
			return name, true, r, ok
		}
	}
	return store.DefaultSession, false, r, true
}

// checkSession checks the values one source (where) gave for the session:
// one name. A name that holds a key is refused without being quoted:
// session names are shown in logs and the admin API.
func (s *Server) checkSession(w http.ResponseWriter, r *http.Request, v []string, where string) (string, bool) {
	switch {
	case len(v) == 1 && sessionName.MatchString(v[0]) && !s.rd.Contains(v[0]):
		return v[0], true
	case len(v) == 1 && sessionName.MatchString(v[0]):
		httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidSession, where+": a session name must not hold a key")
		return "", false
	}
	httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidSession,
		where+": want one session name of 1 to 64 letters, digits, '.', '_' or '-'")
	return "", false
}

// leastUsed returns the session of m, other than keep, whose value used
// says was used longest ago; "" if m holds no other. The chaos rules, the
// rate limits and the journal of sessions each keep a bounded number, and
// drop this one first.
func leastUsed[V any](m map[string]V, keep string, used func(V) time.Time) string {
	oldest := ""
	for name, v := range m {
		if name != keep && (oldest == "" || used(v).Before(used(m[oldest]))) {
			oldest = name
		}
	}
	return oldest
}
