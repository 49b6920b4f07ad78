package traffic

import (
	"fmt"
	"path"
	"slices"
)

// The rules, named stably so that CI can filter on them and a JUnit report
// has one test case per operation and rule.
const (
	RuleOperationUnknown = "request-operation-unknown"         // no operation of the contract has this method and path
	RuleParameter        = "request-parameter"                 // a path, query or header parameter breaks its schema
	RuleRequestBody      = "request-body"                      // the request body is missing, malformed or breaks its schema
	RuleRequestType      = "request-content-type"              // the request body is sent as a media type the operation does not take
	RuleAuthMissing      = "request-auth-missing"              // the operation requires a bearer credential and none was sent
	RuleStatus           = "response-status-undocumented"      // the operation documents no response for the status
	RuleResponseHeader   = "response-header"                   // a documented response header is missing or invalid
	RuleResponseType     = "response-content-type"             // the answer's Content-Type is not one the response documents
	RuleResponseBody     = "response-body-schema"              // the answer's body is malformed or breaks its schema
	RuleAuthNotEnforced  = "response-auth-not-enforced"        // a request without a bearer credential was answered other than 401
	RuleInvalidAccepted  = "response-invalid-request-accepted" // a request that breaks the contract was answered 2xx
	RuleEchoMismatch     = "response-echo-mismatch"            // an update's answer does not hold the values the request set
	RuleErrorStatus      = "error-status-mismatch"             // an Error body's status is not the HTTP status
	RuleErrorBody        = "error-body-schema"                 // an error with an undocumented status has no valid Error body
	RuleErrorFieldEmpty  = "error-field-empty"                 // a required text field of an Error body is empty
	RuleUnreachable      = "upstream-unreachable"              // the backend could not be reached or did not answer in time
	RuleIncomplete       = "upstream-body-incomplete"          // the backend's answer ended before its body did
	RuleTooLarge         = "body-too-large-to-check"           // a body is larger than the check limit; it passed unchecked
	RuleBodyNotRecorded  = "body-not-recorded"                 // a HAR entry has no body text to check
	RuleBodyEncoding     = "body-encoding-unsupported"         // a body is in a content coding the checks cannot read
)

// Severities of a rule: an error breaks the contract and fails a CI gate;
// a warning says what could not be checked.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Sides of an exchange a rule is about: what the client sent, or what the
// backend answered.
const (
	WhereRequest  = "request"
	WhereResponse = "response"
)

// A Rule is one rule the checks apply, with what it means.
type Rule struct {
	Name     string
	Where    string // WhereRequest or WhereResponse; "" for either
	Severity string
	About    string
}

// Rules lists every rule, in the order reports show them.
var Rules = []Rule{
	{RuleOperationUnknown, WhereRequest, SeverityError, "no operation of the contract has this method and path"},
	{RuleParameter, WhereRequest, SeverityError, "a path, query or header parameter breaks its schema or is missing"},
	{RuleRequestBody, WhereRequest, SeverityError, "the request body is missing, malformed or breaks its schema"},
	{RuleRequestType, WhereRequest, SeverityError, "the request body is sent as a media type the operation does not take"},
	{RuleAuthMissing, WhereRequest, SeverityError, "the operation requires a bearer credential and the request sent none"},
	{RuleStatus, WhereResponse, SeverityError, "the operation documents no response for the status"},
	{RuleResponseHeader, WhereResponse, SeverityError, "a documented response header is missing or invalid"},
	{RuleResponseType, WhereResponse, SeverityError, "the Content-Type is not one the response documents"},
	{RuleResponseBody, WhereResponse, SeverityError, "the body is malformed or breaks the documented schema"},
	{RuleAuthNotEnforced, WhereResponse, SeverityError, "a request without a bearer credential was answered other than 401"},
	{RuleInvalidAccepted, WhereResponse, SeverityError, "a request that breaks the contract was answered 2xx"},
	{RuleEchoMismatch, WhereResponse, SeverityError, "an update's answer does not hold the values the request set"},
	{RuleErrorStatus, WhereResponse, SeverityError, "an Error body's status is not the HTTP status"},
	{RuleErrorBody, WhereResponse, SeverityError, "an error answered with an undocumented status has no valid Error body"},
	{RuleErrorFieldEmpty, WhereResponse, SeverityError, "a required text field of an Error body is empty"},
	{RuleUnreachable, WhereResponse, SeverityError, "the backend could not be reached or did not answer in time"},
	{RuleIncomplete, WhereResponse, SeverityError, "the backend's answer ended before its body did"},
	{RuleTooLarge, "", SeverityWarning, "a body is larger than the check limit: it passed whole, unchecked"},
	{RuleBodyNotRecorded, "", SeverityWarning, "a HAR entry holds no body text, so the body was not checked"},
	{RuleBodyEncoding, "", SeverityWarning, "a body is in a content coding the checks cannot read (only gzip and deflate are decoded)"},
}

// RuleNamed returns the rule with the given name.
func RuleNamed(name string) (Rule, bool) {
	i := slices.IndexFunc(Rules, func(r Rule) bool { return r.Name == name })
	if i < 0 {
		return Rule{}, false
	}
	return Rules[i], true
}

// severity returns the severity of the named rule.
func severity(name string) string {
	if r, ok := RuleNamed(name); ok {
		return r.Severity
	}
	return SeverityError
}

// A RuleFilter leaves out the rules that match any of its patterns, such
// as "request-*" or "response-echo-mismatch" (path.Match syntax).
type RuleFilter []string

// NewRuleFilter checks each pattern: it must be well-formed and match at
// least one rule, so that a typo does not silently check everything.
func NewRuleFilter(patterns []string) (RuleFilter, error) {
	for _, p := range patterns {
		matched := false
		for _, r := range Rules {
			ok, err := path.Match(p, r.Name)
			if err != nil {
				return nil, fmt.Errorf("rule pattern %q: %v", p, err)
			}
			matched = matched || ok
		}
		if !matched {
			return nil, fmt.Errorf("rule pattern %q matches no rule; the rules are listed in the README", p)
		}
	}
	return RuleFilter(patterns), nil
}

// Keeps reports whether the filter keeps the named rule.
func (f RuleFilter) Keeps(rule string) bool {
	for _, p := range f {
		if ok, _ := path.Match(p, rule); ok {
			return false
		}
	}
	return true
}
