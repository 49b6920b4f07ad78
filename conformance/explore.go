package conformance

import (
	"github.com/petstore/inventory-kit/spec/exchange"

	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/petstore/inventory-kit/spec"
)

// exploreBatch is how many sequences one rapid.Check draws.
const exploreBatch = 8

// batchSeed derives the seed of a batch from the run's (splitmix64): the
// same run seed gives the same batches, and neighbouring seeds share none.
func batchSeed(seed, batch uint64) uint64 {
	x := seed + batch*0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	if x == 0 {
		return 1 // 0 would make rapid draw a seed of its own
	}
	return x
}

// Defaults of the exploration.
const (
	DefaultExploreSteps = 300
	DefaultExploreTime  = 30 * time.Second
	// DefaultShrinkTime bounds the shrinking of a failure found, so a
	// failing CI run takes at most this much longer.
	DefaultShrinkTime = 10 * time.Second
	// DefaultSequenceLength is the average number of steps of one sequence.
	DefaultSequenceLength = 15
)

// ExploreConfig bounds the exploration: a property-based state machine
// (pgregory.net/rapid) that draws sequences of calls from the contract's
// schemas and checks a model of the target after each step.
type ExploreConfig struct {
	// Steps is the budget of steps over all sequences; 0 turns
	// exploration off.
	Steps int
	// Time is how long new sequences are drawn; shrinking a failure found
	// may take as long again. 0: DefaultExploreTime.
	Time time.Duration
	// Seed makes a run replayable: the same seed against a target in the
	// same state draws the same sequences. 0: drawn at random (reported).
	Seed uint64
	// SequenceLength is the average number of steps of a sequence; 0:
	// DefaultSequenceLength.
	SequenceLength int
	// ShrinkTime bounds the shrinking of a failure found; 0: Time, at
	// most DefaultShrinkTime; negative: no shrinking (the failure is
	// replayed once).
	ShrinkTime time.Duration
}

func (c ExploreConfig) withDefaults() ExploreConfig {
	if c.Time <= 0 {
		c.Time = DefaultExploreTime
	}
	if c.SequenceLength <= 0 {
		c.SequenceLength = DefaultSequenceLength
	}
	if c.ShrinkTime == 0 {
		c.ShrinkTime = min(c.Time, DefaultShrinkTime)
	}
	if c.Seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		c.Seed = binary.LittleEndian.Uint64(b[:])&(1<<53-1) | 1
	}
	return c
}

// An exploreResult is what an exploration did and found.
type exploreResult struct {
	Seed      uint64
	Steps     int // steps run while exploring (not counting shrinking)
	Sequences int
	Elapsed   time.Duration
	Stopped   string // why it stopped drawing: "the step budget", "the time budget", "an interrupt", "a failure"
	Failure   *exploreFailure
}

// An exploreFailure is a sequence of calls after which the target broke
// the contract, shrunk to the shortest one rapid found.
type exploreFailure struct {
	Rule     string   // the rule broken
	Cause    Cause    // what the rule is about, for the summary's grouping
	Detail   string   // what was sent and what came back at the failing step
	Steps    []string // the sequence, one line per step, each with its curl lines
	Original int      // steps of the sequence first found
	Shrunk   bool     // false when the failure did not happen again on replay (a flaky target)
}

// String renders the failure for a report.
func (f *exploreFailure) String() string {
	var b strings.Builder
	how := fmt.Sprintf("shrunk from %d steps", f.Original)
	if !f.Shrunk {
		how = "it did not happen again on replay, so it could not be shrunk"
	}
	fmt.Fprintf(&b, "a sequence of %d %s breaks the contract (%s): %s\n", len(f.Steps), plural(len(f.Steps), "step", "steps"), how, f.Rule)
	for i, s := range f.Steps {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, s)
	}
	b.WriteString(f.Detail)
	return b.String()
}

// Summary renders the result on one line.
func (r *exploreResult) Summary() string {
	found := "nothing broken"
	if r.Failure != nil {
		found = "found: " + r.Failure.Rule
	}
	return fmt.Sprintf("%d steps in %d sequences in %s, seed %d, stopped by %s; %s",
		r.Steps, r.Sequences, r.Elapsed.Round(time.Millisecond), r.Seed, r.Stopped, found)
}

// Explore runs the state machine against the target within
// Config.Explore's budget. Without Config.AllowMutations it sends only
// requests a conforming target rejects and that carry the record's own
// values (bad credentials, malformed identifiers) besides reads; with it,
// every record a sequence writes is restored when the sequence ends.
func (t *Target) Explore(ctx context.Context) *exploreResult {
	cfg := t.cfg.Explore
	e := &explorer{t: t, ctx: ctx, cfg: cfg, start: time.Now()}
	e.deadline = e.start.Add(cfg.Time)
	res := &exploreResult{Seed: cfg.Seed}
	if cfg.Steps <= 0 {
		res.Stopped = "the step budget (exploration is off)"
		return res
	}
	// rapid runs a fixed number of sequences per Check and cannot be
	// stopped early: draw them in small batches, each with a seed derived
	// from the run's, until a budget is spent or a failure is found (and
	// shrunk, within its batch), so that a spent budget ends the run at
	// once however many steps were allowed.
	for batch := uint64(0); !e.idle() && e.firstFailing == nil; batch++ {
		s := rapidSettings{
			checks:     exploreBatch,
			steps:      cfg.SequenceLength,
			seed:       batchSeed(cfg.Seed, batch),
			shrinkTime: max(cfg.ShrinkTime, 0),
		}
		withRapid(s, func() { rapid.Check(&rapidTB{}, e.sequence) })
	}
	res.Steps, res.Sequences, res.Elapsed = e.steps, e.sequences, time.Since(e.start)
	switch {
	case e.firstFailing != nil:
		res.Stopped = "a failure"
	case ctx.Err() != nil:
		res.Stopped = "an interrupt"
	case e.steps >= cfg.Steps:
		res.Stopped = "the step budget"
	default:
		res.Stopped = "the time budget"
	}
	if f := e.firstFailing; f != nil && ctx.Err() == nil {
		last, shrunk := e.lastFailing, e.reproduced
		if last == nil || last.rule != f.rule || !shrunk {
			last, shrunk = f, false
		}
		res.Failure = &exploreFailure{Rule: last.rule, Cause: last.cause, Detail: last.detail, Steps: last.lines, Original: f.length, Shrunk: shrunk}
	}
	return res
}

// rapidTB is the rapid.TB an exploration runs under: it keeps rapid's
// verdict and discards its logs.
type rapidTB struct {
	mu     sync.Mutex // guards failed and msgs
	failed bool
	msgs   []string
}

func (*rapidTB) Helper()                           {}
func (*rapidTB) Name() string                      { return "conformance-explore" }
func (*rapidTB) Logf(string, ...any)               {}
func (*rapidTB) Log(...any)                        {}
func (tb *rapidTB) Skipf(format string, a ...any)  { tb.Errorf(format, a...) }
func (tb *rapidTB) Skip(a ...any)                  { tb.Error(a...) }
func (tb *rapidTB) SkipNow()                       { tb.Fail() }
func (tb *rapidTB) Errorf(format string, a ...any) { tb.note(fmt.Sprintf(format, a...)) }
func (tb *rapidTB) Error(a ...any)                 { tb.note(fmt.Sprint(a...)) }
func (tb *rapidTB) Fatalf(format string, a ...any) { tb.note(fmt.Sprintf(format, a...)) }
func (tb *rapidTB) Fatal(a ...any)                 { tb.note(fmt.Sprint(a...)) }
func (tb *rapidTB) FailNow()                       { tb.Fail() }
func (tb *rapidTB) Fail()                          { tb.note("") }
func (tb *rapidTB) Failed() bool                   { tb.mu.Lock(); defer tb.mu.Unlock(); return tb.failed }

func (tb *rapidTB) note(m string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.failed = true
	if m != "" {
		tb.msgs = append(tb.msgs, m)
	}
}

// rapidSettings are rapid's own settings, which it reads from its
// command-line flags (rapid.checks, rapid.steps, ...).
type rapidSettings struct {
	checks, steps int
	seed          uint64
	shrinkTime    time.Duration
}

var (
	rapidMu  sync.RWMutex  // guards rapidNow and rapid's flags, which rapid reads during Check
	rapidNow rapidSettings // the settings rapid's flags hold
	initOnce sync.Once
)

// withRapid runs f with rapid's flags set to s. Explorations with the same
// settings run at once; others wait.
func withRapid(s rapidSettings, f func()) {
	initOnce.Do(func() {
		// rapid calls testing.Short, which needs the testing flags and a
		// parsed command line; a binary has neither.
		if flag.Lookup("test.short") == nil {
			testing.Init()
		}
		if !flag.Parsed() {
			_ = flag.CommandLine.Parse(nil)
		}
	})
	for {
		rapidMu.RLock()
		if rapidNow == s {
			f()
			rapidMu.RUnlock()
			return
		}
		rapidMu.RUnlock()
		rapidMu.Lock()
		for name, v := range map[string]string{
			"rapid.checks":     strconv.Itoa(s.checks),
			"rapid.steps":      strconv.Itoa(s.steps),
			"rapid.seed":       strconv.FormatUint(s.seed, 10),
			"rapid.shrinktime": s.shrinkTime.String(),
			"rapid.nofailfile": "true",
		} {
			if err := flag.CommandLine.Set(name, v); err != nil {
				panic(fmt.Sprintf("conformance: rapid flag %s: %v", name, err))
			}
		}
		rapidNow = s
		rapidMu.Unlock()
	}
}

// An explorer is the state machine: its model is the records as the
// target must hold them.
type explorer struct {
	t        *Target
	ctx      context.Context
	cfg      ExploreConfig
	start    time.Time
	deadline time.Time

	// Only the property's goroutine touches what follows; rapid runs it
	// serially.
	steps, sequences         int
	shrinking                bool
	shrinkUntil, seqStart    time.Time
	reproChecked, reproduced bool
	// lastList is the last list body found equal to the model; while the
	// model has not changed since, the same bytes need no second look.
	lastList                  []byte
	modelChanged              bool
	firstFailing, lastFailing *sequenceRun
	run                       *sequenceRun
}

// A sequenceRun is one sequence as it runs: the model, the records it
// wrote to, and what each step sent.
type sequenceRun struct {
	model  map[int64]Record
	ids    []int64          // the model's identifiers, sorted
	orig   map[int64]Record // records written to, as they were
	lines  []string         // one per step
	step   []*Exchange      // the current step's exchanges
	length int
	rule   string
	cause  Cause
	detail string
}

// idle reports whether the budget is spent: steps then do nothing. While
// a failure is shrunk the budget does not apply.
func (e *explorer) idle() bool {
	if e.ctx.Err() != nil {
		return true
	}
	if e.shrinking {
		// rapid bounds shrinking only between its passes; a slow target
		// would stretch one pass, so the property bounds it too.
		return time.Now().After(e.shrinkUntil)
	}
	return e.steps >= e.cfg.Steps || time.Now().After(e.deadline)
}

// sequence is rapid's property: one sequence of steps from a fresh model.
func (e *explorer) sequence(rt *rapid.T) {
	if e.idle() {
		return
	}
	if !e.shrinking {
		e.sequences++
	}
	run := &sequenceRun{orig: map[int64]Record{}}
	e.run = run
	e.seqStart = time.Now()
	if e.shrinking && !e.reproChecked {
		// rapid first replays the failing sequence to see it fail again.
		defer func() {
			e.reproChecked = true
			e.reproduced = run.rule == e.firstFailing.rule
		}()
	}
	defer e.restore(rt, run)
	e.load(rt, run)
	actions := map[string]func(*rapid.T){
		"":                  e.check,
		"list":              e.list,
		"call an operation": e.callOperation,
		"bad credential":    e.badCredential,
		"malformed id":      e.malformedID,
	}
	if e.t.cfg.AllowMutations && len(run.ids) > 0 {
		actions["write"] = e.write
		actions["write an invalid body"] = e.writeInvalid
		actions["write a body the contract is silent on"] = e.writeSilent
		actions["write to an unknown id"] = e.writeUnknown
	}
	rt.Repeat(actions)
}

// load lists the records and makes them the model.
func (e *explorer) load(rt *rapid.T, run *sequenceRun) {
	x := e.send(Request{Method: e.t.inv.List.Method, Path: e.t.inv.List.Path})
	run.model = map[int64]Record{}
	e.expectStatus(rt, x, "the list answers 200", http.StatusOK)
	rs, err := DecodeRecordsContext(e.ctx, x.RespBody)
	if err != nil {
		e.fail(rt, CauseResponseSchema, "the list is an array of records", x, err.Error())
	}
	ix := indexRecords(rs, e.t.inv.Key)
	if len(ix.Dups) > 0 || len(ix.Bad) > 0 {
		e.fail(rt, CauseDuplicateIDs, "one record per identifier", x, fmt.Sprintf("listed more than once: %v; %v", ix.Dups, ix.Bad))
	}
	run.model = ix.ByID
	run.ids = slices.Sorted(mapKeysInt(ix.ByID))
	e.modelChanged = true
	run.lines = nil // the loading list is not a step
	run.step = nil
}

func mapKeysInt[V any](m map[int64]V) func(func(int64) bool) {
	return func(yield func(int64) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// restore puts back every record the sequence wrote to.
func (e *explorer) restore(rt *rapid.T, run *sequenceRun) {
	ids := slices.Sorted(mapKeysInt(run.orig))
	var failed []string
	for _, id := range ids {
		if err := e.t.restore(id); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 && !rt.Failed() && e.ctx.Err() == nil {
		run.lines = append(run.lines, "(the restore at the end of the sequence)")
		e.fail(rt, CauseRestoreFailed, "a record written to can be restored", nil, strings.Join(failed, "; "))
	}
}

// send makes a request as part of the current step.
func (e *explorer) send(r Request) *Exchange {
	x := e.t.Send(e.ctx, r)
	e.run.step = append(e.run.step, x)
	return x
}

// begin starts a step, described by what.
func (e *explorer) begin(what string) {
	if !e.shrinking {
		e.steps++
	}
	e.run.lines = append(e.run.lines, what)
	e.run.step = nil
}

// fail ends the sequence: rapid gets a stable message (the rule), so that
// shrinking keeps to the same failure; the details go to the report.
func (e *explorer) fail(rt *rapid.T, c Cause, rule string, x *Exchange, problem string) {
	if e.ctx.Err() != nil {
		rt.SkipNow() // an interrupt is not a finding
	}
	run := e.run
	run.rule, run.cause = rule, c
	var b strings.Builder
	for _, sx := range run.step {
		fmt.Fprintf(&b, "     %s\n", sx.Curl())
	}
	if len(run.lines) > 0 && b.Len() > 0 {
		run.lines[len(run.lines)-1] += "\n" + strings.TrimSuffix(b.String(), "\n")
	}
	if x != nil {
		run.detail = x.Want("%s", rule) + "problem: " + problem + "\n"
	} else {
		run.detail = "contract: " + rule + "\nproblem: " + problem + "\n"
	}
	run.length = len(run.lines)
	if e.firstFailing == nil {
		e.firstFailing = run
		e.shrinking = true
		// Room for rapid to replay the sequence at least twice (to see
		// that it fails again), then the time budget for shrinking.
		e.shrinkUntil = time.Now().Add(max(e.cfg.ShrinkTime, 0) + 2*time.Since(e.seqStart))
	}
	if rule == e.firstFailing.rule {
		e.lastFailing = run
	}
	rt.Fatalf("%s", rule)
}

// stepCurls records the curl lines of the step's exchanges on its line.
func (e *explorer) stepCurls() {
	run := e.run
	if len(run.lines) == 0 {
		return
	}
	var parts []string
	for _, x := range run.step {
		parts = append(parts, "     "+x.Curl())
	}
	if len(parts) > 0 {
		run.lines[len(run.lines)-1] += "\n" + strings.Join(parts, "\n")
	}
}

// expectStatus fails unless x's status is one of want.
func (e *explorer) expectStatus(rt *rapid.T, x *Exchange, rule string, want ...int) {
	if !slices.Contains(want, x.Status) {
		e.fail(rt, statusCause(x, want), rule, x, fmt.Sprintf("status %s; want %s", gotLine(x), joinInts(want, " or ")))
	}
}

// check is the invariant, run after every step: each response of the step
// keeps the rules every response keeps, and a fresh list equals the model
// (read after write, no other record changed, rejected writes changed
// nothing, no record appeared or vanished).
func (e *explorer) check(rt *rapid.T) {
	if e.idle() || e.run == nil || len(e.run.lines) == 0 {
		return
	}
	for _, x := range e.run.step {
		if ps := e.t.ResponseProblems(x, http.StatusUnsupportedMediaType); len(ps) > 0 {
			e.fail(rt, ps[0].Cause, "every response: a documented status, no 5xx, a body valid against the contract, an Error body whose status is the HTTP status", x, strings.Join(texts(ps), "; "))
		}
	}
	e.stepCurls()
	x := e.t.Send(e.ctx, Request{Method: e.t.inv.List.Method, Path: e.t.inv.List.Path})
	e.run.step = []*Exchange{x}
	if x.Status == http.StatusOK && x.Failure == "" && !e.modelChanged && e.lastList != nil && bytes.Equal(x.RespBody, e.lastList) {
		e.run.step = nil
		return
	}
	if ps := e.t.ResponseProblems(x); len(ps) > 0 {
		e.fail(rt, ps[0].Cause, "every response: a documented status, no 5xx, a body valid against the contract", x, strings.Join(texts(ps), "; "))
	}
	e.expectStatus(rt, x, "the list answers 200", http.StatusOK)
	rs, err := DecodeRecordsContext(e.ctx, x.RespBody)
	if err != nil {
		e.fail(rt, CauseResponseSchema, "the list is an array of records", x, err.Error())
	}
	ix := indexRecords(rs, e.t.inv.Key)
	if len(ix.Dups) > 0 {
		e.fail(rt, CauseDuplicateIDs, "one record per identifier", x, fmt.Sprintf("listed more than once: %v", ix.Dups))
	}
	for _, id := range e.run.ids {
		want := e.run.model[id]
		got, ok := ix.ByID[id]
		switch {
		case !ok:
			e.fail(rt, CauseRecordVanished, "no record vanishes", x, fmt.Sprintf("%s %d is no longer listed", e.t.inv.Key, id))
		case !got.Equal(want):
			e.touchWith(id, want) // put it back when the sequence ends
			e.fail(rt, CauseOtherChanged, "the list shows every record as the last accepted write left it, and no other change", x,
				fmt.Sprintf("%s %d: %s", e.t.inv.Key, id, strings.Join(want.Diff(got), ", ")))
		}
	}
	if len(ix.ByID) != len(e.run.model) {
		var extra []int64
		for id := range ix.ByID {
			if _, ok := e.run.model[id]; !ok {
				extra = append(extra, id)
			}
		}
		slices.Sort(extra)
		e.fail(rt, CauseRecordAppeared, "no record appears without a write that creates it", x, fmt.Sprintf("new %s: %v", e.t.inv.Key, extra))
	}
	e.run.step = nil
	e.lastList, e.modelChanged = x.RespBody, false
}

// list: a plain list with the key; the invariant compares it.
func (e *explorer) list(rt *rapid.T) {
	if e.idle() {
		return
	}
	e.begin("list")
	x := e.send(Request{Method: e.t.inv.List.Method, Path: e.t.inv.List.Path})
	e.expectStatus(rt, x, "the list with the key answers 200", http.StatusOK)
}

// drawID draws a listed identifier.
func (e *explorer) drawID(rt *rapid.T) int64 {
	return rapid.SampledFrom(e.run.ids).Draw(rt, "id")
}

// drawWriteID draws the listed identifier a step writes to: --pet-id
// where it is given (the one record QA lets the run touch), else any.
// It returns false when that record is not listed now.
func (e *explorer) drawWriteID(rt *rapid.T) (int64, bool) {
	if id := e.t.cfg.PetID; id != 0 {
		_, ok := e.run.model[id]
		return id, ok
	}
	return e.drawID(rt), true
}

// drawUnknownID draws a valid identifier the model does not hold.
func (e *explorer) drawUnknownID(rt *rapid.T) int64 {
	lo, hi := int64(-1<<63), int64(1<<63-1)
	if l := e.t.inv.ID.Lowest(); l != nil && l.IsInt64() {
		lo = l.Int64()
	}
	if h := e.t.inv.ID.Highest(); h != nil && h.IsInt64() {
		hi = h.Int64()
	}
	return rapid.Int64Range(lo, hi).Filter(func(id int64) bool { _, ok := e.run.model[id]; return !ok }).Draw(rt, "unknown id")
}

// touchWith records want as the values to put record id back to when the
// sequence ends: a record that changed where no step wrote to it.
func (e *explorer) touchWith(id int64, want Record) {
	if _, ok := e.run.orig[id]; !ok {
		e.run.orig[id] = want
		e.t.guard.remember(id, want)
	}
}

// touch records a record's original values before a step writes to it.
func (e *explorer) touch(id int64) {
	if _, ok := e.run.orig[id]; ok {
		return
	}
	if r, ok := e.run.model[id]; ok {
		e.run.orig[id] = r
		e.t.guard.remember(id, r)
	}
}

// drawValidBody draws a valid update body for record cur: each writable
// field cur has within its bounds or enum, optional fields sometimes left
// out, and never an optional field cur lacks (no update could take it
// away again).
func (e *explorer) drawValidBody(rt *rapid.T, cur Record) Body {
	inv := e.t.inv
	names, vals := e.t.baseValues(cur)
	sets := Record{}
	var kept []string
	for i, n := range names {
		f := inv.Body.Field(n)
		last := i == len(names)-1
		if !f.Required && !(last && len(kept) == 0) && !rapid.Bool().Draw(rt, "include "+n) {
			continue
		}
		kept = append(kept, n)
		if inv.Record.Field(n) != nil && n != inv.Key {
			vals[n] = drawValue(rt, f)
			sets[n] = vals[n]
		}
	}
	b := Body{Raw: encodeObject(kept, vals), Kind: Valid, Sets: sets}
	b.Name = "valid " + string(b.Raw)
	return b
}

// drawValue draws a valid value of a field: from its enum, its grid of
// numbers (bounds and multipleOf), or the suite's choices for the rest.
func drawValue(rt *rapid.T, f *spec.Field) []byte {
	switch {
	case len(f.Enum) > 0:
		return rapid.SampledFrom(f.Enum).Draw(rt, f.Name)
	case f.Type == "integer" || f.Type == "number":
		if g, ok := gridOf(f, true); ok {
			k := rapid.Int64Range(0, min(g.Size(), 1<<62)-1).Draw(rt, f.Name)
			v := numberJSON(g.Value(new(big.Int).Add(g.Lo, big.NewInt(k))))
			if accepts(f, v) {
				return v
			}
		}
	}
	return valueFor(f, nil, rapid.IntRange(0, 50).Draw(rt, f.Name))
}

// write: a valid update of a listed record, sometimes sent twice; 200 with
// the values sent, and the model takes the answer.
func (e *explorer) write(rt *rapid.T) {
	if e.idle() {
		return
	}
	id, ok := e.drawWriteID(rt)
	if !ok {
		return
	}
	b := e.drawValidBody(rt, e.run.model[id])
	twice := rapid.Bool().Draw(rt, "twice")
	e.begin(fmt.Sprintf("update %s %d: %s", e.t.inv.Key, id, b.Name) + map[bool]string{true: ", twice"}[twice])
	e.touch(id)
	var first Record
	for range map[bool]int{false: 1, true: 2}[twice] {
		x := e.send(e.t.Update(id, b.Raw))
		e.expectStatus(rt, x, "a valid update answers 200", http.StatusOK)
		r, err := DecodeRecord(x.RespBody)
		if err != nil {
			e.fail(rt, CauseWriteAnswer, "a valid update answers the updated record", x, err.Error())
		}
		if got, ok := r.ID(e.t.inv.Key); !ok || got != id {
			e.fail(rt, CauseWriteAnswer, "the answer to an update is the record updated", x, fmt.Sprintf("%s is %s, want %d", e.t.inv.Key, exchange.Printable(r[e.t.inv.Key]), id))
		}
		for f, v := range b.Sets {
			if canonical(r[f]) != canonical(v) {
				e.fail(rt, CauseWriteAnswer, "the answer to an update shows the values sent", x, fmt.Sprintf("%s is %s, want %s", f, exchange.Printable(r[f]), v))
			}
		}
		if first != nil && !first.EqualExcept(r, e.t.Timestamps()) {
			e.fail(rt, CauseNotIdempotent, "the same update twice gives the same record", x, strings.Join(first.Diff(r), ", "))
		}
		first = r
		e.run.model[id] = r
		e.modelChanged = true
	}
}

// writeInvalid: a body the schema forbids; 400 with an Error body, and the
// invariant checks nothing changed.
func (e *explorer) writeInvalid(rt *rapid.T) {
	if e.idle() {
		return
	}
	id, ok := e.drawWriteID(rt)
	if !ok {
		return
	}
	b := rapid.SampledFrom(e.t.InvalidBodies(e.run.model[id])).Draw(rt, "invalid body")
	e.begin(fmt.Sprintf("update %s %d with %s (invalid)", e.t.inv.Key, id, b.Name))
	e.touch(id)
	x := e.send(e.t.Update(id, b.Raw))
	e.expectStatus(rt, x, "an update whose body the schema forbids answers 400", http.StatusBadRequest)
}

// writeSilent: a body the contract is silent on; 200 (the model takes the
// answer) or 400 (nothing changes).
func (e *explorer) writeSilent(rt *rapid.T) {
	if e.idle() {
		return
	}
	id, ok := e.drawWriteID(rt)
	if !ok {
		return
	}
	cur := e.run.model[id]
	bodies := e.t.SilentBodies(cur)
	if rapid.Bool().Draw(rt, "another content type") {
		ct := rapid.SampledFrom([]string{"text/plain", "application/x-www-form-urlencoded", "application/xml"}).Draw(rt, "content type")
		bodies = []Body{{Name: "a valid body sent as " + ct, Raw: e.t.Harmless(cur), Kind: Silent, ContentType: ct}}
	}
	b := rapid.SampledFrom(bodies).Draw(rt, "silent body")
	e.begin(fmt.Sprintf("update %s %d with %s (the contract is silent)", e.t.inv.Key, id, b.Name))
	e.touch(id)
	r := e.t.Update(id, b.Raw)
	r.ContentType = b.ContentType
	x := e.send(r)
	e.expectStatus(rt, x, "an update the contract is silent on answers 200 or 400 (or 415 for a content type)", http.StatusOK, http.StatusBadRequest, http.StatusUnsupportedMediaType)
	if x.Status == http.StatusOK {
		rec, err := DecodeRecord(x.RespBody)
		if err != nil {
			e.fail(rt, CauseWriteAnswer, "an accepted update answers the updated record", x, err.Error())
		}
		if got, ok := rec.ID(e.t.inv.Key); !ok || got != id {
			e.fail(rt, CauseWriteAnswer, "the answer to an update is the record updated", x, fmt.Sprintf("%s is %s, want %d", e.t.inv.Key, exchange.Printable(rec[e.t.inv.Key]), id))
		}
		e.run.model[id] = rec
		e.modelChanged = true
	}
}

// writeUnknown: a valid update of an identifier nobody lists; 404, and the
// invariant checks no record appeared.
func (e *explorer) writeUnknown(rt *rapid.T) {
	if e.idle() {
		return
	}
	id := e.drawUnknownID(rt)
	b := e.t.Harmless(e.run.model[e.run.ids[0]])
	e.begin(fmt.Sprintf("update the unknown %s %d", e.t.inv.Key, id))
	x := e.send(e.t.Update(id, b))
	e.expectStatus(rt, x, "an update of an identifier nobody lists answers 404", http.StatusNotFound)
}

// malformedID: an identifier that is not one; 400. Without
// --allow-mutations it carries no body, so a target that reads identifiers
// loosely (abc as 1) has no values to write anywhere. With it, the body is
// the written-to record's own values; should the target write them to
// another record, the invariant finds the change and the sequence puts
// that record back.
func (e *explorer) malformedID(rt *rapid.T) {
	if e.idle() || len(e.run.ids) == 0 {
		return
	}
	raw := rapid.SampledFrom(e.t.MalformedIDs()).Draw(rt, "malformed id")
	r := Request{Method: e.t.inv.Update.Method, Path: e.t.ItemPath(raw)}
	if e.t.cfg.AllowMutations {
		id, ok := e.drawWriteID(rt)
		if !ok {
			return
		}
		r.Body = e.t.Harmless(e.run.model[id])
	}
	e.begin(fmt.Sprintf("update %s %q (not an identifier)", e.t.inv.Key, raw))
	x := e.send(r)
	if x.Status != http.StatusBadRequest {
		e.fail(rt, CauseBadIDAccepted, "an identifier that is not a valid "+e.t.inv.ID.Type+" answers 400", x, fmt.Sprintf("status %s; want 400", gotLine(x)))
	}
}

// A credential is one way of failing to authenticate.
type credential struct {
	Name string
	Auth func(key string) string
}

// BadCredentials lists the ways of failing to authenticate that the
// contract answers with 401.
var BadCredentials = []credential{
	{"no Authorization header", func(string) string { return NoAuth }},
	{"Bearer without a token", func(string) string { return "Bearer" }},
	{"an empty Authorization header", func(string) string { return emptyAuth }},
	{"an unknown key", func(string) string { return "Bearer conformance-unknown-key-0f9e8d7c" }},
	{"another scheme (Basic with the key)", func(key string) string { return "Basic " + key }},
}

// badCredential: any operation with a credential that is missing or
// invalid, on a listed, unknown or malformed identifier, with a harmless
// or malformed body; 401 before anything else.
func (e *explorer) badCredential(rt *rapid.T) {
	if e.idle() {
		return
	}
	c := rapid.SampledFrom(BadCredentials).Draw(rt, "credential")
	op := rapid.SampledFrom(e.t.contract.Operations).Draw(rt, "operation")
	path := op.Path
	var cur Record
	if len(e.run.ids) > 0 {
		// The record a wrongly accepted update would write to: its own
		// values, and only the one --pet-id names.
		if id, ok := e.drawWriteID(rt); ok {
			cur = e.run.model[id]
		}
	}
	malformed := false
	what := ""
	if len(op.PathParams()) > 0 {
		kinds := []string{"listed"}
		if e.t.cfg.AllowMutations {
			kinds = append(kinds, "unknown")
		}
		kinds = append(kinds, "malformed")
		var id string
		switch kind := rapid.SampledFrom(kinds).Draw(rt, "id kind"); {
		case kind == "listed" && cur != nil:
			n, _ := cur.ID(e.t.inv.Key)
			id = strconv.FormatInt(n, 10)
		case kind == "unknown":
			id = strconv.FormatInt(e.drawUnknownID(rt), 10)
		default:
			id = rapid.SampledFrom(e.t.MalformedIDs()).Draw(rt, "malformed id")
			malformed = true
		}
		for _, name := range op.PathParams() {
			path = strings.ReplaceAll(path, "{"+name+"}", id)
		}
		what = " on " + id
	}
	r := Request{Method: op.Method, Path: path, Auth: c.Auth(e.t.cfg.APIKey)}
	switch {
	case op == e.t.inv.Update && malformed && !e.t.cfg.AllowMutations:
		// No values a loose reading of the identifier could write.
	case op == e.t.inv.Update:
		if cur == nil {
			return
		}
		r.Body = e.t.Harmless(cur)
		if rapid.Bool().Draw(rt, "malformed body") {
			r.Body = r.Body[:len(r.Body)-1]
			what += " with malformed JSON"
		}
	case op.Writes() && op.Body != nil:
		// Another write: a body valid against its schema, which a target
		// that ignores the credential would act on; only with
		// --allow-mutations.
		if !e.t.cfg.AllowMutations {
			return
		}
		b, ok := e.t.ValidBody(op, rapid.IntRange(0, 50).Draw(rt, "body"))
		if !ok {
			return
		}
		r.Body = b
	case op.Writes() && !e.t.cfg.AllowMutations:
		return
	}
	e.begin(fmt.Sprintf("%s with %s%s", op.Name(), c.Name, what))
	x := e.send(r)
	e.expectStatus(rt, x, "a missing or invalid credential answers 401 before anything else", http.StatusUnauthorized)
}

// callOperation: any reading operation with the key; a documented status,
// no 5xx (501 where no shape is given), a valid body, and where it
// answers a record, the model's.
func (e *explorer) callOperation(rt *rapid.T) {
	if e.idle() {
		return
	}
	var ops []*spec.Operation
	for _, o := range e.t.contract.Operations {
		if !o.Writes() {
			ops = append(ops, o)
		}
	}
	op := rapid.SampledFrom(ops).Draw(rt, "operation")
	var id int64
	known := true
	if len(op.PathParams()) > 0 {
		if len(e.run.ids) == 0 || (rapid.Bool().Draw(rt, "unknown") && e.t.cfg.AllowMutations) {
			id, known = e.drawUnknownID(rt), false
		} else {
			id = e.drawID(rt)
		}
	}
	path := PathFor(op, id)
	e.begin(fmt.Sprintf("%s %s", op.Method, path))
	x := e.send(Request{Method: op.Method, Path: path})
	if !e.t.ReturnsRecord(op) || len(op.PathParams()) == 0 {
		return // the invariant checks the response's rules
	}
	if !known {
		if op.Documents(http.StatusNotFound) {
			e.expectStatus(rt, x, op.Name()+" of an identifier nobody lists answers 404", http.StatusNotFound)
		}
		return
	}
	e.expectStatus(rt, x, op.Name()+" of a listed record answers 200", http.StatusOK)
	r, err := DecodeRecord(x.RespBody)
	if err != nil {
		e.fail(rt, CauseResponseSchema, op.Name()+" answers the record", x, err.Error())
	}
	if want := e.run.model[id]; !want.Equal(r) {
		e.fail(rt, CauseRecordMismatch, op.Name()+" answers the record as listed", x, strings.Join(want.Diff(r), ", "))
	}
}
