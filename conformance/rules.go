package conformance

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// A Problem is one way an answer breaks a rule, as a check reports it:
// the rule (the cause the summary groups it under) and what was wrong,
// the key hidden.
type Problem struct {
	Cause Cause
	Text  string
}

// texts returns the problems' words.
func texts(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Text
	}
	return out
}

// ResponseProblems lists how x's answer breaks the rules every answer
// keeps: the contract's Judge's (an answer at all and a whole one, a
// documented status, the documented Content-Type, headers and schema, an
// Error body on every error), plus the suite's own: no 5xx (but 501 where
// the contract gives no shape), and not still 429 after the waits the run
// allows. tolerated lists statuses the calling check accepts beyond the
// documented ones.
func (t *Target) ResponseProblems(x *Exchange, tolerated ...int) []Problem {
	switch x.Failure {
	case exchange.FailureNoAnswer:
		return []Problem{{CauseNoAnswer, "no response: " + t.Redactor().String(x.Err)}}
	case exchange.FailureCapped:
		return []Problem{{CauseTooLarge, t.Redactor().String(x.Err)}}
	case exchange.FailureCut:
		return []Problem{{Cause(spec.RuleIncomplete), "the answer ended early: " + t.Redactor().String(x.Err)}}
	}
	var ps []Problem
	notImplemented := x.Status == http.StatusNotImplemented && x.Op != nil && !x.Op.Shaped()
	switch {
	case x.Status == http.StatusTooManyRequests:
		ps = append(ps, Problem{CauseRateLimited, fmt.Sprintf("status 429: still rate limited after %d tries and %s of waiting (the run's allowance, --max-retry-wait, is %s)", maxAttempts, x.Waited.Round(time.Millisecond), t.cfg.MaxRetryWait)})
	case x.Status >= 500 && !notImplemented:
		ps = append(ps, Problem{CauseServerError, fmt.Sprintf("status %d: no 5xx is allowed", x.Status)})
	case x.Op == nil && !slices.Contains(tolerated, x.Status):
		ps = append(ps, Problem{Cause(spec.RuleStatus), fmt.Sprintf("status %d is not documented: the request addresses no operation of the contract", x.Status)})
	}
	for _, v := range t.judged(x) {
		switch {
		case x.Status == http.StatusTooManyRequests && v.Rule != spec.RuleResponseType:
			continue // a rate limit is the target's right; only its media type is the contract's
		case v.Rule == spec.RuleStatus && (notImplemented || x.Status >= 500 || slices.Contains(tolerated, x.Status)):
			continue
		case notImplemented && v.Rule == spec.RuleResponseBody:
			continue // the contract gives no shape: 501 is an honest answer
		}
		ps = append(ps, Problem{Cause(v.Rule), v.Message})
	}
	return ps
}

// judged is the Judge's verdict on x's answer, worded with the key
// hidden. Where the answer echoes the key, the problems are worded from
// the answer with the key hidden, since a message cuts long values and a
// cut key would escape the redactor; the verdict is always the answer's
// own.
func (t *Target) judged(x *Exchange) []spec.Violation {
	op, name := x.Op, ""
	var vs []spec.Violation
	if op == nil {
		vs = t.judge.ErrorBody(&x.Exchange)
	} else {
		name = op.Name()
		vs = t.judge.Answer(&x.Exchange, op, name)
	}
	rd := t.Redactor()
	if len(vs) == 0 || !rd.Contains(string(x.RespBody)) && !rd.Contains(fmt.Sprint(x.RespHeader)) {
		for i := range vs {
			vs[i].Message = exchange.Printable([]byte(rd.String(vs[i].Message)))
		}
		return vs
	}
	shown := x.Exchange
	if body, ok := rd.JSON(x.RespBody); ok {
		shown.RespBody = body
	} else {
		shown.RespBody = rd.Bytes(x.RespBody)
	}
	if x.RespSize == int64(len(x.RespBody)) {
		shown.RespSize = int64(len(shown.RespBody)) // whole, and shorter with the key hidden: not cut
	}
	shown.RespHeader = rd.Header(x.RespHeader)
	var again []spec.Violation
	if op == nil {
		again = t.judge.ErrorBody(&shown)
	} else {
		again = t.judge.Answer(&shown, op, name)
	}
	if len(again) != len(vs) {
		return []spec.Violation{{Rule: vs[0].Rule, Message: fmt.Sprintf("%d problems against the contract; not shown, since the response echoes the API key", len(vs))}}
	}
	for i := range again {
		again[i].Message = exchange.Printable([]byte(rd.String(again[i].Message)))
	}
	return again
}

// ErrorProblems lists how x's body falls short of the Error envelope, as
// the Judge sees it: code and message non-empty strings, status an
// integer equal to the HTTP status, sent as JSON.
func (t *Target) ErrorProblems(x *Exchange) []Problem {
	var ps []Problem
	for _, p := range t.ResponseProblems(x, x.Status) {
		switch string(p.Cause) {
		case spec.RuleErrorStatus, spec.RuleErrorBody, spec.RuleErrorFieldEmpty, spec.RuleResponseBody, spec.RuleResponseType:
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 && x.MediaType() != "application/json" && !strings.HasSuffix(x.MediaType(), "+json") {
		ps = append(ps, Problem{Cause(spec.RuleErrorBody), fmt.Sprintf("Content-Type %s: an Error body is sent as application/json", exchange.Quote(x.RespHeader.Get("Content-Type")))})
	}
	return ps
}
