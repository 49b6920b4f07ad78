package mockserver

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/petstore/inventory-kit/spec"
)

// The admin surface: every endpoint under /__admin/ is an operation of
// spec/admin.yaml, bound here to its handler by operationId, its requests
// checked by that document's compiled checks, behind the admin key. The
// document is served at /__admin/openapi.yaml.

// An adminHandler serves one admin operation once the request has passed
// the admin key check and the admin document's validation.
type adminHandler func(w http.ResponseWriter, r *http.Request, in *request)

// adminHandlers maps the admin document's operationIds to their handlers.
func (s *Server) adminHandlers() map[string]adminHandler {
	return map[string]adminHandler{
		"resetSession":  s.resetSession,
		"listSessions":  s.listSessions,
		"dropSession":   s.dropSession,
		"listRequests":  s.listRequests,
		"clearRequests": s.clearRequests,
		"getChaos":      s.getChaos,
		"setChaos":      s.setChaos,
		"clearChaos":    s.clearChaos,
		// The dashboard's, in records.go and describe.go.
		"describeContract": s.describeContract(),
		"listRecords":      s.listRecords,
		"updateRecord":     s.updateRecord(),
		// The validating proxy's; the mock has none to show.
		"listViolations":  noViolations,
		"clearViolations": noViolations,
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
	return adminMux(doc, s.adminHandlers(), true)
}

// A lazyAdmin is the admin API's mux, built when first asked for: loading
// the admin document would be most of the mock's start-up (spec.Admin).
// New starts building it in the background; a request that comes first
// waits for it.
type lazyAdmin struct {
	build func() (http.Handler, error)

	once sync.Once
	mux  http.Handler
	err  error
}

func (l *lazyAdmin) get() (http.Handler, error) {
	l.once.Do(func() { l.mux, l.err = l.build() })
	return l.mux, l.err
}

func (l *lazyAdmin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mux, err := l.get()
	if err != nil { // the embedded document is checked by tests: not expected
		writeError(w, http.StatusInternalServerError, CodeInternal, "the admin API could not be built: "+err.Error())
		return
	}
	mux.ServeHTTP(w, r)
}

// adminMux builds an admin mux from the admin document and handlers by
// operationId. With every set, each operation must have a handler; else an
// operation without one is left out, and answers 404 like any unknown path.
func adminMux(doc *spec.Contract, handlers map[string]adminHandler, every bool) (http.Handler, error) {
	mux := http.NewServeMux()
	byPath := map[string]map[string]http.Handler{}
	var order []string
	for _, op := range doc.Operations {
		h, ok := handlers[op.ID]
		if !ok && every {
			return nil, fmt.Errorf("mockserver: admin operation %s has no handler", op.Name())
		}
		if !ok {
			continue
		}
		delete(handlers, op.ID)
		p := doc.BasePath + op.Path
		if byPath[p] == nil {
			byPath[p] = map[string]http.Handler{}
			order = append(order, p)
		}
		byPath[p][op.Method] = adminOperation(op, h)
	}
	for id := range handlers {
		return nil, fmt.Errorf("mockserver: admin handler %s is not in the admin document", id)
	}
	for _, p := range order {
		if err := handle(mux, p, methods(byPath[p])); err != nil {
			return nil, err
		}
	}
	mux.Handle("/", http.HandlerFunc(notFound))
	return mux, nil
}

// adminOperation reads and validates an admin request before h sees it.
func adminOperation(op *spec.Operation, h adminHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if op.Body != nil {
			var err error
			if body, err = readBody(w, r); err != nil {
				writeBodyError(w, err)
				return
			}
		}
		in := &request{op: op}
		var ps []spec.Problem
		if in.body, ps = op.CheckRequest(r, r.PathValue, body); len(ps) > 0 {
			code, msg := describe(ps)
			writeError(w, http.StatusBadRequest, code, msg)
			return
		}
		in.raw = body
		h(w, r, in)
	})
}

// noViolations answers the proxy's violation endpoints on the mock.
func noViolations(w http.ResponseWriter, r *http.Request, _ *request) {
	writeError(w, http.StatusNotFound, CodeNotFound, "violations are recorded by the validating proxy (inventory-mock --proxy-to URL); this is the mock")
}

// health answers GET /healthz for liveness probes: 200 while the store
// serves, 503 with the reason while it cannot.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	n, err := s.count(r.Context())
	if err == nil {
		err = s.store.Health(r.Context())
	}
	if err != nil {
		writeStoreError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok","items":`+strconv.Itoa(n)+"}\n"))
}

// adminSession returns the session an admin request names: the session
// query parameter, else the X-Mock-Session header, else the default.
func (s *Server) adminSession(w http.ResponseWriter, r *http.Request) (string, bool) {
	if q := r.URL.Query().Get("session"); q != "" {
		if s.redact.holds(q) { // the admin document's pattern has checked the rest
			writeError(w, http.StatusBadRequest, CodeInvalidSession, "session: a session name must not hold a key")
			return "", false
		}
		return q, true
	}
	return s.sessionOf(w, r)
}

// resetSession puts a session back to its fixtures.
func (s *Server) resetSession(w http.ResponseWriter, r *http.Request, _ *request) {
	session, ok := s.adminSession(w, r)
	if !ok {
		return
	}
	if err := s.store.Reset(r.Context(), session); err != nil {
		writeStoreError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listSessions answers the sessions that have state.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request, _ *request) {
	infos, err := s.store.Sessions(r.Context())
	if err != nil {
		writeStoreError(w, err)
		return
	}
	writeValue(w, http.StatusOK, infos)
}

// dropSession forgets a session and its journal.
func (s *Server) dropSession(w http.ResponseWriter, r *http.Request, _ *request) {
	session := r.PathValue("session")
	if err := s.store.Drop(r.Context(), session); err != nil {
		writeStoreError(w, err)
		return
	}
	s.journal.clear(session)
	w.WriteHeader(http.StatusNoContent)
}

// listRequests answers the journal, newest first.
func (s *Server) listRequests(w http.ResponseWriter, r *http.Request, _ *request) {
	q := r.URL.Query()
	f := journalFilter{session: q.Get("session"), operation: q.Get("operation"), limit: 100}
	if v := q.Get("status"); v != "" {
		f.status, _ = strconv.Atoi(v)
	}
	if v := q.Get("limit"); v != "" {
		f.limit, _ = strconv.Atoi(v)
	}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		switch {
		case err == nil:
			f.since = t
		case looksLikeTime.MatchString(v):
			writeError(w, http.StatusBadRequest, CodeInvalidParameter, fmt.Sprintf("since: %q is not an RFC 3339 time such as 2026-11-22T21:00:00Z", v))
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
	writeValue(w, http.StatusOK, out)
}

// looksLikeTime tells a time with a mistake in it from a request id.
var looksLikeTime = regexp.MustCompile(`^\d{4}-\d{1,2}-\d{1,2}[Tt ]`)

// clearRequests empties the journal of one session, or of all.
func (s *Server) clearRequests(w http.ResponseWriter, r *http.Request, _ *request) {
	s.journal.clear(r.URL.Query().Get("session"))
	w.WriteHeader(http.StatusNoContent)
}

// getChaos answers the latency and fault rules in force.
func (s *Server) getChaos(w http.ResponseWriter, r *http.Request, _ *request) {
	writeValue(w, http.StatusOK, s.chaos.get())
}

// setChaos replaces the rules; a rule the mock cannot apply is a 400 and
// changes nothing.
func (s *Server) setChaos(w http.ResponseWriter, r *http.Request, in *request) {
	// The body passed the admin document's schema; numbers JSON Schema
	// counts as integers (5.03e2) are written as integers before Go reads
	// them into its fields.
	var cfg Chaos
	if err := json.Unmarshal(spec.AppendJSON(nil, wholeNumbers(in.body)), &cfg); err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidBody, "body: "+s.redact.apply(err.Error()))
		return
	}
	if err := s.chaos.set(cfg); err != nil {
		// The message quotes what the rule said; never a key.
		writeError(w, http.StatusBadRequest, CodeInvalidBody, s.redact.apply(err.Error()))
		return
	}
	writeValue(w, http.StatusOK, s.chaos.get())
}

// clearChaos removes every rule.
func (s *Server) clearChaos(w http.ResponseWriter, r *http.Request, _ *request) {
	s.chaos.set(Chaos{})
	w.WriteHeader(http.StatusNoContent)
}

// writeValue sends v encoded as JSON.
func writeValue(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, CodeInternal, "encoding the answer: "+err.Error())
		return
	}
	writeJSON(w, status, append(b, '\n'))
}

// A journalEntry is an entry as GET /__admin/requests shows it.
type journalEntry struct {
	ID         string   `json:"id"`
	Seq        uint64   `json:"seq"`
	Time       string   `json:"time"`
	Session    string   `json:"session"`
	Operation  string   `json:"operation,omitempty"`
	Method     string   `json:"method"`
	Path       string   `json:"path"`
	Status     int      `json:"status"`
	Code       string   `json:"code,omitempty"`
	DurationMs float64  `json:"durationMs"`
	Forced     string   `json:"forced,omitempty"`
	Fault      string   `json:"fault,omitempty"`
	Verdict    *verdict `json:"verdict,omitempty"`
	Request    message  `json:"request"`
	Response   message  `json:"response"`
	Curl       string   `json:"curl"`
}

// A verdict is the contract's judgement of an answer.
type verdict struct {
	Valid    bool     `json:"valid"`
	Problems []string `json:"problems,omitempty"`
	Note     string   `json:"note,omitempty"`
}

// A message is one side of an exchange.
type message struct {
	Headers   http.Header `json:"headers"`
	Body      string      `json:"body"`
	Bytes     int         `json:"bytes"`
	Truncated bool        `json:"truncated,omitempty"`
	// HeadersCut: headers past the journal's limit were left out.
	HeadersCut bool `json:"headersCut,omitempty"`
}

// render shows an entry with every configured key replaced, and the
// contract's verdict on its answer.
func (s *Server) render(e *entry) journalEntry {
	rd := s.redact
	reqHeader, headersCut := journalHeader(e.reqHeader)
	respBody, whole := e.respBody, []byte(nil)
	if e.hasList {
		whole = e.respList.Bytes()
		respBody = whole[:min(len(whole), s.journal.bodyLimit)]
	}
	respCut := e.respBytes > len(respBody)
	if whole != nil {
		respCut = len(whole) > len(respBody)
	}
	out := journalEntry{
		ID: rd.apply(e.id), Seq: e.seq, Time: e.time.UTC().Format(time.RFC3339Nano), Session: rd.apply(e.session),
		Method: e.method, Path: rd.apply(e.url.RequestURI()), Status: e.status, Code: e.code,
		DurationMs: float64(e.duration.Microseconds()) / 1000, Forced: rd.apply(e.forced), Fault: rd.apply(e.fault),
		Request: message{Headers: redactHeader(reqHeader, rd), HeadersCut: headersCut,
			Body: rd.applyCut(string(e.reqBody), e.reqBytes > len(e.reqBody)), Bytes: e.reqBytes, Truncated: e.reqBytes > len(e.reqBody)},
		Response: message{Headers: redactHeader(e.respHeader, rd),
			Body: rd.applyCut(string(respBody), respCut), Bytes: e.respBytes, Truncated: respCut},
		Curl: e.curl(rd, s.keyVar),
	}
	if enc := e.respHeader.Get("Content-Encoding"); enc != "" && whole == nil {
		out.Response.Body = fmt.Sprintf("(%s-compressed, %d bytes; the journal shows uncompressed bodies only)", enc, e.respBytes)
		out.Response.Truncated = true
	}
	if e.op == nil {
		return out
	}
	out.Operation = e.op.Name()
	e.judged.Do(func() { e.verdict = s.judge(e, whole, out.Response.Truncated) })
	out.Verdict = e.verdict
	return out
}

// judge is the contract's verdict on an entry's answer: the whole list
// where the journal kept it whole, else the body kept, where it is all of
// the answer.
func (s *Server) judge(e *entry, whole []byte, cut bool) *verdict {
	v := &verdict{Valid: true}
	body := e.respBody
	if whole != nil {
		body, cut = whole, false
	}
	switch {
	case e.aborted:
		v.Note = "no answer: the connection was dropped on purpose (" + e.fault + ")"
	case cut:
		v.Note = fmt.Sprintf("not checked: the body (%d bytes) is longer than the journal keeps", e.respBytes)
	case e.method == http.MethodHead:
		v.Note = "not checked: a HEAD answer has no body"
	default:
		for _, p := range e.op.CheckResponse(e.status, e.respHeader, body) {
			v.Valid = false
			v.Problems = append(v.Problems, s.redact.apply(p.String()))
		}
	}
	return v
}

// keyVar names the environment variable a curl line reads a configured
// key from: INVENTORY_API_KEY for an API key, INVENTORY_ADMIN_KEY for the
// admin key; "" for a token that is neither.
func (s *Server) keyVar(token string) string { return s.keyVars[token] }

// redactHeader copies h with every configured key replaced.
func redactHeader(h http.Header, rd redactor) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		for _, v := range vs {
			out[k] = append(out[k], rd.apply(v))
		}
	}
	return out
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
