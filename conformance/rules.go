package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/spec"
)

// ResponseProblems lists how x's response breaks the rules every response
// keeps: an answer at all, no 5xx (but 501 where the contract gives no
// shape), a status documented for the operation (or one of tolerated),
// JSON content where the document gives a body for that status, headers
// and body valid against the contract, and an Error body on every error.
func (t *Target) ResponseProblems(x *Exchange, tolerated ...int) []string {
	if x.Status == 0 && x.Err != nil {
		return []string{"no response: " + x.Err.Error()}
	}
	if x.Err != nil {
		return []string{x.Err.Error()}
	}
	var ps []string
	notImplemented := x.Status == http.StatusNotImplemented && x.Op != nil && !x.Op.Shaped()
	documented := x.Op != nil && x.Op.Documents(x.Status)
	switch {
	case x.Status == http.StatusTooManyRequests:
		ps = append(ps, fmt.Sprintf("status 429: still rate limited after %d tries and %s of waiting (the run's allowance, --max-retry-wait, is %s)", maxAttempts, x.Waited.Round(time.Millisecond), t.cfg.MaxRetryWait))
	case x.Status >= 500 && !notImplemented:
		ps = append(ps, fmt.Sprintf("status %d: no 5xx is allowed", x.Status))
	case !documented && !notImplemented && !slices.Contains(tolerated, x.Status):
		ps = append(ps, fmt.Sprintf("status %d is not documented for %s (documented: %v)", x.Status, x.Op.Name(), statuses(x.Op)))
	}
	content := documented && len(x.Op.Response(x.Status).MediaTypes) > 0
	if mt := x.MediaType(); (content || x.Status >= 400) && mt != "application/json" {
		ps = append(ps, fmt.Sprintf("Content-Type %s: want application/json", Quote(x.RespHead.Get("Content-Type"))))
	} else if documented && !notImplemented {
		for _, p := range t.responseProblems(x) {
			ps = append(ps, "response: "+Printable([]byte(p.String())))
		}
	}
	if x.Status >= 400 && x.Status != http.StatusTooManyRequests {
		ps = append(ps, ErrorProblems(x)...)
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

// ErrorProblems lists how x's body falls short of the Error envelope: code
// and message non-empty strings, status an integer equal to the HTTP status.
func ErrorProblems(x *Exchange) []string {
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
			ps = append(ps, fmt.Sprintf("Error body: %s is %s, want a string", f, Printable(raw)))
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
		ps = append(ps, fmt.Sprintf("Error body: status is %s, want an integer", Printable(raw)))
	case status != x.Status:
		ps = append(ps, fmt.Sprintf("Error body: status is %d, want the HTTP status %d", status, x.Status))
	}
	return ps
}

// responseProblems checks x's response against its operation. Where the
// response echoes the key, the problems are worded from the response with
// the key hidden, since a message cuts long values and a cut key would
// escape the redactor; the verdict is always the response's own.
func (t *Target) responseProblems(x *Exchange) []spec.Problem {
	ps := x.Op.CheckResponse(x.Status, x.RespHead, x.RespBody)
	rd := t.redactor
	if len(ps) == 0 || !rd.Contains(string(x.RespBody)) && !rd.Contains(fmt.Sprint(x.RespHead)) {
		return ps
	}
	body, ok := rd.JSON(x.RespBody)
	if !ok {
		body = rd.Bytes(x.RespBody)
	}
	shown := x.Op.CheckResponse(x.Status, rd.Header(x.RespHead), body)
	if len(shown) != len(ps) {
		return []spec.Problem{{Kind: spec.KindResponse, Message: fmt.Sprintf("%d problems against the contract; not shown, since the response echoes the API key", len(ps))}}
	}
	return shown
}
