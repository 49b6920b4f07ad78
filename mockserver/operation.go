package mockserver

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
)

// MaxBodyBytes is the largest request body the mock reads: 1 MiB.
const MaxBodyBytes = 1 << 20

// SessionHeader names the caller's session: its own copy of the data,
// made on first use from the fixtures. Without it, a request uses the
// default session.
const SessionHeader = "X-Mock-Session"

// StabilityHeader tells clients the stability label the contract gives an
// operation (x-stability), such as experimental.
const StabilityHeader = "X-Stability"

// A request is what an operation's handler gets, once the request has
// passed the key check and the contract's validation.
type request struct {
	op      *spec.Operation
	body    any    // the decoded body, as spec.DecodeJSON returns it; nil if none
	raw     []byte // the body as sent (admin operations only)
	session string // the session the request reads and writes
}

// An opHandler serves one operation of the contract.
type opHandler func(w http.ResponseWriter, r *http.Request, in *request)

// operation wraps the handler of one contract operation. In order: it
// labels deprecated and experimental operations, reads the session and the
// Prefer header, draws the chaos rules' latency and fault, reads the body
// within MaxBodyBytes (before any delay, so that a delay longer than the
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
		rec := recorderOf(w)
		if rec == nil {
			rec = &statusRecorder{} // served outside New's chain, as in some tests
		}
		in := &request{op: op, session: store.DefaultSession}
		var pref preference
		var d draw
		if controls {
			var ok bool
			if in.session, ok = s.sessionOf(w, r); !ok {
				return
			}
			rec.session = in.session
			if pref, ok = s.preferenceOf(w, r); !ok {
				return
			}
			rec.forced = pref.String()
			d = s.chaos.draw(op)
			if pref.delay > 0 {
				d.delay = pref.delay
			}
			if d.delay > 0 || d.fault != "" {
				rec.fault = d.String()
			}
		}
		rec.session = in.session
		var body []byte
		var bodyErr error
		if op.Body != nil {
			body, bodyErr = readBody(w, r)
		}
		if !d.before(w, r) {
			return
		}
		w, send := d.after(w, r)
		var ps []spec.Problem
		switch {
		case bodyErr != nil:
			writeBodyError(w, bodyErr)
		case pref.forced(natural):
			answerForced(w, op, pref)
		default:
			if in.body, ps = op.CheckRequest(r, r.PathValue, body); len(ps) > 0 {
				writeRequestError(w, op, ps)
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
		if s.redact.holds(h) {
			writeError(w, http.StatusBadRequest, CodeInvalidPreference, "Prefer: a preference must not hold a key")
			return preference{}, false
		}
	}
	pref, err := parsePrefer(v, s.maxDelay)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidPreference, err.Error())
		return preference{}, false
	}
	return pref, true
}

var deprecationTrue = []string{"true"}

// sessionName is what a session may be called: short, and safe in a log
// line, a URL and a Redis key.
var sessionName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// sessionOf returns the request's session, or answers 400 and reports
// false when the header does not name one. A name that holds a key is
// refused: session names are shown in logs and the admin API.
func (s *Server) sessionOf(w http.ResponseWriter, r *http.Request) (string, bool) {
	v := r.Header[SessionHeader]
	switch {
	case len(v) == 0:
		return store.DefaultSession, true
	case len(v) == 1 && sessionName.MatchString(v[0]) && !s.redact.holds(v[0]):
		return v[0], true
	case len(v) == 1 && sessionName.MatchString(v[0]):
		writeError(w, http.StatusBadRequest, CodeInvalidSession, SessionHeader+": a session name must not hold a key")
		return "", false
	}
	writeError(w, http.StatusBadRequest, CodeInvalidSession,
		SessionHeader+": want one session name of 1 to 64 letters, digits, '.', '_' or '-'")
	return "", false
}

// errTooLarge is a body that announces more than MaxBodyBytes.
var errTooLarge = errors.New("too large")

// readBody reads the request body, at most MaxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBodyBytes {
		return nil, errTooLarge
	}
	// io.ReadAll, but starting from the announced length (plus one byte, to
	// see the end without growing), not from 512 bytes.
	return readAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes), max(r.ContentLength, 0)+1)
}

// writeBodyError answers a body that could not be read: too large, or
// ended before its announced length or the read timeout.
func writeBodyError(w http.ResponseWriter, err error) {
	var tooLarge *http.MaxBytesError
	if err == errTooLarge || errors.As(err, &tooLarge) {
		writeError(w, http.StatusBadRequest, CodePayloadTooLarge,
			fmt.Sprintf("body: larger than the %d bytes (1 MiB) the mock accepts", MaxBodyBytes))
		return
	}
	writeError(w, http.StatusBadRequest, CodeInvalidBody, "body: ended early, before all of it was sent ("+err.Error()+")")
}

// readAll is io.ReadAll with a first buffer of size bytes.
func readAll(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
	}
}

// writeRequestError answers a request the contract's checks refused: 400,
// or, for a path parameter of an operation that documents 404 but not 400,
// 404: a path segment that is not a valid key names no record, and the
// answer stays one the contract documents.
func writeRequestError(w http.ResponseWriter, op *spec.Operation, ps []spec.Problem) {
	code, msg := describe(ps)
	if code == CodeInvalidParameter && !op.Documents(http.StatusBadRequest) && op.Documents(http.StatusNotFound) && isPathParam(op, ps[0].Field) {
		writeError(w, http.StatusNotFound, CodeNotFound, msg)
		return
	}
	writeError(w, http.StatusBadRequest, code, msg)
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

// describe turns the contract's problems with a request into an Error code
// and a message that says what was wrong and what the contract wants.
func describe(ps []spec.Problem) (code, message string) {
	code = CodeInvalidBody
	switch ps[0].Kind {
	case spec.KindParameter:
		code = CodeInvalidParameter
	case spec.KindContentType:
		return CodeUnsupportedMediaType, ps[0].Message
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		if p.Field == "" {
			p.Field = "body"
		}
		parts[i] = p.String()
	}
	return code, strings.Join(parts, "; ")
}

// notImplemented answers an operation the mock has no handler for.
func notImplemented(w http.ResponseWriter, r *http.Request, in *request) {
	writeError(w, http.StatusNotImplemented, CodeNotImplemented,
		fmt.Sprintf("%s %s is in the contract, but %s", in.op.Method, in.op.Path, unimplementedReason(in.op)))
}

// unimplementedReason says why the mock does not serve op.
func unimplementedReason(op *spec.Operation) string {
	if r := op.Response(http.StatusOK); r == nil || r.Schema == nil {
		return "the contract gives no shape for its answer, so the mock has nothing to serve"
	}
	return "it is not an operation the mock can serve from its records (a list, a read or an update of one record)"
}
