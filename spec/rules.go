package spec

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// The rules the Judge applies, named stably: CI filters on them, reports
// group by them, and the suite's failures carry them as their causes.
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
	RuleAuthNotEnforced  = "response-auth-not-enforced"        // a request without a valid credential was answered other than 401
	RuleInvalidAccepted  = "response-invalid-request-accepted" // a request that breaks the contract was answered 2xx
	RuleEchoMismatch     = "response-echo-mismatch"            // an update's answer does not hold the values the request set
	RuleErrorStatus      = "error-status-mismatch"             // an Error body's status is not the HTTP status
	RuleErrorBody        = "error-body-schema"                 // an error with an undocumented status has no valid Error body
	RuleErrorFieldEmpty  = "error-field-empty"                 // a required text field of an Error body is empty
	RuleNoAnswer         = "no-answer"                         // the server could not be reached or did not answer in time
	RuleIncomplete       = "answer-incomplete"                 // the answer ended, or stalled, before its body did
	RuleTooLarge         = "body-too-large-to-check"           // a body is longer than was kept; it was not checked
	RuleBodyNotRecorded  = "body-not-recorded"                 // a HAR entry has no body text to check
	RuleBodyEncoding     = "body-encoding-unsupported"         // a body is in a content coding the checks cannot read
	// An integer written 7.0 or 7e0: not one under OpenAPI 3.0.x, one
	// under 3.1 (JSON Schema 2020-12), where it is a warning.
	RuleIntegerNotation   = "integer-fraction-or-exponent"
	RuleIntegerNotation31 = "integer-fraction-or-exponent-3.1"
)

// The conformance suite's own rules: what only its sequences of calls
// show, so the Judge never gives them.
const (
	RuleResponseTooLarge  = "response-too-large"
	RuleRateLimited       = "rate-limited"
	RuleServerError       = "server-error"
	RuleWrongErrorStatus  = "wrong-error-status"
	RuleUnknownNot404     = "unknown-record-not-404"
	RuleBadIDAccepted     = "malformed-identifier-not-rejected"
	RuleValidRefused      = "valid-request-refused"
	RuleUnexpectedStatus  = "unexpected-status"
	RuleRecordMissing     = "record-missing"
	RuleDuplicateIDs      = "duplicate-identifiers"
	RuleRecordMismatch    = "record-mismatch"
	RuleWriteNotStored    = "write-not-stored"
	RuleStaleRead         = "stale-read"
	RuleNotIdempotent     = "not-idempotent"
	RuleOtherChanged      = "other-record-changed"
	RuleUnprompted        = "record-changed-without-write"
	RuleUnstable          = "records-unstable"
	RuleRejectedChanged   = "rejected-write-changed-data"
	RuleLostUpdate        = "lost-update"
	RuleRecordAppeared    = "record-appeared"
	RuleRecordVanished    = "record-vanished"
	RuleRestoreFailed     = "restore-failed"
	RuleStrictWarning     = "rfc-warning-strict"
	RuleExplorationOthers = "exploration"
)

// Severities of a rule: an error breaks the contract and fails a CI gate;
// a warning says what could not be checked.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Sides of an exchange a rule is about: what the client sent, or what
// came back.
const (
	WhereRequest  = "request"
	WhereResponse = "response"
)

// A Rule is one rule an exchange is judged by, with what it means. The
// Judge's rules are in Rules; the conformance suite adds its own, of the
// same kind, for what only a sequence of calls shows.
type Rule struct {
	Name     string
	Where    string // WhereRequest or WhereResponse; "" for either
	Severity string
	About    string
}

// Rules lists the Judge's rules, in the order reports show them; the
// suite's own are in SuiteRules.
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
	{RuleAuthNotEnforced, WhereResponse, SeverityError, "a request without a valid bearer credential was answered other than 401"},
	{RuleInvalidAccepted, WhereResponse, SeverityError, "a request that breaks the contract was answered 2xx"},
	{RuleEchoMismatch, WhereResponse, SeverityError, "an update's answer does not hold the values the request set"},
	{RuleErrorStatus, WhereResponse, SeverityError, "an Error body's status is not the HTTP status"},
	{RuleErrorBody, WhereResponse, SeverityError, "an error answered with an undocumented status has no valid Error body"},
	{RuleErrorFieldEmpty, WhereResponse, SeverityError, "a required text field of an Error body is empty"},
	{RuleNoAnswer, WhereResponse, SeverityError, "the server could not be reached or did not answer in time"},
	{RuleIncomplete, WhereResponse, SeverityError, "the answer ended, or stalled, before its body did"},
	{RuleIntegerNotation, WhereResponse, SeverityError, "an integer is written with a fraction or an exponent part (7.0, 7e0), which OpenAPI 3.0's integer is not"},
	{RuleIntegerNotation31, WhereResponse, SeverityWarning, "an integer is written with a fraction or an exponent part (7.0, 7e0): an integer under OpenAPI 3.1, but generated clients may fail to decode it"},
	{RuleTooLarge, "", SeverityWarning, "a body is longer than was kept: it was not checked"},
	{RuleBodyNotRecorded, "", SeverityWarning, "a HAR entry holds no body text, so the body was not checked"},
	{RuleBodyEncoding, "", SeverityWarning, "a body is in a content coding the checks cannot read (only gzip and deflate are decoded)"},
}

// SuiteRules lists the conformance suite's own rules, of the same kind as
// the Judge's. RuleNamed and Severity know both lists.
var SuiteRules = []Rule{
	{RuleResponseTooLarge, WhereResponse, SeverityError, "a response body past the cap"},
	{RuleRateLimited, WhereResponse, SeverityError, "still rate limited (429) after the allowed waits"},
	{RuleServerError, WhereResponse, SeverityError, "a 5xx answer"},
	{RuleWrongErrorStatus, WhereResponse, SeverityError, "a request the contract forbids answered with another error status"},
	{RuleUnknownNot404, WhereResponse, SeverityError, "an unknown record not answered 404"},
	{RuleBadIDAccepted, WhereResponse, SeverityError, "an identifier that is not a valid one not answered 400 or 404"},
	{RuleValidRefused, WhereResponse, SeverityError, "a valid request refused"},
	{RuleUnexpectedStatus, WhereResponse, SeverityError, "a status the check does not allow"},
	{RuleRecordMissing, WhereResponse, SeverityError, "a record that should be listed is not"},
	{RuleDuplicateIDs, WhereResponse, SeverityError, "records listed more than once"},
	{RuleRecordMismatch, WhereResponse, SeverityError, "a record answered differently from the list"},
	{RuleWriteNotStored, WhereResponse, SeverityError, "an update not stored as answered"},
	{RuleStaleRead, WhereResponse, SeverityError, "stale read (reads lag writes): a read after an acknowledged update showed the record as before it, a later read showed the update"},
	{RuleNotIdempotent, WhereResponse, SeverityError, "the same update twice gives different records"},
	{RuleOtherChanged, WhereResponse, SeverityError, "a request changed a record it did not address"},
	{RuleUnprompted, WhereResponse, SeverityError, "a record changed though no request wrote to it"},
	{RuleUnstable, WhereResponse, SeverityError, "the target does not hold its records still: lists with no write between them differ"},
	{RuleRejectedChanged, WhereResponse, SeverityError, "a rejected request changed data"},
	{RuleLostUpdate, WhereResponse, SeverityError, "concurrent updates lost or mixed"},
	{RuleRecordAppeared, WhereResponse, SeverityError, "a record appeared without a write that creates it"},
	{RuleRecordVanished, WhereResponse, SeverityError, "a record vanished"},
	{RuleRestoreFailed, WhereResponse, SeverityError, "data written could not be put back"},
	{RuleStrictWarning, WhereResponse, SeverityError, "what an RFC requires (a failure under --strict)"},
	{RuleExplorationOthers, WhereResponse, SeverityError, "exploration found a sequence that breaks the contract"},
}

// renamed maps the names rules had before the judge was shared, which a
// --ignore-rule pattern may still give, to their names now.
var renamed = map[string]string{
	"upstream-unreachable":     RuleNoAnswer,
	"upstream-body-incomplete": RuleIncomplete,
}

// RuleNamed returns the Judge's or the suite's rule with the given name.
func RuleNamed(name string) (Rule, bool) {
	for _, rs := range [][]Rule{Rules, SuiteRules} {
		if i := slices.IndexFunc(rs, func(r Rule) bool { return r.Name == name }); i >= 0 {
			return rs[i], true
		}
	}
	return Rule{}, false
}

// Severity returns the severity of the named rule: an error unless the
// rule is one of the Judge's warnings.
func Severity(name string) string {
	if r, ok := RuleNamed(name); ok {
		return r.Severity
	}
	return SeverityError
}

// A RuleFilter leaves out the rules that match any of its patterns, such
// as "request-*" or "response-echo-mismatch" (path.Match syntax).
type RuleFilter []string

// NewRuleFilter checks each pattern: it must be well-formed and match at
// least one rule, so that a typo does not silently check everything. A
// rule's former name stands for the rule.
func NewRuleFilter(patterns []string) (RuleFilter, error) {
	f := make(RuleFilter, 0, len(patterns))
	for _, p := range patterns {
		if now, ok := renamed[p]; ok {
			p = now
		}
		// A pattern of the former names, such as upstream-*, stands for
		// the rules they became.
		formerly := false
		for old, now := range renamed {
			if ok, _ := path.Match(p, old); ok && p != old {
				f = append(f, now)
				formerly = true
			}
		}
		if formerly {
			continue
		}
		matched := false
		for _, r := range Rules {
			ok, err := path.Match(p, r.Name)
			if err != nil {
				return nil, fmt.Errorf("rule pattern %q: %v", p, err)
			}
			matched = matched || ok
		}
		if !matched {
			return nil, fmt.Errorf("rule pattern %q matches no rule; the rules are: %s", p, strings.Join(mapped(Rules, func(r Rule) string { return r.Name }), ", "))
		}
		f = append(f, p)
	}
	return f, nil
}

// Keeps reports whether the filter keeps the named rule.
func (f RuleFilter) Keeps(rule string) bool {
	return !slices.ContainsFunc(f, func(p string) bool { ok, _ := path.Match(p, rule); return ok })
}

// A Violation is one way an exchange breaks the contract.
type Violation struct {
	Operation string // the operation's name (operationId, or METHOD /path); METHOD path where none matched
	Rule      string // the rule's name
	Where     string // WhereRequest or WhereResponse
	Path      string // where in the message: a JSON path such as $.status or $[3].status, or path.petId, header.Authorization
	Message   string // what was wrong, and what the contract wants
}
