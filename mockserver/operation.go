package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"cmp"
	"fmt"
	"net/http"
	"slices"

	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
)

// StabilityHeader tells clients the stability label the contract gives an
// operation (x-stability), such as experimental.
const StabilityHeader = "X-Stability"

// An opHandler serves one operation of the contract.
type opHandler = httpapi.Handler

// operation serves one contract operation through its steps, listed in
// the order a request meets them and run one after the other, as the
// steps of its path are (httpapi.Steps). The body is read before any
// delay, so that a delay longer than the server's read timeout cannot cut
// a body the client has sent; a truncate or slow fault damages whichever
// answer is sent. An operation with no handler is checked the same way and
// answers 501. The key check came before all of this: nothing here is
// reached without a valid key.
func (s *Server) operation(op *spec.Operation, h opHandler) http.Handler {
	natural := http.StatusOK
	if h == nil {
		h, natural = notImplemented, http.StatusNotImplemented
	}
	steps := slices.DeleteFunc([]opStep{
		labelled(op),
		s.preferred,
		s.drawn(op),
		bodyRead(op),
		delayed,
		unreadRefused,
		forced(op, natural),
		checked(op, natural, h),
	}, func(st opStep) bool { return st == nil })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &call{Request: httpapi.Request{Op: op}, e: httpapi.EntryOf(r), w: w}
		c.Session = cmp.Or(c.e.Session, store.DefaultSession) // as the sessions step, before the rate limit, read it
		for _, step := range steps {
			if !step(c.w, r, c) {
				break
			}
		}
		if c.send != nil {
			c.send()
		}
	})
}

// A call is one request to an operation as its steps see it: what the
// handler gets, and what the steps before found.
type call struct {
	httpapi.Request
	e       *httpapi.Entry
	w       http.ResponseWriter // where the steps after delayed write: the answer, or a fault's buffer
	send    func()              // sends a fault's buffer once the steps are done; nil: none
	pref    preference
	d       draw
	body    []byte
	bodyErr error
}

// An opStep serves a call, and reports false, or reports true to hand it
// on to the next step.
type opStep func(w http.ResponseWriter, r *http.Request, c *call) bool

// labelled labels the answers of a deprecated or an experimental
// operation; nil for another.
func labelled(op *spec.Operation) opStep {
	if !op.Deprecated && op.Stability == "" {
		return nil
	}
	var stability []string
	if op.Stability != "" {
		stability = []string{op.Stability}
	}
	return func(w http.ResponseWriter, r *http.Request, c *call) bool {
		hdr := w.Header()
		if op.Deprecated {
			// The contract marks the operation deprecated but gives no date.
			hdr["Deprecation"] = deprecationTrue
		}
		if stability != nil {
			hdr[StabilityHeader] = stability
		}
		return true
	}
}

// preferred reads the Prefer header, and answers 400 to one that asks for
// what the mock cannot do. A header that holds a key is refused without
// being quoted: what a request prefers is shown in the access log, the
// journal and Error messages.
func (s *Server) preferred(w http.ResponseWriter, r *http.Request, c *call) bool {
	v := r.Header["Prefer"]
	if len(v) == 0 {
		return true
	}
	for _, h := range v {
		if s.rd.Contains(h) {
			httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidPreference, "Prefer: a preference must not hold a key")
			return false
		}
	}
	pref, err := parsePrefer(v, s.maxDelay)
	if err != nil {
		httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidPreference, err.Error())
		return false
	}
	c.pref, c.e.Forced = pref, pref.String()
	return true
}

// drawn draws the chaos rules' latency and fault; a Prefer delay replaces
// the latency.
func (s *Server) drawn(op *spec.Operation) opStep {
	return func(w http.ResponseWriter, r *http.Request, c *call) bool {
		d := s.chaos.draw(op, c.Session)
		if c.pref.delay > 0 {
			d.delay = c.pref.delay
		}
		if d.delay > 0 || d.fault != "" {
			e := c.e
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
		c.d = d
		return true
	}
}

// bodyRead reads the body of an operation that takes one, within
// httpapi.MaxBodyBytes; nil for an operation that takes none.
func bodyRead(op *spec.Operation) opStep {
	if op.Body == nil {
		return nil
	}
	return func(w http.ResponseWriter, r *http.Request, c *call) bool {
		c.body, c.bodyErr = httpapi.ReadBody(w, r)
		return true
	}
}

// delayed applies the drawn latency and the faults that come before
// serving, and has a truncate or slow fault damage the answer the steps
// after it write (the operation sends it once they are done).
func delayed(w http.ResponseWriter, r *http.Request, c *call) bool {
	if !c.d.before(w, r) {
		return false
	}
	c.w, c.send = c.d.after(w, r)
	return true
}

// unreadRefused answers a body that could not be read.
func unreadRefused(w http.ResponseWriter, r *http.Request, c *call) bool {
	if c.bodyErr != nil {
		httpapi.WriteBodyError(w, r, c.bodyErr)
		return false
	}
	return true
}

// forced sends the answer a Prefer header forces.
func forced(op *spec.Operation, natural int) opStep {
	return func(w http.ResponseWriter, r *http.Request, c *call) bool {
		if !c.pref.forced(natural) {
			return true
		}
		answerForced(w, r, op, c.pref)
		c.e.ForcedAnswer = c.e.Code != httpapi.CodeInvalidPreference
		return false
	}
}

// checked answers a request the operation's compiled checks refuse, and
// hands one that passed to h, the last step. Prefer: code=N naming the
// operation's own answer forces nothing: the request is checked and
// served as usual, and a write is a dry run, since a forced answer writes
// nothing.
func checked(op *spec.Operation, natural int, h opHandler) opStep {
	return func(w http.ResponseWriter, r *http.Request, c *call) bool {
		c.DryRun = c.pref.code == natural
		var ps []spec.Problem
		if c.Body, ps = op.CheckRequest(r, r.PathValue, c.body); len(ps) > 0 {
			writeRequestError(w, r, op, ps)
			return false
		}
		h(w, r, &c.Request)
		return false
	}
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
	return slices.ContainsFunc(op.Params, func(p *spec.Param) bool { return p.In == "path" && p.Name == field })
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
