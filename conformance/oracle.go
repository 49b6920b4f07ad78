package conformance

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// The oracle: expectations and functions that take an exchange and
// return typed problems, needing no Target.
// The checks and the exploration's steps both call them, so a verdict is
// decided in one place.

// An Expectation is a verdict on an answer's status: the statuses the
// contract allows for one kind of request, the rule that says so, and the
// cause another status breaks.
type Expectation struct {
	Rule     string // what the contract wants, in a line
	Statuses []int
	Cause    Cause // the cause of another status
	Accepted Cause // the cause of a 2xx it does not allow, where not Cause
}

// The expectations the checks and the exploration share; each Rule says
// what it wants.
var (
	ExpectAuth        = Expectation{Rule: "a missing or invalid credential answers 401 with an Error body, before anything else", Statuses: []int{401}, Cause: spec.RuleAuthNotEnforced}
	ExpectMalformedID = Expectation{Rule: "an identifier that is not a valid one answers 400 or 404 with an Error body (it is an invalid value and addresses no record)", Statuses: []int{400, 404}, Cause: spec.RuleBadIDAccepted}
	ExpectUnknown     = Expectation{Rule: "a valid identifier nobody lists answers 404 with an Error body", Statuses: []int{404}, Cause: spec.RuleUnknownNot404}
	ExpectInvalidBody = Expectation{Rule: "an update whose body the schema forbids answers 400 with an Error body", Statuses: []int{400}, Cause: spec.RuleWrongErrorStatus, Accepted: spec.RuleInvalidAccepted}
	ExpectSilent      = Expectation{Rule: "an update the contract is silent on answers 200 or 400", Statuses: []int{200, 400}, Cause: spec.RuleWrongErrorStatus, Accepted: spec.RuleInvalidAccepted}
	ExpectSilentType  = Expectation{Rule: "a JSON body sent as another content type answers 200, 400 or 415", Statuses: []int{200, 400, 415}, Cause: spec.RuleWrongErrorStatus, Accepted: spec.RuleInvalidAccepted}
	ExpectUpdated     = Expectation{Rule: "a valid update answers 200 and the record updated", Statuses: []int{200}, Cause: spec.RuleValidRefused} // and the record: writtenProblems
	ExpectList        = Expectation{Rule: "the list with the key answers 200 and the records", Statuses: []int{200}, Cause: spec.RuleValidRefused}
)

// ExpectSilentBody is the expectation of an update with b, a body the
// contract is silent on.
func ExpectSilentBody(b Body) Expectation {
	if b.ContentType != "" {
		return ExpectSilentType
	}
	return ExpectSilent
}

// ExpectListed is the expectation of o, a read, on a listed record: its
// first documented 2xx. It is false where o documents none.
func ExpectListed(o *spec.Operation) (Expectation, bool) {
	i := slices.IndexFunc(o.Statuses, func(st int) bool { return st >= 200 && st < 300 })
	if i < 0 {
		return Expectation{}, false
	}
	return Expectation{Rule: fmt.Sprintf("%s of a listed record answers %d", o.Name(), o.Statuses[i]), Statuses: []int{o.Statuses[i]}, Cause: spec.RuleValidRefused}, true
}

// DocumentedBy reports whether o documents every status e allows.
func (e Expectation) DocumentedBy(o *spec.Operation) bool {
	return !slices.ContainsFunc(e.Statuses, func(st int) bool { return !o.Documents(st) })
}

// Problems judges x's status: none where it is one e allows; else one,
// whose cause is e's, but no-answer where none came and server-error on a
// 5xx (except for auth: whatever came, the credential was not checked
// first).
func (e Expectation) Problems(x *Exchange) []Problem {
	if slices.Contains(e.Statuses, x.Status) {
		return nil
	}
	c := e.Cause
	switch {
	case x.Status == 0:
		c = spec.RuleNoAnswer
	case c == spec.RuleAuthNotEnforced:
		// Whatever came instead, a 5xx too, the credential was not
		// checked first.
	case x.Status >= 500:
		c = spec.RuleServerError
	case x.Status < 300 && e.Accepted != "":
		c = e.Accepted
	}
	return []Problem{{Cause: c, Want: e.Rule, Text: fmt.Sprintf("status %s; want %s", gotLine(x), joinInts(e.Statuses, " or "))}}
}

// joinInts renders v with sep between the numbers.
func joinInts(v []int, sep string) string {
	return strings.Join(strings.Fields(strings.Trim(fmt.Sprint(v), "[]")), sep)
}

// Rules of the record-shaped verdicts.
const (
	ruleWritten   = "the answer to a valid update is the record updated: the same identifier and the values sent"
	ruleRecord    = "the answer is a record"
	ruleAsListed  = "a read of a record answers it as listed"
	ruleListed    = "the list is a JSON array of records"
	ruleUnique    = "one record per identifier"
	ruleSameTwice = "an update is idempotent: the same update twice gives the same record"
	ruleStored    = "after an accepted update, the list shows the record as the update answered it"
	// atOnceRule is what writes sent at once to one record must do.
	atOnceRule = "updates of one record sent at once each answer the values sent, and leave it as one of them left it (no lost or mixed update)"
)

// writtenProblems judges the answer x to a valid update of record id (its
// identifier named key) that set sets: 200 and the record, with its
// identifier and every value sent, which it returns.
func writtenProblems(x *Exchange, key string, id int64, sets Values) (Record, []Problem) {
	if ps := ExpectUpdated.Problems(x); len(ps) > 0 {
		return Record{ID: id}, ps
	}
	rid := strconv.FormatInt(id, 10)
	r, err := decodeRecord(x.RespBody, key)
	if err != nil {
		return Record{ID: id}, []Problem{{Cause: spec.RuleEchoMismatch, Want: ruleWritten, Record: rid, Text: "the answer is " + err.Error() + ", not the record updated"}}
	}
	var ps []Problem
	add := func(field, want string) {
		got, ok := r.Field(field)
		p := Problem{Cause: spec.RuleEchoMismatch, Want: ruleWritten, Field: field, Record: rid, Text: field + ": missing, want " + want}
		if ok {
			p.Text = fmt.Sprintf("%s: %s, want %s", field, exchange.Printable(got), want)
		}
		ps = append(ps, p)
	}
	if got, ok := r.Int(key); !ok || got != id {
		add(key, rid)
	}
	for _, f := range slices.Sorted(maps.Keys(sets)) {
		if got, _ := r.Field(f); canonical(got) != canonical(sets[f]) {
			add(f, "the value sent, "+string(sets[f]))
		}
	}
	r.ID = id
	return r, ps
}

// recordProblems judges x's body as a record whose identifier is key.
func recordProblems(x *Exchange, key string) (Record, []Problem) {
	r, err := decodeRecord(x.RespBody, key)
	if err != nil {
		return r, []Problem{{Cause: spec.RuleResponseBody, Want: ruleRecord, Text: err.Error()}}
	}
	return r, nil
}

// AsListedProblems judges got, a record a read answered, against want, the
// record as listed.
func AsListedProblems(want, got Record) []Problem {
	if got.Equal(want) {
		return nil
	}
	return []Problem{{Cause: spec.RuleRecordMismatch, Want: ruleAsListed, Record: strconv.FormatInt(want.ID, 10), Text: strings.Join(want.Diff(got), ", ")}}
}

// ListProblems judges x's body as a list of records whose identifier is
// key; ix is nil where it is none.
func ListProblems(ctx context.Context, x *Exchange, key string) (*Index, []Problem) {
	ix, err := DecodeList(ctx, x.RespBody, key)
	if err != nil {
		return nil, []Problem{{Cause: spec.RuleResponseBody, Want: ruleListed, Text: err.Error()}}
	}
	return ix, nil
}

// UniqueProblems judges a list's identifiers, named key: each listed
// once, each an int64.
func UniqueProblems(ix *Index, key string) []Problem {
	var ps []Problem
	add := func(text string) {
		ps = append(ps, Problem{Cause: spec.RuleDuplicateIDs, Want: ruleUnique, Text: text})
	}
	for i, id := range ix.Dups {
		if i == maxExamples {
			add(fmt.Sprintf("and %d more listed more than once", len(ix.Dups)-maxExamples))
			break
		}
		add(fmt.Sprintf("%s %d is listed more than once", key, id))
	}
	for _, b := range ix.Bad {
		add(b)
	}
	if ix.BadCount > len(ix.Bad) {
		add(fmt.Sprintf("and %d more records without an int64 %s", ix.BadCount-len(ix.Bad), key))
	}
	return ps
}

// IdempotentProblems judges second, the answer to an update sent again,
// against first, the answer to it the first time: the same record, but
// for the fields skip names (timestamps).
func IdempotentProblems(first, second Record, skip []string) []Problem {
	if first.EqualExcept(second, skip) {
		return nil
	}
	return []Problem{{Cause: spec.RuleNotIdempotent, Want: ruleSameTwice, Record: strconv.FormatInt(first.ID, 10),
		Text: fmt.Sprintf("first %s, second %s", first, second)}}
}
