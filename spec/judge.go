package spec

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"math/big"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/pb33f/libopenapi/datamodel/high/base"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// A Judge applies the contract to exchanges: the one place that says
// whether an exchange keeps the contract, and which Rule it breaks where
// it does not. The validating proxy judges the traffic it passes, the HAR
// check a recording, the mock's journal its own answers, and the
// conformance suite every answer it gets. A Judge is safe for concurrent
// use.
type Judge struct {
	contract *Contract
	filter   RuleFilter
	envelope envelope
	bearer   map[*Operation]bool     // operations that require a bearer credential
	verdicts *hashCache[[]Violation] // answer verdicts by answerKey
}

// maxVerdicts bounds the answer verdicts a Judge keeps.
const maxVerdicts = 4096

// NewJudge prepares the judgement of exchanges with c. Violations of rules
// the filter leaves out are not reported.
func NewJudge(c *Contract, filter RuleFilter) *Judge {
	j := &Judge{contract: c, filter: filter, envelope: findEnvelope(c), bearer: map[*Operation]bool{},
		verdicts: newHashCache[[]Violation](maxVerdicts)}
	bearer := map[string]bool{} // security schemes that send a bearer token in the Authorization header
	if comp := c.Model.Components; comp != nil {
		for name, s := range comp.SecuritySchemes.FromOldest() {
			bearer[name] = s != nil && (s.Type == "http" && strings.EqualFold(s.Scheme, "bearer") || s.Type == "oauth2" || s.Type == "openIdConnect")
		}
	}
	for _, op := range c.Operations {
		reqs := op.Operation.Security
		if reqs == nil {
			reqs = c.Model.Security
		}
		j.bearer[op] = requiresBearer(reqs, bearer)
	}
	return j
}

// requiresBearer reports whether every alternative of the security
// requirements needs a bearer token: then a request without one breaks
// the contract. An optional alternative ({}) or one the judge cannot
// weigh (an API key in a query parameter, say) makes it false.
func requiresBearer(reqs []*base.SecurityRequirement, schemes map[string]bool) bool {
	if len(reqs) == 0 {
		return false
	}
	for _, r := range reqs {
		if r == nil || r.ContainsEmptyRequirement || r.Requirements == nil || r.Requirements.Len() == 0 {
			return false
		}
		bearer := false
		for name := range r.Requirements.KeysFromOldest() {
			bearer = bearer || schemes[name]
		}
		if !bearer {
			return false
		}
	}
	return true
}

// A RequestVerdict is what the request half of an exchange showed.
type RequestVerdict struct {
	Op   *Operation // nil: no operation matches
	Name string     // the operation's name, or METHOD path where none matches
	// Problems are the contract's problems with the request: no such path
	// or method, or its parameters, content type or body. A missing
	// credential is not among them.
	Problems     []Problem
	NoCredential bool // the operation requires a bearer credential and none was sent
	Violations   []Violation
	body         any               // the decoded request body
	values       map[string]string // the path parameters
}

// Invalid reports whether the request breaks the contract in its path,
// method, parameters, content type or body.
func (v *RequestVerdict) Invalid() bool { return len(v.Problems) > 0 }

// Request judges the request half of x.
func (j *Judge) Request(x *exchange.Exchange) *RequestVerdict {
	u, err := url.Parse(x.URL)
	if err != nil {
		u = &url.URL{}
	}
	p := cmp.Or(x.Path, u.Path) // the path under the contract's base path
	method := x.Method
	if method == http.MethodHead {
		method = http.MethodGet // served wherever GET is
	}
	op, values, ps := j.contract.Match(method, p)
	if op != nil && (p == "" || path.Clean(p) != p) {
		// The matcher would read /v1//inventory and /v1/inventory/ as
		// /v1/inventory, which a server need not.
		op, values, ps = nil, nil, []Problem{{Kind: KindPath, Message: fmt.Sprintf("%s is not a path of the document: it has an empty, . or .. segment, or a trailing slash", p)}}
	}
	v := &RequestVerdict{Op: op, values: values}
	if op == nil {
		v.Name = x.Method + " " + p
		v.Problems = ps
		v.add(j, Violation{Rule: RuleOperationUnknown, Path: "url", Message: Join(ps)})
		return v
	}
	v.Name = op.Name()
	if j.bearer[op] {
		if why := credentialProblem(x.Header); why != "" {
			v.NoCredential = true
			v.add(j, Violation{Rule: RuleAuthMissing, Path: "header.Authorization", Message: why + "; the contract requires Authorization: Bearer <token>"})
		}
	}
	r := &http.Request{Method: x.Method, URL: &url.URL{Path: p, RawQuery: u.RawQuery}, Header: x.Header}
	unread := x.ReqCut() || x.BodyEncoding != ""
	body, ps := op.CheckRequest(r, func(name string) string { return values[name] }, x.Body)
	v.body = body
	for _, p := range ps {
		if unread && p.Kind == KindBody {
			continue // the body was cut, or is still encoded: its problems are not the sender's
		}
		v.Problems = append(v.Problems, p)
		v.add(j, requestViolation(op, p))
	}
	switch {
	case x.ReqCut():
		v.body = nil
		v.add(j, Violation{Rule: RuleTooLarge, Path: "$", Message: fmt.Sprintf("the request body is %d bytes, more than the %d bytes kept: it was not checked", x.BodySize, len(x.Body))})
	case x.BodyEncoding != "":
		v.body = nil
		v.add(j, Violation{Rule: RuleBodyEncoding, Path: "header.Content-Encoding", Message: fmt.Sprintf("the request body is sent as %s, which the checks cannot read: it was not checked", x.BodyEncoding)})
	}
	return v
}

func (v *RequestVerdict) add(j *Judge, vi Violation) {
	v.Violations = j.kept(v.Violations, v.Name, WhereRequest, vi)
}

// kept appends to vs those of add whose rules the filter keeps, naming
// their operation and side.
func (j *Judge) kept(vs []Violation, name, where string, add ...Violation) []Violation {
	for _, vi := range add {
		if j.filter.Keeps(vi.Rule) {
			vi.Operation, vi.Where = name, where
			vs = append(vs, vi)
		}
	}
	return vs
}

// requestViolation names the rule and the place of a request problem.
func requestViolation(op *Operation, p Problem) Violation {
	switch p.Kind {
	case KindParameter:
		for _, prm := range op.Params {
			if p.Field == prm.Name || strings.HasPrefix(p.Field, prm.Name+".") || strings.HasPrefix(p.Field, prm.Name+"[") {
				return Violation{Rule: RuleParameter, Path: prm.In + "." + p.Field, Message: p.Message}
			}
		}
		return Violation{Rule: RuleParameter, Path: "parameter." + p.Field, Message: p.Message}
	case KindContentType:
		return Violation{Rule: RuleRequestType, Path: "header.Content-Type", Message: p.Message}
	}
	return Violation{Rule: RuleRequestBody, Path: Under("$", p.Field), Message: p.Message}
}

// credentialProblem says why a request carries no bearer credential, or
// "" if it carries one. It never repeats the header's value.
func credentialProblem(h http.Header) string {
	vs := h.Values("Authorization")
	if len(vs) == 0 {
		return "no Authorization header"
	}
	if len(vs) > 1 {
		return "more than one Authorization header"
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(vs[0]), " ")
	switch {
	case scheme == "":
		return "the Authorization header is empty"
	case !strings.EqualFold(scheme, "Bearer"):
		return "the Authorization header does not use the Bearer scheme"
	case strings.TrimSpace(token) == "":
		return "Bearer without a token"
	}
	return ""
}

// Exchange judges both halves of x and returns the request's verdict and
// every violation the filter keeps, the request's first.
func (j *Judge) Exchange(x *exchange.Exchange) (*RequestVerdict, []Violation) {
	rv := j.Request(x)
	return rv, append(slices.Clip(rv.Violations), j.Response(x, rv)...)
}

// Response judges the answer of x, given what its request showed: the
// answer's own rules (Answer), a missing credential answered other than
// 401, an invalid request answered 2xx, and an update's answer holding
// the values the request set. An exchange to no operation is not judged
// here.
func (j *Judge) Response(x *exchange.Exchange, rv *RequestVerdict) []Violation {
	op := rv.Op
	if op == nil {
		return nil
	}
	vs := j.Answer(x, op, rv.Name)
	if x.Status == 0 {
		return vs
	}
	add := func(vi ...Violation) { vs = j.kept(vs, rv.Name, WhereResponse, vi...) }
	status := x.Status
	if rv.NoCredential && status != http.StatusUnauthorized {
		add(Violation{Rule: RuleAuthNotEnforced, Path: "status", Message: fmt.Sprintf("answered %d to a request without a bearer credential; the contract answers 401", status)})
	}
	if rv.Invalid() && status >= 200 && status < 300 {
		add(Violation{Rule: RuleInvalidAccepted, Path: "status", Message: fmt.Sprintf("answered %d to a request that breaks the contract (%s); want a 4xx", status, Join(rv.Problems))})
	}
	if resp := op.Response(status); resp != nil && resp.Schema != nil && status < 300 && readable(x) && (op.Method == http.MethodPatch || op.Method == http.MethodPut) && !rv.Invalid() {
		add(echoViolations(resp.Schema, rv.body, rv.values, x.RespBody)...)
	}
	return vs
}

// readable reports whether x's answer has a body the judge can read whole.
func readable(x *exchange.Exchange) bool {
	return !x.RespNotRecorded && !x.RespCut() && x.RespEncoding == "" && x.Failure == "" && x.Method != http.MethodHead &&
		x.Status != http.StatusNoContent && x.Status != http.StatusNotModified
}

// Answer judges what depends on the answer to op alone, whoever sent the
// request: an answer at all and a whole one, a documented status, the
// documented headers, Content-Type and body schema, and the Error
// envelope; name names the operation. The verdict is kept for answers seen
// again (a list polled between writes): see answerKey.
func (j *Judge) Answer(x *exchange.Exchange, op *Operation, name string) []Violation {
	var vs []Violation
	add := func(vi ...Violation) { vs = j.kept(vs, name, WhereResponse, vi...) }
	switch x.Failure {
	case exchange.FailureNoAnswer:
		add(Violation{Rule: RuleNoAnswer, Path: "status", Message: x.Err})
		return vs
	case exchange.FailureCut:
		add(Violation{Rule: RuleIncomplete, Path: "$", Message: fmt.Sprintf("the answer (%d) ended before its body did: %s", x.Status, x.Err)})
	}
	if x.Status == 0 {
		return vs
	}
	resp := op.Response(x.Status)
	key := j.answerKey(x, op, resp)
	cached, ok := j.verdicts.get(key)
	if !ok {
		cached = j.answer(x, op, resp)
		j.verdicts.put(key, cached)
	}
	add(cached...)
	switch {
	case x.RespEncoding != "":
		add(Violation{Rule: RuleBodyEncoding, Path: "header.Content-Encoding", Message: fmt.Sprintf("the answer is sent as %s, which the checks cannot read: its body was not checked", x.RespEncoding)})
	case x.RespNotRecorded:
		add(Violation{Rule: RuleBodyNotRecorded, Path: "$", Message: "the recording holds no body text: the body was not checked"})
	case x.RespCut() && x.Failure != exchange.FailureCut:
		add(Violation{Rule: RuleTooLarge, Path: "$", Message: fmt.Sprintf("the response body is %d bytes, more than the %d bytes kept: it was not checked", x.RespSize, len(x.RespBody))})
	}
	return vs
}

// ErrorBody judges an answer to a request that addresses no operation of
// the contract: an error carries an Error body, sent as JSON, whose status
// is the HTTP status.
func (j *Judge) ErrorBody(x *exchange.Exchange) []Violation {
	if x.Status < 400 || !readable(x) {
		return nil
	}
	return j.kept(nil, "", WhereResponse, j.envelope.check(x.Status, x.RespHeader.Get("Content-Type"), x.RespBody, false)...)
}

// answer judges an answer, without the filter or the names, for the cache.
func (j *Judge) answer(x *exchange.Exchange, op *Operation, resp *Response) []Violation {
	var vs []Violation
	whole := readable(x)
	for _, vi := range classify(op.CheckResponse(x.Status, x.RespHeader, x.RespBody)) {
		if vi.Rule == RuleResponseBody && !whole {
			continue // the body was not kept whole: its problems would be the recording's
		}
		vs = append(vs, vi)
	}
	if whole {
		vs = append(vs, j.envelope.check(x.Status, x.RespHeader.Get("Content-Type"), x.RespBody, resp != nil)...)
	}
	return vs
}

// answerKey hashes what an answer's verdict depends on: the operation,
// status, Content-Type, documented headers and body. With 64 bits and a
// few thousand entries a collision is vanishingly unlikely.
func (j *Judge) answerKey(x *exchange.Exchange, op *Operation, resp *Response) uint64 {
	var m maphash.Hash
	m.SetSeed(j.verdicts.seed)
	m.WriteString(op.Method)
	m.WriteString(op.Path)
	var flags [8]byte
	b := strconv.AppendInt(flags[:0], int64(x.Status), 10)
	if readable(x) {
		b = append(b, 'r')
	}
	m.Write(b)
	m.WriteByte(0)
	for _, v := range x.RespHeader["Content-Type"] {
		m.WriteString(v)
		m.WriteByte(0)
	}
	if resp != nil {
		for _, p := range resp.Headers {
			m.WriteString(p.Name)
			for _, v := range x.RespHeader.Values(p.Name) {
				m.WriteByte(1)
				m.WriteString(v)
			}
			m.WriteByte(0)
		}
	}
	m.Write(x.RespBody)
	return m.Sum64()
}

// classify names the place of each problem Operation.CheckResponse found,
// by the rule the problem carries: the status, a documented header (the
// field is the header's name), the Content-Type, or the body (a rule of
// its own, such as integer notation, or response-body).
func classify(ps []Problem) []Violation {
	vs := make([]Violation, 0, len(ps))
	for _, p := range ps {
		switch p.Rule {
		case RuleStatus:
			vs = append(vs, Violation{Rule: RuleStatus, Path: "status", Message: p.Message})
		case RuleResponseHeader:
			vs = append(vs, Violation{Rule: RuleResponseHeader, Path: "header." + p.Field, Message: p.Message})
		case RuleResponseType:
			vs = append(vs, Violation{Rule: RuleResponseType, Path: "header.Content-Type", Message: "Content-Type " + p.Message})
		default: // the body: a rule of its own, or response-body-schema
			vs = append(vs, Violation{Rule: cmp.Or(p.Rule, RuleResponseBody), Path: Under("$", p.Field), Message: p.Message})
		}
	}
	return vs
}

// echoViolations checks that an update's answer holds what the request
// set: each field sent that the answer's schema has, and each path
// parameter the answer's schema has (petId), has the value sent.
func echoViolations(schema *Schema, sent any, values map[string]string, body []byte) []Violation {
	got, err := DecodeJSON(body)
	answer, ok := got.(map[string]any)
	if err != nil || !ok {
		return nil // the schema check says what is wrong
	}
	props := schema.PropertyNames()
	var vs []Violation
	mismatch := func(name, sentText string, g any, present bool) {
		gotText := "nothing"
		if present {
			gotText = string(AppendJSON(nil, g))
		}
		vs = append(vs, Violation{Rule: RuleEchoMismatch, Path: "$." + name, Message: fmt.Sprintf("%s: the request set %s, the answer holds %s", name, sentText, gotText)})
	}
	if obj, ok := sent.(map[string]any); ok {
		for _, name := range keysIn(obj, props) {
			if g, present := answer[name]; !present || !SameJSON(obj[name], g) {
				mismatch(name, string(AppendJSON(nil, obj[name])), g, present)
			}
		}
	}
	for _, name := range keysIn(values, props) {
		g, present := answer[name]
		var sentValue any = values[name]
		if _, isNumber := g.(json.Number); isNumber {
			sentValue = json.Number(values[name])
		}
		if !present || !SameJSON(sentValue, g) {
			mismatch(name, string(AppendJSON(nil, sentValue)), g, present)
		}
	}
	return vs
}

// keysIn returns the keys of m that are among names, sorted.
func keysIn[V any](m map[string]V, names []string) []string {
	return slices.DeleteFunc(slices.Sorted(maps.Keys(m)), func(k string) bool { return !slices.Contains(names, k) })
}

// SameJSON compares two decoded JSON values; numbers by value, so 5 and
// 5.0 are the same.
func SameJSON(a, b any) bool {
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
		return string(AppendJSON(nil, a)) == string(AppendJSON(nil, b))
	}
	return a == b
}
