package mockserver

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/petstore/inventory-kit/spec"
)

// The codes of the Error bodies the mock sends. The contract does not give a
// set of codes; these are the mock's, small and stable, listed in the README.
const (
	CodeUnauthorized         = "unauthorized"           // 401: the API key is missing or invalid
	CodeAdminKeyRequired     = "admin_key_required"     // 401 on admin endpoints: an API key, where the admin key is required
	CodeInvalidBody          = "invalid_body"           // 400: the body is missing, malformed or has invalid values
	CodeInvalidParameter     = "invalid_parameter"      // 400: a parameter is not valid
	CodeInvalidSession       = "invalid_session"        // 400: the X-Mock-Session header is not a session name
	CodeInvalidPreference    = "invalid_preference"     // 400: the Prefer header asks for what the mock cannot do
	CodePayloadTooLarge      = "payload_too_large"      // 400: the body is larger than the mock accepts
	CodeUnsupportedMediaType = "unsupported_media_type" // 400: the body is not sent as the operation's media type
	CodeNotFound             = "not_found"              // 404: no such record, or no such path
	CodeMethodNotAllowed     = "method_not_allowed"     // 405: the path exists but not with this method
	CodeInternal             = "internal"               // 500: a bug in the mock
	CodeNotImplemented       = "not_implemented"        // 501: the mock has no handler for the operation
	CodeUnavailable          = "unavailable"            // 503: the store cannot serve now
)

// writeError sends the contract's Error body, {code, message, status}, with
// status equal to the HTTP status. Every error the mock sends, from every
// layer, goes out through here; checkEnvelope proves at start-up that the
// loaded contract's Error schemas accept it.
func writeError(w http.ResponseWriter, status int, code, message string) {
	b := make([]byte, 0, 64+len(code)+len(message))
	b = append(b, `{"code":`...)
	b = spec.AppendString(b, code)
	b = append(b, `,"message":`...)
	b = spec.AppendString(b, message)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, "}\n"...)
	noteErrorCode(w, code)
	writeJSON(w, status, b)
}

// checkEnvelope checks that every error response the contract documents
// with a JSON schema accepts the mock's Error body, so the mock's errors
// are errors of the contract it serves.
func checkEnvelope(c *spec.Contract) error {
	sample := []byte(`{"code":"not_found","message":"no pet with petId 1","status":404}`)
	for _, op := range c.Operations {
		for _, r := range op.Responses {
			if r.Schema == nil || (r.Code != "default" && r.Code[0] != '4' && r.Code[0] != '5') {
				continue
			}
			if ps := r.Schema.ValidateJSON(sample); len(ps) > 0 {
				return fmt.Errorf("mockserver: %s: response %s does not accept the mock's Error body %s: %s", op.Name(), r.Code, sample, spec.Join(ps))
			}
		}
	}
	return nil
}

// Header values made once and never written to: a handler that changes one
// sets a new slice (Header.Set).
var (
	applicationJSON = []string{"application/json"}
	noStore         = []string{"no-store"}
)

// writeJSON sends a JSON body that is already encoded. Every answer of the
// mock reflects state that changes, so none may be cached.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = applicationJSON
	h["Cache-Control"] = noStore
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}
