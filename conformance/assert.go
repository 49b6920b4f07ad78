package conformance

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/spec"
)

// Names of the report entries the suite adds. Tools reading the JSON report
// can select on them.
const (
	entryObservation   = "observation"           // where the contract is silent, what the target chose
	entryWarning       = "warning"               // what only HTTP's RFCs require
	entryRestoreFailed = "restore failed"        // a record that could not be put back
	entryCause         = "cause"                 // what the contract wanted and what came instead, for grouping failures
	entryNotJudged     = "not judged"            // why a check was skipped: the target gave it nothing to judge
	EntryExploration   = "exploration"           // what the exploration did
	EntryExploreThin   = "exploration too short" // too few steps to mean much (exploreResult.Thin): fails nothing
)

// A warning is what only an RFC requires: it names the section.
type warning struct {
	Text string
	RFC  string // such as "RFC 9110 section 11.6.1"
}

func (w warning) String() string { return w.Text + " (" + w.RFC + ")" }

// Observe records what the target chose where the contract is silent.
func (t *Target) Observe(what, format string, args ...any) {
	ginkgo.AddReportEntry(entryObservation, what+": "+fmt.Sprintf(format, args...), ginkgo.ReportEntryVisibilityFailureOrVerbose)
}

// Warn records what only an RFC requires; with Config.Strict it fails the
// check instead.
func (t *Target) Warn(rfc, format string, args ...any) {
	ginkgo.GinkgoHelper()
	w := warning{Text: fmt.Sprintf(format, args...), RFC: rfc}
	if t.cfg.Strict {
		t.Because(spec.RuleStrictWarning, w.String())
		ginkgo.Fail("--strict makes this warning a failure: " + w.String())
	}
	ginkgo.AddReportEntry(entryWarning, w, ginkgo.ReportEntryVisibilityFailureOrVerbose)
}

// gotLine says in a few words what came back.
func gotLine(x *Exchange) string {
	if x.Status == 0 {
		return "no response"
	}
	return strconv.Itoa(x.Status)
}

// digits are replaced by N in a cause, so that one defect seen with
// different values is one cause.
var digits = regexp.MustCompile(`-?[0-9]+`)

// Do sends r and fails the check unless the response keeps the rules every
// response keeps (see ResponseProblems). tolerated lists statuses the
// calling check accepts beyond the documented ones.
func (t *Target) Do(ctx context.Context, r Request, tolerated ...int) *Exchange {
	ginkgo.GinkgoHelper()
	x := t.Send(ctx, r)
	t.expectKept(x, false, tolerated...)
	return x
}

// DoShape is Do for the check of a list's shape: a problem in a record
// the first list showed fails it too.
func (t *Target) DoShape(ctx context.Context, r Request) *Exchange {
	ginkgo.GinkgoHelper()
	x := t.Send(ctx, r)
	t.expectKept(x, true)
	return x
}

// everyResponse is what every response keeps.
const everyResponse = "every response: a documented status, no 5xx, application/json where a body is documented, a body valid against the contract, an Error body on every error"

// expectKept fails the check unless x keeps the rules every response
// keeps; warnings and (unless all) known bad records are noted.
func (t *Target) expectKept(x *Exchange, all bool, tolerated ...int) {
	ginkgo.GinkgoHelper()
	fails, notes := t.Split(t.ResponseProblems(x, tolerated...))
	if all {
		fails, notes = Errors(append(fails, notes...)), nil
	}
	t.note(notes)
	if len(fails) > 0 {
		t.FailWith(x, everyResponse, fails)
	}
}

// Errors returns the problems that are not warnings.
func Errors(ps []Problem) []Problem {
	return slices.DeleteFunc(ps, func(p Problem) bool { return p.Warning })
}

// Expect fails the check unless x keeps e.
func (t *Target) Expect(x *Exchange, e Expectation) {
	ginkgo.GinkgoHelper()
	t.ExpectNone(x, e.Problems(x))
}

// ExpectNone fails the check with ps, the problems the oracle found in x,
// if there are any: the first one's cause and rule name the failure.
func (t *Target) ExpectNone(x *Exchange, ps []Problem) {
	ginkgo.GinkgoHelper()
	if len(ps) > 0 {
		t.FailWith(x, cmp.Or(ps[0].Want, everyResponse), ps)
	}
}

// FailWith fails the check with the exchange and the problems found; the
// cause is the first problem's rule (see FailBecause to name another).
func (t *Target) FailWith(x *Exchange, want string, problems []Problem) {
	ginkgo.GinkgoHelper()
	t.FailBecause(problems[0].Cause, x, want, texts(problems))
}

// List lists the records with the key and decodes them, failing the check
// if the answer is not a valid list. While no request that could write was
// sent since the last list, that one is taken again.
func (t *Target) List(ctx context.Context) (*Index, *Exchange) {
	ginkgo.GinkgoHelper()
	if t.listBroken != "" {
		NotJudged(t.listBroken)
	}
	gen := t.writes.Load()
	var x *Exchange
	var ix *Index
	if l := t.lists.Load(); l != nil && l.gen == gen {
		x, ix = l.x, l.ix
	} else {
		x = t.Send(ctx, Request{Method: t.inv.List.Method, Path: t.inv.List.Path})
	}
	t.expectKept(x, false)
	t.Expect(x, ExpectList)
	if ix == nil {
		var ps []Problem
		ix, ps = ListProblems(ctx, x, t.inv.Key)
		t.ExpectNone(x, ps)
		t.lists.Store(&listed{x, ix, gen})
	}
	return ix, x
}

// DecodeRecord decodes a record from x's body, failing the check if it is
// not one.
func (t *Target) DecodeRecord(x *Exchange) Record {
	ginkgo.GinkgoHelper()
	r, ps := recordProblems(x, t.inv.Key)
	t.ExpectNone(x, ps)
	return r
}

// NotJudged skips the check because the target gave it nothing to
// judge, saying why (a report entry the summary counts).
func NotJudged(why string) {
	ginkgo.GinkgoHelper()
	ginkgo.AddReportEntry(entryNotJudged, why, ginkgo.ReportEntryVisibilityNever)
	ginkgo.Skip("not judged: " + why)
}

// RequirePet skips the check when the target lists no record to address.
func (t *Target) RequirePet() int64 {
	if t.listBroken != "" {
		NotJudged(t.listBroken)
	}
	if t.petID == 0 {
		NotJudged("the target lists no record to address")
	}
	return t.petID
}

// RequireStable skips the check when the target does not hold its records
// still: what a request did to them cannot be told from what happens to
// them anyway.
func (t *Target) RequireStable() {
	if t.unstable != "" {
		NotJudged(t.unstable)
	}
}

// RequireMutations skips the check unless writes are allowed and the
// target gives a record to write to and holds it still.
func (t *Target) RequireMutations() int64 {
	if !t.cfg.AllowMutations {
		ginkgo.Skip("mutating check: skipped without --allow-mutations (no data was changed)")
	}
	id := t.RequirePet()
	t.RequireStable()
	return id
}

// Current returns the record of the target's pet as listed now.
func (t *Target) Current(ctx context.Context) Record {
	ginkgo.GinkgoHelper()
	id := t.RequirePet()
	t.RequireStable()
	ix, x := t.List(ctx)
	r, ok := ix.ByID[id]
	if !ok {
		t.FailBecause(spec.RuleRecordMissing, x, fmt.Sprintf("%s %d in the list", t.inv.Key, id), []string{"not listed"})
	}
	return r
}

// UnknownID returns a valid identifier the target does not list, within
// the bounds the document gives the identifier: the highest such one up
// to 1000 below the top of the range, else the nearest one lower down.
func (t *Target) UnknownID(ctx context.Context) int64 {
	ginkgo.GinkgoHelper()
	ix, _ := t.List(ctx)
	lo := spec.ClampInt64(cmp.Or(t.inv.ID.Lowest(), big.NewInt(math.MinInt64)))
	hi := spec.ClampInt64(cmp.Or(t.inv.ID.Highest(), big.NewInt(math.MaxInt64)))
	start := max(lo, hi-1000)
	if hi-1000 > hi { // overflow: the range reaches the smallest int64
		start = lo
	}
	free := func(id int64) bool { // fails once ctx ends
		if _, ok := ix.ByID[id]; !ok && t.inv.ID.Accepts(json.RawMessage(strconv.FormatInt(id, 10))) {
			return true
		}
		if ctx.Err() != nil {
			ginkgo.Fail("interrupted")
		}
		return false
	}
	for id := start; ; id++ {
		if free(id) {
			return id
		}
		if id == hi {
			break
		}
	}
	for id := start - 1; id >= lo && id < start; id-- {
		if free(id) {
			return id
		}
	}
	ginkgo.Skip(fmt.Sprintf("every %s from %d to %d is listed: no unknown one to ask for", t.inv.Key, lo, hi))
	return 0
}

// ExpectNothingChanged fails the check unless the list shows every record
// of before as it was. A record that changed is put back first.
func (t *Target) ExpectNothingChanged(ctx context.Context, after *Exchange, before *Index) {
	ginkgo.GinkgoHelper()
	t.RequireStable()
	now, _ := t.List(ctx)
	var ps []string
	changed := 0
	for _, id := range before.Order {
		if ctx.Err() != nil {
			return
		}
		was := before.ByID[id]
		if got, ok := now.ByID[id]; !ok || !got.Equal(was) {
			if changed++; changed <= maxExamples {
				ps = append(ps, fmt.Sprintf("%s %d was %s; the list now shows %s", t.inv.Key, id, was, got))
			}
			if ok {
				t.remember(id, was)
				if err := t.restore(id); err != nil {
					ginkgo.AddReportEntry(entryRestoreFailed, err.Error(), ginkgo.ReportEntryVisibilityAlways)
				}
			}
		}
	}
	if changed > maxExamples {
		ps = append(ps, fmt.Sprintf("and %d more records changed", changed-maxExamples))
	}
	if len(ps) > 0 {
		t.FailBecause(spec.RuleRejectedChanged, after, "a rejected request changes no record", ps)
	}
}

// ExpectUnchanged fails the check unless the record equals want.
func (t *Target) ExpectUnchanged(ctx context.Context, after *Exchange, want Record) {
	ginkgo.GinkgoHelper()
	t.RequireStable()
	ix, _ := t.List(ctx)
	if got, ok := ix.ByID[want.ID]; !ok || !got.Equal(want) {
		t.FailBecause(spec.RuleRejectedChanged, after, "a rejected request leaves the stored record unchanged",
			[]string{fmt.Sprintf("%s %d was %s before; the list now shows %s", t.inv.Key, want.ID, want, got)})
	}
}

// PathFor fills every path parameter of o with id.
func PathFor(o *spec.Operation, id int64) string { return pathWith(o, strconv.FormatInt(id, 10)) }

// pathWith fills every path parameter of o with id.
func pathWith(o *spec.Operation, id string) string {
	p := o.Path
	for _, name := range o.PathParams() {
		p = strings.ReplaceAll(p, "{"+name+"}", id)
	}
	return p
}

// UpdateAtOnce sends an update of record id with each of bodies at the
// same moment, as several clients do, and returns the exchanges in
// bodies' order and when the last was answered.
func (t *Target) UpdateAtOnce(ctx context.Context, id int64, bodies []Body) ([]*Exchange, time.Time) {
	xs := make([]*Exchange, len(bodies))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, b := range bodies {
		wg.Go(func() {
			<-start
			r := t.Update(id, b.Raw)
			r.MaxBytes = ItemMaxBytes // one record each
			xs[i] = t.Send(ctx, r)
		})
	}
	close(start)
	wg.Wait()
	var acked time.Time
	for _, x := range xs {
		if end := x.Time.Add(x.Elapsed); end.After(acked) {
			acked = end
		}
	}
	return xs, acked
}

// ExpectWritten fails the check unless the answer x to a valid body shows
// the record id with every value the body set.
func (t *Target) ExpectWritten(x *Exchange, id int64, b Body) Record {
	ginkgo.GinkgoHelper()
	r, ps := writtenProblems(x, t.inv.Key, id, b.Sets)
	t.ExpectNone(x, ps)
	return r
}

// ExpectStored fails the check unless the list, read after an accepted
// update of record id answered at acked, shows the record as one of
// written left it (several: writes sent at once), skip aside; else the
// write was not stored, or lost, unless a later list shows it (staleRead).
func (t *Target) ExpectStored(ctx context.Context, acked time.Time, id int64, skip []string, written ...Record) {
	ginkgo.GinkgoHelper()
	ix, lx := t.List(ctx)
	got := ix.ByID[id]
	for _, w := range written {
		if skip == nil && w.Equal(got) || skip != nil && w.EqualExcept(got, skip) {
			return
		}
	}
	rid := strconv.FormatInt(id, 10)
	p := Problem{Cause: spec.RuleWriteNotStored, Want: ruleStored, Record: rid, Text: "differs: " + strings.Join(written[0].Diff(got), ", ")}
	if len(written) > 1 {
		p = Problem{Cause: spec.RuleLostUpdate, Want: atOnceRule, Record: rid, Text: "listed " + got.String()}
	}
	ps := []Problem{p}
	if lag := t.staleRead(ctx, acked, lx, id, skip, written...); lag != "" {
		ps[0].Cause = spec.RuleStaleRead
		ps = append(ps, Problem{Cause: spec.RuleStaleRead, Want: p.Want, Record: rid, Text: lag})
	}
	t.ExpectNone(lx, ps)
}
