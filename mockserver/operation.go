package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"fmt"
	"net/http"

	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
)

// StabilityHeader tells clients the stability label the contract gives an
// operation (x-stability), such as experimental.
const StabilityHeader = "X-Stability"

// An opHandler serves one operation of the contract.
type opHandler = httpapi.Handler

// operation wraps the handler of one contract operation. In order: it
// labels deprecated and experimental operations, reads the session and the
// Prefer header, draws the chaos rules' latency and fault, reads the body
// within httpapi.MaxBodyBytes (before any delay, so that a delay longer than the
// server's read timeout cannot cut a body the client has sent), applies
// the latency and the faults that come before serving, then answers: a body
// that could not be read, a forced answer, a request the operation's
// compiled checks refuse, or, for a request that passed, h's answer. A
// truncate or slow fault damages whichever of these answers is sent. An
// operation with no handler is checked the same way and answers 501. The
// key check came before all of this: nothing here is reached without a
// valid key.
func (s *Server) operation(op *spec.Operation, h opHandler) http.Handler {
	natural := http.StatusOK
	if h == nil {
		h, natural = notImplemented, http.StatusNotImplemented
	}
	var stability []string
	if op.Stability != "" {
		stability = []string{op.Stability}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		if op.Deprecated {
			// The contract marks the operation deprecated but gives no date.
			hdr["Deprecation"] = deprecationTrue
		}
		if stability != nil {
			hdr[StabilityHeader] = stability
		}
		e := httpapi.EntryOf(r)
		in := &httpapi.Request{Op: op}
		// The sessions step, before the rate limit, has read the session.
		if in.Session = e.Session; in.Session == "" {
			in.Session = store.DefaultSession
		}
		pref, ok := s.preferenceOf(w, r)
		if !ok {
			return
		}
		e.Forced = pref.String()
		d := s.chaos.draw(op, in.Session)
		if pref.delay > 0 {
			d.delay = pref.delay
		}
		if d.delay > 0 || d.fault != "" {
			e.Fault = d.String()
			e.Delayed = d.delay > 0
			switch d.fault {
			case "":
			case faultExample:
				e.ForcedAnswer = true
			default:
				e.FaultKind = d.fault
			}
		}
		var body []byte
		var bodyErr error
		if op.Body != nil {
			body, bodyErr = httpapi.ReadBody(w, r)
		}
		if !d.before(w, r) {
			return
		}
		w, send := d.after(w, r)
		var ps []spec.Problem
		switch {
		case bodyErr != nil:
			httpapi.WriteBodyError(w, r, bodyErr)
		case pref.forced(natural):
			answerForced(w, r, op, pref)
			e.ForcedAnswer = e.Code != httpapi.CodeInvalidPreference
		default:
			// Prefer: code=N naming the operation's own answer forces
			// nothing: the request is checked and served as usual, and a
			// write is a dry run, since a forced answer writes nothing.
			in.DryRun = pref.code == natural
			if in.Body, ps = op.CheckRequest(r, r.PathValue, body); len(ps) > 0 {
				writeRequestError(w, r, op, ps)
			} else {
				h(w, r, in)
			}
		}
		if send != nil {
			send()
		}
	})
}

// preferenceOf reads the request's Prefer header, or answers 400 and
// reports false when it asks for what the mock cannot do. A header that
// holds a key is refused without being quoted: what a request prefers is
// shown in the access log, the journal and Error messages.
func (s *Server) preferenceOf(w http.ResponseWriter, r *http.Request) (preference, bool) {
	v := r.Header["Prefer"]
	if len(v) == 0 {
		return preference{}, true
	}
	for _, h := range v {
		if s.rd.Contains(h) {
			httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidPreference, "Prefer: a preference must not hold a key")
			return preference{}, false
		}
	}
	pref, err := parsePrefer(v, s.maxDelay)
	if err != nil {
		httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidPreference, err.Error())
		return preference{}, false
	}
	return pref, true
}

var deprecationTrue = []string{"true"}

// writeRequestError answers a request the contract's checks refused: 400,
// or, for a path parameter of an operation that documents 404 but not 400,
// 404: a path segment that is not a valid key names no record, and the
// answer stays one the contract documents.
func writeRequestError(w http.ResponseWriter, r *http.Request, op *spec.Operation, ps []spec.Problem) {
	code, msg := httpapi.Describe(ps)
	if code == httpapi.CodeInvalidParameter && !op.Documents(http.StatusBadRequest) && op.Documents(http.StatusNotFound) && isPathParam(op, ps[0].Field) {
		httpapi.WriteError(w, r, http.StatusNotFound, httpapi.CodeNotFound, msg)
		return
	}
	httpapi.WriteError(w, r, http.StatusBadRequest, code, msg)
}

// isPathParam reports whether field names a path parameter of op.
func isPathParam(op *spec.Operation, field string) bool {
	for _, p := range op.Params {
		if p.In == "path" && p.Name == field {
			return true
		}
	}
	return false
}

// notImplemented answers an operation the mock has no handler for.
func notImplemented(w http.ResponseWriter, r *http.Request, in *httpapi.Request) {
	httpapi.WriteError(w, r, http.StatusNotImplemented, httpapi.CodeNotImplemented,
		fmt.Sprintf("%s %s is in the contract, but %s", in.Op.Method, in.Op.Path, unimplementedReason(in.Op)))
}

// unimplementedReason says why the mock does not serve op.
func unimplementedReason(op *spec.Operation) string {
	if r := op.Response(http.StatusOK); r == nil || r.Schema == nil {
		return "the contract gives no shape for its answer, so the mock has nothing to serve"
	}
	return "it is not an operation the mock can serve from its records (a list, a read or an update of one record)"
}
