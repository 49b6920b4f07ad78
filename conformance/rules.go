package conformance

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// A Problem is one way an answer breaks a rule, as a check reports it,
// the key hidden.
type Problem struct {
	Cause   Cause  // the rule broken: what the summary groups it under
	Want    string // the rule broken, in a line, where not every response's
	Text    string // such as "quantity: required (petId 11)"
	Field   string // the JSON field, such as "quantity"; "" for the whole answer or a header
	Record  string // the identifier of the listed record it is in; "" where it is in none
	Warning bool   // the rule is a warning (spec.SeverityWarning): it fails a check only under --strict
}

func texts(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Text
	}
	return out
}

// ResponseProblems lists how x's answer breaks the rules every answer
// keeps: the contract's Judge's, plus the suite's own: no 5xx (but 501
// where the contract gives no shape), and not still 429 after the waits
// the run allows. tolerated lists statuses the calling check accepts
// beyond the documented ones.
func (t *Target) ResponseProblems(x *Exchange, tolerated ...int) []Problem {
	switch x.Failure {
	case exchange.FailureNoAnswer:
		return []Problem{{Cause: spec.RuleNoAnswer, Text: "no response: " + t.secrets.Redactor().String(x.Err)}}
	case exchange.FailureCapped:
		return []Problem{{Cause: spec.RuleResponseTooLarge, Text: t.secrets.Redactor().String(x.Err)}}
	case exchange.FailureCut:
		return []Problem{{Cause: Cause(spec.RuleIncomplete), Text: "the answer ended early: " + t.secrets.Redactor().String(x.Err)}}
	}
	var ps []Problem
	notImplemented := x.Status == http.StatusNotImplemented && x.Op != nil && !x.Op.Shaped()
	switch {
	case x.Status == http.StatusTooManyRequests:
		ps = append(ps, Problem{Cause: spec.RuleRateLimited, Text: fmt.Sprintf("status 429: still rate limited after %d tries and %s of waiting (the run's allowance, --max-retry-wait, is %s)", maxAttempts, x.Waited.Round(time.Millisecond), t.cfg.MaxRetryWait)})
	case x.Status >= 500 && !notImplemented:
		ps = append(ps, Problem{Cause: spec.RuleServerError, Text: fmt.Sprintf("status %d: no 5xx is allowed", x.Status)})
	case x.Op == nil && !slices.Contains(tolerated, x.Status):
		ps = append(ps, Problem{Cause: Cause(spec.RuleStatus), Text: fmt.Sprintf("status %d is not documented: the request addresses no operation of the contract", x.Status)})
	}
	positions := map[int]string{}           // of the listed records problems are in, to their identifiers
	at := slices.Repeat([]int{-1}, len(ps)) // the position of each problem's record; -1 for none
	for _, v := range t.judged(x) {
		switch {
		case x.Status == http.StatusTooManyRequests && v.Rule != spec.RuleResponseType:
			continue // a rate limit is the target's right; only its media type is the contract's
		case v.Rule == spec.RuleStatus && (notImplemented || x.Status >= 500 || slices.Contains(tolerated, x.Status)):
			continue
		case notImplemented && v.Rule == spec.RuleResponseBody:
			continue // the contract gives no shape: 501 is an honest answer
		}
		p := Problem{Cause: Cause(v.Rule), Text: v.Message, Warning: spec.Severity(v.Rule) == spec.SeverityWarning}
		pos := -1
		if field, ok := strings.CutPrefix(v.Path, "$"); ok {
			if n, rest, ok := listPosition(field); ok && x.Op == t.inv.List {
				pos, field = n, rest
				positions[n] = ""
			}
			p.Field = strings.TrimPrefix(field, ".")
		}
		ps, at = append(ps, p), append(at, pos)
	}
	if len(positions) > 0 {
		listedIDs(x.RespBody, t.inv.Key, positions)
	}
	for i := range ps {
		if at[i] >= 0 {
			if ps[i].Record = positions[at[i]]; ps[i].Record == "" {
				ps[i].Record = fmt.Sprintf("at position %d", at[i])
			}
		}
		ps[i].Text = problemText(ps[i].Field, ps[i].Record, t.inv.Key, ps[i].Text)
	}
	return ps
}

// listedIDs fills in the identifier of the record at each position of
// the list body that positions holds, where the record has one.
func listedIDs(body []byte, key string, positions map[int]string) {
	d := jsontext.NewDecoder(bytes.NewReader(body))
	if d.PeekKind() != '[' {
		return
	}
	_, _ = d.ReadToken()
	for i := 0; d.PeekKind() != ']' && d.PeekKind() != 0; i++ {
		raw, err := d.ReadValue()
		if err != nil {
			return
		}
		if _, ok := positions[i]; ok {
			if r, err := decodeRecord(raw, key); err == nil {
				if id, ok := r.Field(key); ok {
					positions[i] = string(id)
				}
			}
		}
	}
}

// problemText words a problem with its field and record named:
// "quantity: required (petId 11)".
func problemText(field, record, key, message string) string {
	if field != "" && !strings.HasPrefix(message, field+" ") && !strings.HasPrefix(message, field+":") {
		message = field + ": " + message
	}
	switch {
	case record == "":
	case strings.HasPrefix(record, "at "):
		message += " (the record " + record + ")"
	default:
		message += " (" + key + " " + record + ")"
	}
	return message
}

// listPosition reads a field path that starts in a list's record, such
// as "[3].status": the position and the rest, ".status".
func listPosition(field string) (int, string, bool) {
	inner, rest, ok := strings.Cut(strings.TrimPrefix(field, "["), "]")
	if !ok || !strings.HasPrefix(field, "[") {
		return 0, "", false
	}
	pos, err := strconv.Atoi(inner)
	return pos, rest, err == nil
}

// Split parts the problems a check fails on from the ones it only
// notes: the warnings, and the problems of a listed record the first
// list already showed (the list's own check fails on those, once).
func (t *Target) Split(ps []Problem) (fails, notes []Problem) {
	for _, p := range ps {
		if p.Warning || p.Record != "" && t.badRecords[p.Record] {
			notes = append(notes, p)
		} else {
			fails = append(fails, p)
		}
	}
	return fails, notes
}

// note records problems a check does not fail on: a warning, and a
// known bad record (an observation).
func (t *Target) note(ps []Problem) {
	for _, p := range ps {
		if p.Warning {
			t.Warn("rule "+string(p.Cause), "%s", p.Text)
		} else {
			t.Observe("a record the list's check fails on, not this one", "%s", p.Text)
		}
	}
}

// judged is the Judge's verdict on x's answer, worded with the key
// hidden. Where the answer echoes the key, the problems are worded from
// the answer with the key hidden, since a message cuts long values and a
// cut key would escape the redactor; the verdict is always the answer's
// own.
func (t *Target) judged(x *Exchange) []spec.Violation {
	judge := func(shown *exchange.Exchange) []spec.Violation {
		if x.Op == nil {
			return t.judge.ErrorBody(shown)
		}
		return t.judge.Answer(shown, x.Op, x.Op.Name())
	}
	vs := judge(&x.Exchange)
	rd := t.secrets.Redactor()
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
	again := judge(&shown)
	if len(again) != len(vs) {
		return []spec.Violation{{Rule: vs[0].Rule, Message: fmt.Sprintf("%d problems against the contract; not shown, since the response echoes the API key", len(vs))}}
	}
	for i := range again {
		again[i].Message = exchange.Printable([]byte(rd.String(again[i].Message)))
	}
	return again
}

// ErrorProblems lists how x's body falls short of the Error envelope, as
// the Judge sees it, sent as JSON.
func (t *Target) ErrorProblems(x *Exchange) []Problem {
	const want = "an Error body: code and message non-empty strings, status equal to the HTTP status"
	var ps []Problem
	for _, p := range t.ResponseProblems(x, x.Status) {
		switch string(p.Cause) {
		case spec.RuleErrorStatus, spec.RuleErrorBody, spec.RuleErrorFieldEmpty, spec.RuleResponseBody, spec.RuleResponseType:
			p.Want = want
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 && x.MediaType() != "application/json" && !strings.HasSuffix(x.MediaType(), "+json") {
		ps = append(ps, Problem{Cause: Cause(spec.RuleErrorBody), Want: want, Text: fmt.Sprintf("Content-Type %s: an Error body is sent as application/json", exchange.Quote(x.RespHeader.Get("Content-Type")))})
	}
	return ps
}
