package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
)

// The admin surface: every endpoint under /__admin/ is an operation of
// spec/admin.yaml, bound here to its handler by operationId, its requests
// checked by that document's compiled checks, behind the admin key. The
// document is served at /__admin/openapi.yaml.

// adminHandlers maps the admin document's operationIds to their handlers.
func (s *Server) adminHandlers() map[string]httpapi.Handler {
	getChaos, setChaos, clearChaos := controlAPI(s, s.chaos, func(v Chaos, sc scope) any {
		return struct {
			Chaos
			scope
		}{v, sc}
	})
	getRateLimit, setRateLimit, clearRateLimit := controlAPI(s, s.limiter, func(v RateLimit, sc scope) any {
		return struct {
			RateLimit
			scope
		}{v, sc}
	})
	return map[string]httpapi.Handler{
		"resetSession":   s.resetSession,
		"listSessions":   s.listSessions,
		"dropSession":    s.dropSession,
		"listRequests":   s.listRequests,
		"clearRequests":  s.clearRequests,
		"getChaos":       getChaos,
		"setChaos":       setChaos,
		"clearChaos":     clearChaos,
		"getRateLimit":   getRateLimit,
		"setRateLimit":   setRateLimit,
		"clearRateLimit": clearRateLimit,
		// The dashboard's, in records.go and describe.go.
		"describeContract": s.describeContract(),
		"listRecords":      s.listRecords,
		"updateRecord":     s.updateRecord(),
	}
}

// adminRoutes builds the admin mux from the admin document. Every
// operation of the document must have a handler, and every handler an
// operation.
func (s *Server) adminRoutes() (http.Handler, error) {
	doc, err := spec.Admin()
	if err != nil {
		return nil, err
	}
	return httpapi.AdminMux(doc, "", s.adminHandlers())
}

// A lazyAdmin returns the admin API's mux, built once, when first asked
// for (a sync.OnceValues of adminRoutes): loading the admin document would
// be most of the mock's start-up (spec.Admin). New starts building it in
// the background; a request that comes first waits for it.
type lazyAdmin func() (http.Handler, error)

func (l lazyAdmin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mux, err := l()
	if err != nil { // the embedded document is checked by tests: not expected
		httpapi.WriteError(w, r, http.StatusInternalServerError, httpapi.CodeInternal, "the admin API could not be built: "+err.Error())
		return
	}
	mux.ServeHTTP(w, r)
}

// health answers GET /healthz for liveness probes: 200 while the store
// serves, 503 with the reason while it cannot. It says which contract is
// in force: its title, version, the SHA-256 of the document and when it
// was loaded (a spec edit under --watch changes them).
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	l, err := s.store.List(r.Context(), store.DefaultSession)
	if err == nil {
		err = s.store.Health(r.Context())
	}
	if err != nil {
		s.writeStoreError(w, r, err)
		return
	}
	title, version := s.info()
	b := make([]byte, 0, 256)
	b = append(b, `{"status":"ok","items":`...)
	b = strconv.AppendInt(b, int64(l.Len()), 10)
	b = append(b, `,"contract":{"title":`...)
	b = spec.AppendString(b, title)
	b = append(b, `,"version":`...)
	b = spec.AppendString(b, version)
	b = append(b, `,"sha256":`...)
	b = spec.AppendString(b, s.digest)
	b = append(b, `,"loaded":`...)
	b = spec.AppendString(b, s.loaded.UTC().Format(time.RFC3339))
	b = append(b, "}}\n"...)
	httpapi.WriteJSON(w, http.StatusOK, b)
}

// adminSession returns the session an admin request names: the session
// query parameter, else the X-Mock-Session header, else none.
func (s *Server) adminSession(w http.ResponseWriter, r *http.Request, none string) (string, bool) {
	if q := r.URL.Query().Get("session"); q != "" {
		return s.checkSession(w, r, []string{q}, "session")
	}
	if v := r.Header[SessionHeader]; len(v) > 0 {
		return s.checkSession(w, r, v, SessionHeader+" header")
	}
	return none, true
}

// resetSession puts a session back to its fixtures.
func (s *Server) resetSession(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
	session, ok := s.adminSession(w, r, store.DefaultSession)
	if !ok {
		return
	}
	if err := s.store.Reset(r.Context(), session); err != nil {
		s.writeStoreError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listSessions answers the sessions that have state.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
	infos, err := s.store.Sessions(r.Context())
	if err != nil {
		s.writeStoreError(w, r, err)
		return
	}
	httpapi.WriteValue(w, r, http.StatusOK, infos)
}

// dropSession forgets a session and its journal.
func (s *Server) dropSession(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
	session := r.PathValue("session")
	if err := s.store.Drop(r.Context(), session); err != nil {
		s.writeStoreError(w, r, err)
		return
	}
	s.journal.clear(session)
	s.chaos.clear(session)
	s.limiter.clear(session)
	w.WriteHeader(http.StatusNoContent)
}

// listRequests answers the journal, newest first.
func (s *Server) listRequests(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
	q := r.URL.Query()
	f := journalFilter{session: q.Get("session"), operation: q.Get("operation"), status: intParam(q, "status", 0), limit: intParam(q, "limit", 100)}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		switch {
		case err == nil:
			f.since = t
		case looksLikeTime.MatchString(v):
			httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidParameter, fmt.Sprintf("since: %q is not an RFC 3339 time such as 2026-11-22T21:00:00Z", v))
			return
		default:
			f.sinceID = v
		}
	}
	entries := s.journal.list(f)
	out := make([]journalEntry, len(entries))
	for i, e := range entries {
		out[i] = s.render(e)
	}
	httpapi.WriteValue(w, r, http.StatusOK, out)
}

// looksLikeTime tells a time with a mistake in it from a request id.
var looksLikeTime = regexp.MustCompile(`^\d{4}-\d{1,2}-\d{1,2}[Tt ]`)

// clearRequests empties the journal of one session, or of all.
func (s *Server) clearRequests(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
	s.journal.clear(r.URL.Query().Get("session"))
	w.WriteHeader(http.StatusNoContent)
}

// A control is a setting the admin API reads, replaces and clears, the
// global one or a session's own: the chaos rules (chaos.go) and the rate
// limit (ratelimit.go).
type control[T any] interface {
	// get returns the setting session's requests follow ("": the global
	// one), and whether it is the session's own.
	get(session string) (T, bool)
	// set checks v and puts it in force; on error nothing changes.
	set(session string, v T) error
	// clear removes session's own, which then follows the global one
	// again.
	clear(session string)
	// withSessions lists the sessions with a setting of their own, sorted.
	withSessions() []string
}

// controlAPI returns the admin handlers of c. get answers the setting in
// force: the global one, or with ?session=NAME the one NAME's requests
// follow, and whether it is the session's own. set replaces the global one
// or with ?session=NAME that session's own; one the mock cannot apply is a
// 400 and changes nothing. clear sets the global one to none (T's zero
// value), or with ?session=NAME removes the session's own. What get and
// set answer is as embeds T and sc, the setting's fields, then its
// scope's.
func controlAPI[T any](s *Server, c control[T], as func(v T, sc scope) any) (get, set, clear httpapi.Handler) {
	view := func(session string) any {
		v, own := c.get(session)
		switch {
		case own:
			return as(v, scope{Scope: "session", Session: session})
		case session != "":
			return as(v, scope{Scope: "global", Session: session})
		}
		return as(v, scope{Sessions: c.withSessions()})
	}
	get = func(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
		if session, ok := s.adminSession(w, r, ""); ok {
			httpapi.WriteValue(w, r, http.StatusOK, view(session))
		}
	}
	set = func(w http.ResponseWriter, r *http.Request, in *httpapi.Request) {
		session, ok := s.adminSession(w, r, "")
		if !ok {
			return
		}
		// The body passed the admin document's schema; numbers JSON Schema
		// counts as integers (5.03e2) are written as integers before Go
		// reads them into its fields. What a view adds (scope, session,
		// sessions) is no field of T: what GET answered can be PUT back.
		var v T
		if err := json.Unmarshal(spec.AppendJSON(nil, wholeNumbers(in.Body)), &v); err != nil {
			httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidBody, "body: "+s.rd.String(err.Error()))
			return
		}
		if err := c.set(session, v); err != nil {
			// The message quotes what the setting said; never a key.
			httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidBody, s.rd.String(err.Error()))
			return
		}
		httpapi.WriteValue(w, r, http.StatusOK, view(session))
	}
	clear = func(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
		session, ok := s.adminSession(w, r, "")
		switch {
		case !ok:
			return
		case session == "":
			c.set("", *new(T))
		default:
			c.clear(session)
		}
		w.WriteHeader(http.StatusNoContent)
	}
	return get, set, clear
}

// A scope says whom chaos rules or a rate limit the admin API answers
// apply to.
type scope struct {
	// Scope, in the answer about one session, is "session" (rules of its
	// own) or "global" (it has none, and follows the global ones).
	Scope string `json:"scope,omitempty"`
	// Session is the session asked about; absent for the global rules.
	Session string `json:"session,omitempty"`
	// Sessions, in the global answer, are the sessions with their own.
	Sessions []string `json:"sessions,omitempty"`
}

// wholeNumbers returns v with every number that is a whole number written
// as a plain integer: 5.03e2 as 503.
func wholeNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return v
		}
		if r, ok := new(big.Rat).SetString(string(v)); ok && r.IsInt() {
			return json.Number(r.Num().String())
		}
	case map[string]any:
		for k, e := range v {
			v[k] = wholeNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = wholeNumbers(e)
		}
	}
	return v
}
