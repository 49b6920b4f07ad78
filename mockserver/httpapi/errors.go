// Package httpapi is what every server of the kit, the mock and the
// validating proxy, does the same way on the wire: the Error envelope and
// its codes, the bearer-key check, the Entry each request is recorded in,
// the Front around every request (access log, recoverer), method
// dispatch, the OpenAPI documents they serve and the admin API built from
// its document. A request's path is a list of Steps, each of which answers
// the request or hands it on.
package httpapi

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/petstore/inventory-kit/spec"
)

// The codes of the Error bodies the kit's servers send. The contract does
// not give a set of codes; these are the kit's, small and stable, listed
// in mockserver/README.md (Errors).
const (
	CodeUnauthorized         = "unauthorized"           // 401: the API key is missing or invalid
	CodeAdminKeyRequired     = "admin_key_required"     // 401 on admin endpoints: an API key, where the admin key is required
	CodeInvalidBody          = "invalid_body"           // 400: the body is missing, malformed or has invalid values
	CodeInvalidParameter     = "invalid_parameter"      // 400: a parameter is not valid
	CodeInvalidSession       = "invalid_session"        // 400: the X-Mock-Session header, mock-session cookie or query parameter is not a session name
	CodeMissingSession       = "missing_session"        // 400: --require-session, and the request names no session
	CodeInvalidPreference    = "invalid_preference"     // 400: the Prefer header asks for what the mock cannot do
	CodePayloadTooLarge      = "payload_too_large"      // 400: the body is larger than the mock accepts
	CodeUnsupportedMediaType = "unsupported_media_type" // 400: the body is not sent as the operation's media type
	CodeNotFound             = "not_found"              // 404: no such record, or no such path
	CodeMethodNotAllowed     = "method_not_allowed"     // 405: the path exists but not with this method
	CodeTooManyRequests      = "too_many_requests"      // 429: past the mock's rate limit (--rate-limit)
	CodeInternal             = "internal"               // 500: a bug in the mock
	CodeNotImplemented       = "not_implemented"        // 501: the mock has no handler for the operation
	CodeUnavailable          = "unavailable"            // 503: the store cannot serve now
	CodeHostNotAllowed       = "host_not_allowed"       // 403 on admin endpoints: the Host header names no host the server answers them for
	CodeCrossOrigin          = "cross_origin"           // 403 on admin endpoints: a change sent by a page of another origin
	CodeHTTPSRequired        = "https_required"         // 400: plain HTTP sent to a port that serves HTTPS
)

// WriteError sends the contract's Error body, {code, message, status}, with
// status equal to the HTTP status, and notes the code in r's Entry for the
// access log. Every error the kit's servers send, from every layer, goes
// out through here; CheckEnvelope proves at start-up that the loaded
// contract's Error schemas accept it.
func WriteError(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	EntryOf(r).Code = code
	WriteJSON(w, status, ErrorBody(status, code, message))
}

// ErrorBody returns the Error body WriteError sends, for a layer that
// answers below net/http (a TLS port that got plain HTTP).
func ErrorBody(status int, code, message string) []byte {
	b := make([]byte, 0, 64+len(code)+len(message))
	b = append(b, `{"code":`...)
	b = spec.AppendString(b, code)
	b = append(b, `,"message":`...)
	b = spec.AppendString(b, message)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	return append(b, "}\n"...)
}

// CheckEnvelope checks that every error response the contract documents
// with a JSON schema accepts the kit's Error body, so a server's errors
// are errors of the contract it serves.
func CheckEnvelope(c *spec.Contract) error {
	sample := []byte(`{"code":"not_found","message":"no pet with petId 1","status":404}`)
	for _, op := range c.Operations {
		for _, r := range op.Responses {
			if r.Schema == nil || (r.Code != "default" && r.Code[0] != '4' && r.Code[0] != '5') {
				continue
			}
			if ps := r.Schema.ValidateJSON(sample); len(ps) > 0 {
				return fmt.Errorf("%s: response %s does not accept the mock's Error body %s: %s", op.Name(), r.Code, sample, spec.Join(ps))
			}
		}
	}
	return nil
}

// Header values made once and never written to: a handler that changes one
// sets a new slice (Header.Set).
var (
	ApplicationJSON = []string{"application/json"}
	NoStore         = []string{"no-store"}
)

// WriteJSON sends a JSON body that is already encoded. Every answer of the
// kit's servers reflects state that changes, so none may be cached.
func WriteJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = ApplicationJSON
	h["Cache-Control"] = NoStore
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}

// WriteValue sends v encoded as JSON.
func WriteValue(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		WriteError(w, r, http.StatusInternalServerError, CodeInternal, "encoding the answer: "+err.Error())
		return
	}
	WriteJSON(w, status, append(b, '\n'))
}

// WriteProblems answers 400 to a request the contract's checks refused,
// with an Error code and a message that say what was wrong and what the
// contract wants.
func WriteProblems(w http.ResponseWriter, r *http.Request, ps []spec.Problem) {
	code, msg := Describe(ps)
	WriteError(w, r, http.StatusBadRequest, code, msg)
}

// Describe turns the contract's problems with a request into an Error code
// and a message that says what was wrong and what the contract wants.
func Describe(ps []spec.Problem) (code, message string) {
	code = CodeInvalidBody
	switch ps[0].Kind {
	case spec.KindParameter:
		code = CodeInvalidParameter
	case spec.KindContentType:
		return CodeUnsupportedMediaType, ps[0].Message
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		p.Field = cmp.Or(p.Field, "body")
		parts[i] = p.String()
	}
	return code, strings.Join(parts, "; ")
}
