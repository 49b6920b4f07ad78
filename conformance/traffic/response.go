package traffic

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/petstore/inventory-kit/spec"
)

// CheckResponse checks the answer of x, given what its request showed.
// An exchange without an answer (Status 0) or to no operation of the
// contract is not checked here.
func (c *Checker) CheckResponse(x *Exchange, rv *RequestVerdict) []Violation {
	op := rv.Op
	if op == nil || x.Status == 0 {
		return nil
	}
	var vs []Violation
	add := func(vi Violation) {
		if c.filter.Keeps(vi.Rule) {
			vi.Operation, vi.Where = rv.Name, WhereResponse
			vs = append(vs, vi)
		}
	}
	status := x.Status
	if rv.NoCredential && status != http.StatusUnauthorized {
		add(Violation{Rule: RuleAuthNotEnforced, Path: "status", Message: fmt.Sprintf("answered %d to a request without a bearer credential; the contract answers 401", status)})
	}
	if rv.Invalid() && status >= 200 && status < 300 {
		add(Violation{Rule: RuleInvalidAccepted, Path: "status", Message: fmt.Sprintf("answered %d to a request that breaks the contract (%s); want a 4xx", status, spec.Join(rv.Problems))})
	}
	for _, vi := range c.answerViolations(x, op) {
		add(vi)
	}
	if resp := op.Response(status); resp != nil && resp.Schema != nil && status < 300 && hasBody(x) {
		if (op.Method == http.MethodPatch || op.Method == http.MethodPut) && !rv.Invalid() {
			for _, vi := range echoViolations(resp.Schema, rv.body, rv.values, x.RespBody) {
				add(vi)
			}
		}
	}
	switch {
	case x.RespEncoding != "":
		add(Violation{Rule: RuleBodyEncoding, Path: "header.Content-Encoding", Message: fmt.Sprintf("the answer is sent as %s, which the checks cannot read: its body was not checked", x.RespEncoding)})
	case x.RespNotRecorded:
		add(Violation{Rule: RuleBodyNotRecorded, Path: "$", Message: "the recording holds no body text: the body was not checked"})
	case x.respTooLarge():
		add(Violation{Rule: RuleTooLarge, Path: "$", Message: fmt.Sprintf("the response body is %d bytes, more than the %d bytes checked: it passed unchecked", x.RespSize, len(x.RespBody))})
	}
	return vs
}

// hasBody reports whether x's answer has a body the checks can read.
func hasBody(x *Exchange) bool {
	return !x.RespNotRecorded && !x.respTooLarge() && x.RespEncoding == "" && x.Request.Method != http.MethodHead &&
		x.Status != http.StatusNoContent && x.Status != http.StatusNotModified
}

// answerViolations checks what depends on the answer alone: the documented
// status, headers, Content-Type and body schema, and the Error envelope.
// The result is a function of the operation, status, Content-Type,
// documented headers and body, so it is kept for answers seen again.
func (c *Checker) answerViolations(x *Exchange, op *spec.Operation) []Violation {
	resp := op.Response(x.Status)
	readable := hasBody(x)
	key := verdictKey{op: op, status: x.Status, readable: readable, head: x.Request.Method == http.MethodHead}
	hash := c.verdicts.hash(key, x.RespHeader, resp, x.RespBody)
	if vs, ok := c.verdicts.get(hash); ok {
		return vs
	}
	var vs []Violation
	if resp == nil {
		vs = append(vs, Violation{Rule: RuleStatus, Path: "status", Message: fmt.Sprintf("status %d is not documented for %s (documented: %s)", x.Status, op.Name(), strings.Join(op.Codes(), ", "))})
	} else {
		for _, vi := range classify(resp, op.CheckResponse(x.Status, x.RespHeader, x.RespBody)) {
			if vi.Rule == RuleResponseBody && !readable {
				continue // the body was not kept whole: its problems would be the recording's
			}
			vs = append(vs, vi)
		}
	}
	if readable {
		vs = append(vs, c.envelope.check(op.Name(), x.Status, x.RespHeader.Get("Content-Type"), x.RespBody, resp != nil)...)
	}
	c.verdicts.put(hash, vs)
	return vs
}

// classify names the rule and place of each problem Operation.CheckResponse
// found with a documented response. It lists, in order: documented
// headers (the field is the header's name), then a Content-Type that is
// not documented (which ends the list), then the body's problems.
func classify(resp *spec.Response, ps []spec.Problem) []Violation {
	var vs []Violation
	headers := true
	for i, p := range ps {
		switch {
		case headers && isHeader(resp, p.Field):
			vs = append(vs, Violation{Rule: RuleResponseHeader, Path: "header." + p.Field, Message: p.Message})
		case i == len(ps)-1 && p.Field == "Content-Type" && strings.HasPrefix(p.Message, `"`) && strings.Contains(p.Message, "; want "):
			vs = append(vs, Violation{Rule: RuleResponseType, Path: "header.Content-Type", Message: "Content-Type " + p.Message})
		default:
			headers = false
			vs = append(vs, Violation{Rule: RuleResponseBody, Path: jsonPath(p.Field), Message: p.Message})
		}
	}
	return vs
}

// isHeader reports whether a problem's field names one of the response's
// documented headers.
func isHeader(resp *spec.Response, field string) bool {
	name, _, _ := strings.Cut(field, ".")
	name, _, _ = strings.Cut(name, "[")
	return slices.ContainsFunc(resp.Headers, func(h *spec.Param) bool { return strings.EqualFold(h.Name, name) })
}

// echoViolations checks that an update's answer holds what the request
// set: each field sent that the answer's schema has, and each path
// parameter the answer's schema has (petId), has the value sent.
func echoViolations(schema *spec.Schema, sent any, values map[string]string, body []byte) []Violation {
	got, err := spec.DecodeJSON(body)
	answer, ok := got.(map[string]any)
	if err != nil || !ok {
		return nil // the schema check says what is wrong
	}
	props := schema.PropertyNames()
	var vs []Violation
	mismatch := func(name, sentText string, g any, present bool) {
		gotText := "nothing"
		if present {
			gotText = display(g)
		}
		vs = append(vs, Violation{Rule: RuleEchoMismatch, Path: "$." + name, Message: fmt.Sprintf("%s: the request set %s, the answer holds %s", name, sentText, gotText)})
	}
	if obj, ok := sent.(map[string]any); ok {
		names := make([]string, 0, len(obj))
		for name := range obj {
			if slices.Contains(props, name) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			if g, present := answer[name]; !present || !sameJSON(obj[name], g) {
				mismatch(name, display(obj[name]), g, present)
			}
		}
	}
	names := make([]string, 0, len(values))
	for name := range values {
		if slices.Contains(props, name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		g, present := answer[name]
		var sentValue any = values[name]
		if _, isNumber := g.(json.Number); isNumber {
			sentValue = json.Number(values[name])
		}
		if !present || !sameJSON(sentValue, g) {
			mismatch(name, display(sentValue), g, present)
		}
	}
	return vs
}

// sameJSON compares two decoded JSON values; numbers by value, so 5 and
// 5.0 are the same.
func sameJSON(a, b any) bool {
	na, okA := a.(json.Number)
	nb, okB := b.(json.Number)
	if okA && okB {
		ra, ok1 := new(big.Rat).SetString(na.String())
		rb, ok2 := new(big.Rat).SetString(nb.String())
		return ok1 && ok2 && ra.Cmp(rb) == 0
	}
	if okA != okB {
		return false
	}
	switch a.(type) {
	case map[string]any, []any:
		return string(spec.AppendJSON(nil, a)) == string(spec.AppendJSON(nil, b))
	}
	return a == b
}

// display renders a decoded JSON value for a message.
func display(v any) string {
	return string(spec.AppendJSON(nil, v))
}
