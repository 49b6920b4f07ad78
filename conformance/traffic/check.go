package traffic

import (
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/pb33f/libopenapi/datamodel/high/base"

	"github.com/petstore/inventory-kit/spec"
)

// A Checker applies the contract to exchanges. It is safe for concurrent
// use.
type Checker struct {
	contract *spec.Contract
	filter   RuleFilter
	envelope envelope
	bearer   map[*spec.Operation]bool // operations that require a bearer credential
	verdicts *verdictCache
}

// NewChecker prepares the checks of c. Violations of rules the filter
// leaves out are not reported.
func NewChecker(c *spec.Contract, filter RuleFilter) *Checker {
	k := &Checker{contract: c, filter: filter, envelope: findEnvelope(c), bearer: map[*spec.Operation]bool{}, verdicts: newVerdictCache(4096)}
	var schemes map[string]string
	if comp := c.Model.Components; comp != nil && comp.SecuritySchemes != nil {
		schemes = map[string]string{}
		for name, s := range comp.SecuritySchemes.FromOldest() {
			if s != nil {
				schemes[name] = bearerKind(s.Type, s.Scheme)
			}
		}
	}
	for _, op := range c.Operations {
		reqs := op.Operation.Security
		if reqs == nil {
			reqs = c.Model.Security
		}
		k.bearer[op] = requiresBearer(reqs, schemes)
	}
	return k
}

// Contract returns the contract the checker applies.
func (c *Checker) Contract() *spec.Contract { return c.contract }

// Keeps reports whether violations of the named rule are reported.
func (c *Checker) Keeps(rule string) bool { return c.filter.Keeps(rule) }

// bearerKind returns "bearer" for a security scheme that sends a bearer
// token in the Authorization header, else "".
func bearerKind(typ, scheme string) string {
	switch {
	case typ == "http" && strings.EqualFold(scheme, "bearer"), typ == "oauth2", typ == "openIdConnect":
		return "bearer"
	}
	return ""
}

// requiresBearer reports whether every alternative of the security
// requirements needs a bearer token: then a request without one breaks
// the contract. An optional alternative ({}) or one the checker cannot
// judge (an API key in a query parameter, say) makes it false.
func requiresBearer(reqs []*base.SecurityRequirement, schemes map[string]string) bool {
	if len(reqs) == 0 {
		return false
	}
	for _, r := range reqs {
		if r == nil || r.ContainsEmptyRequirement || r.Requirements == nil || r.Requirements.Len() == 0 {
			return false
		}
		bearer := false
		for name := range r.Requirements.KeysFromOldest() {
			bearer = bearer || schemes[name] == "bearer"
		}
		if !bearer {
			return false
		}
	}
	return true
}

// A RequestVerdict is what the request half of an exchange showed.
type RequestVerdict struct {
	Op   *spec.Operation // nil: no operation matches
	Name string          // the operation's name, or METHOD path where none matches
	// Problems are the contract's problems with the request: no such
	// path or method, or its parameters, content type or body. The
	// missing credential is not among them.
	Problems     []spec.Problem
	NoCredential bool // the operation requires a bearer credential and none was sent
	Violations   []Violation
	body         any               // the decoded request body
	values       map[string]string // the path parameters
}

// Invalid reports whether the request breaks the contract in its path,
// method, parameters, content type or body.
func (v *RequestVerdict) Invalid() bool { return len(v.Problems) > 0 }

// CheckRequest checks the request half of x.
func (c *Checker) CheckRequest(x *Exchange) *RequestVerdict {
	r := x.Request
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet // served wherever GET is
	}
	op, values, ps := c.contract.Match(method, r.URL.Path)
	if op != nil && !clean(r.URL.Path) {
		op, values, ps = nil, nil, []spec.Problem{{Kind: spec.KindPath, Message: fmt.Sprintf("%s is not a path of the document: it has an empty, . or .. segment, or a trailing slash", r.URL.Path)}}
	}
	v := &RequestVerdict{Op: op, values: values}
	if op == nil {
		v.Name = r.Method + " " + r.URL.Path
		v.Problems = ps
		v.add(c, Violation{Rule: RuleOperationUnknown, Path: "url", Message: spec.Join(ps)})
		return v
	}
	v.Name = op.Name()
	if c.bearer[op] {
		if why := credentialProblem(r.Header); why != "" {
			v.NoCredential = true
			v.add(c, Violation{Rule: RuleAuthMissing, Path: "header.Authorization", Message: why + "; the contract requires Authorization: Bearer <token>"})
		}
	}
	tooLarge := x.reqTooLarge()
	unread := tooLarge || x.ReqEncoding != ""
	body, ps := op.CheckRequest(r, func(name string) string { return values[name] }, x.ReqBody)
	v.body = body
	for _, p := range ps {
		if unread && p.Kind == spec.KindBody {
			continue // the body was cut, or is still encoded: its problems are not the sender's
		}
		v.Problems = append(v.Problems, p)
		v.add(c, requestViolation(op, p))
	}
	switch {
	case tooLarge:
		v.body = nil
		v.add(c, Violation{Rule: RuleTooLarge, Path: "$", Message: fmt.Sprintf("the request body is %d bytes, more than the %d bytes checked: it passed unchecked", x.ReqSize, len(x.ReqBody))})
	case x.ReqEncoding != "":
		v.body = nil
		v.add(c, Violation{Rule: RuleBodyEncoding, Path: "header.Content-Encoding", Message: fmt.Sprintf("the request body is sent as %s, which the checks cannot read: it passed unchecked", x.ReqEncoding)})
	}
	return v
}

// clean reports whether a path has no empty, "." or ".." segment: the
// document's matcher would read /v1//inventory and /v1/inventory/ as
// /v1/inventory, which a server need not.
func clean(p string) bool {
	return p != "" && path.Clean(p) == p
}

// add appends a violation of the request side, if the filter keeps its rule.
func (v *RequestVerdict) add(c *Checker, vi Violation) {
	if !c.filter.Keeps(vi.Rule) {
		return
	}
	vi.Operation, vi.Where = v.Name, WhereRequest
	v.Violations = append(v.Violations, vi)
}

// requestViolation names the rule and the place of a request problem.
func requestViolation(op *spec.Operation, p spec.Problem) Violation {
	switch p.Kind {
	case spec.KindParameter:
		for _, prm := range op.Params {
			if p.Field == prm.Name || strings.HasPrefix(p.Field, prm.Name+".") || strings.HasPrefix(p.Field, prm.Name+"[") {
				return Violation{Rule: RuleParameter, Path: prm.In + "." + p.Field, Message: p.Message}
			}
		}
		return Violation{Rule: RuleParameter, Path: "parameter." + p.Field, Message: p.Message}
	case spec.KindContentType:
		return Violation{Rule: RuleRequestType, Path: "header.Content-Type", Message: p.Message}
	}
	return Violation{Rule: RuleRequestBody, Path: jsonPath(p.Field), Message: p.Message}
}

// credentialProblem says why a request carries no bearer credential, or
// "" if it carries one. It never repeats the header's value.
func credentialProblem(h http.Header) string {
	vs := h.Values("Authorization")
	switch len(vs) {
	case 0:
		return "no Authorization header"
	case 1:
	default:
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

// Check checks both halves of x and returns every violation the filter
// keeps, the request's first.
func (c *Checker) Check(x *Exchange) []Violation {
	rv := c.CheckRequest(x)
	return append(rv.Violations, c.CheckResponse(x, rv)...)
}
