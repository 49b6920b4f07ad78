package mockserver

import (
	"net/http"
	"strconv"
)

// The codes of the Error bodies the mock sends. The contract does not give a
// set of codes; these are the mock's, small and stable, listed in the README.
const (
	CodeUnauthorized         = "unauthorized"           // 401: the API key is missing or invalid
	CodeInvalidBody          = "invalid_body"           // 400: the body is missing, malformed or has invalid values
	CodeInvalidParameter     = "invalid_parameter"      // 400: a path parameter is not valid
	CodePayloadTooLarge      = "payload_too_large"      // 400: the body is larger than the mock accepts
	CodeUnsupportedMediaType = "unsupported_media_type" // 400: the body is not sent as application/json
	CodeNotFound             = "not_found"              // 404: no such pet, or no such path
	CodeMethodNotAllowed     = "method_not_allowed"     // 405: the path exists but not with this method
	CodeNotImplemented       = "not_implemented"        // 501: the contract gives no response shape
	CodeInternal             = "internal"               // 500: a bug in the mock
)

// writeError sends the contract's Error body, {code, message, status}, with
// status equal to the HTTP status. Every error the mock sends, from every
// layer, goes out through here.
func writeError(w http.ResponseWriter, status int, code, message string) {
	b := make([]byte, 0, 64+len(code)+len(message))
	b = append(b, `{"code":`...)
	b = strconv.AppendQuote(b, code)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, message)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, "}\n"...)
	writeJSON(w, status, b)
}

// applicationJSON is the Content-Type of every JSON body, made once and
// never written to.
var applicationJSON = []string{"application/json"}

// writeJSON sends a JSON body that is already encoded.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = applicationJSON
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}
