package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/petstore/inventory-kit/spec"
)

// shapeGiven reports whether the contract gives a body for o's 200
// response. Where it does not (GET /pets/{petId}, GET /store/orders), 501 is
// an honest answer.
func shapeGiven(o *spec.Operation) bool {
	if o == nil || o.Operation.Responses == nil || o.Operation.Responses.Codes == nil {
		return false
	}
	r, ok := o.Operation.Responses.Codes.Get("200")
	return ok && r != nil && r.Content != nil && r.Content.Len() > 0
}

// responseProblems lists how x's response breaks the rules every response
// keeps: an answer at all, no 5xx (but 501 where the contract gives no
// shape), a status documented for the operation (or one of tolerated), JSON
// content, headers and body valid against the contract, and an Error body on
// every error.
func (t *Target) responseProblems(x *Exchange, tolerated ...int) []string {
	if x.Err != nil {
		return []string{"no response: " + x.redactErr()}
	}
	var ps []string
	notImplemented := x.Status == http.StatusNotImplemented && !shapeGiven(x.Op)
	documented := x.Op != nil && x.Op.Documents(x.Status)
	switch {
	case x.Status >= 500 && !notImplemented:
		ps = append(ps, fmt.Sprintf("status %d: no 5xx is allowed", x.Status))
	case !documented && !notImplemented && !slices.Contains(tolerated, x.Status):
		ps = append(ps, fmt.Sprintf("status %d is not documented for %s (documented: %v)", x.Status, opName(x.Op), statuses(x.Op)))
	}
	if mt := x.MediaType(); mt != "application/json" {
		ps = append(ps, fmt.Sprintf("Content-Type %q: want application/json", x.RespHead.Get("Content-Type")))
	} else if documented && x.Op != nil {
		for _, p := range t.contract.ValidateResponse(t.validationRequest(x), x.response()) {
			ps = append(ps, "response: "+p.String())
		}
	}
	if x.Status >= 400 {
		ps = append(ps, errorProblems(x)...)
	}
	return ps
}

// statuses returns the documented statuses of o, nil for no operation.
func statuses(o *spec.Operation) []int {
	if o == nil {
		return nil
	}
	return o.Statuses
}

// validationRequest is x's request as the contract's validator expects it:
// the path under the contract's own base path, whatever the target's is.
func (t *Target) validationRequest(x *Exchange) *http.Request {
	rel := strings.TrimPrefix(x.URL, t.base.String())
	req, _ := http.NewRequest(x.Method, "http://target"+t.contract.BasePath+rel, bytes.NewReader(x.Body))
	req.Header = x.Header.Clone()
	return req
}

// response rebuilds the http.Response for the validator.
func (x *Exchange) response() *http.Response {
	return &http.Response{
		StatusCode: x.Status,
		Header:     x.RespHead.Clone(),
		Body:       io.NopCloser(bytes.NewReader(x.RespBody)),
	}
}

// errorProblems lists how x's body falls short of the Error envelope: code
// and message non-empty strings, status an integer equal to the HTTP status.
func errorProblems(x *Exchange) []string {
	var e map[string]json.RawMessage
	if err := json.Unmarshal(x.RespBody, &e); err != nil || e == nil {
		return []string{"Error body: want a JSON object with code, message and status"}
	}
	var ps []string
	for _, f := range []string{"code", "message"} {
		var s string
		raw, ok := e[f]
		switch {
		case !ok:
			ps = append(ps, fmt.Sprintf("Error body: %s is missing", f))
		case json.Unmarshal(raw, &s) != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")):
			ps = append(ps, fmt.Sprintf("Error body: %s is %s, want a string", f, raw))
		case strings.TrimSpace(s) == "":
			ps = append(ps, fmt.Sprintf("Error body: %s is empty", f))
		}
	}
	var status int
	raw, ok := e["status"]
	switch {
	case !ok:
		ps = append(ps, "Error body: status is missing")
	case json.Unmarshal(raw, &status) != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")):
		ps = append(ps, fmt.Sprintf("Error body: status is %s, want an integer", raw))
	case status != x.Status:
		ps = append(ps, fmt.Sprintf("Error body: status is %d, want the HTTP status %d", status, x.Status))
	}
	return ps
}
