package conformance

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/petstore/inventory-kit/spec"
)

// A worker runs sequences of the exploration, one at a time, on records
// of its own: of the sequences rapid draws from the run's seed, those
// whose number is the worker's modulo the number of workers.
type worker struct {
	e        *explorer
	n        int
	own      []int64 // the records it writes to, sorted; none: it only reads
	tb       *rapidTB
	iter     int // sequences rapid has drawn in this worker's Check
	run      *sequenceRun
	seqStart time.Time
	touched  []int64        // every record it wrote to in the run
	restored map[int64]bool // the records the last sequence's restore wrote back
	acked    time.Time      // when its last accepted write (or restore) was answered
}

// A sequenceRun is one sequence as it runs: the records written to, what
// each step sent, and, where it failed, how.
type sequenceRun struct {
	orig      map[int64]Record // records written to, as they were
	lines     []string         // one per step
	step      []*Exchange      // the current step's exchanges
	addressed map[int64]bool   // the records the current step wrote to: was the write accepted
	wrote     bool             // the current step sent anything that could write
	reserved  []int64          // the unknown identifiers the current step reserved
	last      int64            // the record the sequence last wrote to, where hasLast
	hasLast   bool

	rule   string
	cause  Cause
	detail string
}

// explore runs rapid.Check, over and over with seeds derived from the
// run's, until the budget is spent or a failure is found and shrunk.
func (w *worker) explore() {
	e := w.e
	for round := uint64(0); ; round++ {
		s := rapidSettings{
			checks:     exploreChecks,
			steps:      e.cfg.SequenceLength,
			seed:       batchSeed(e.cfg.Seed, round),
			shrinkTime: max(e.cfg.ShrinkTime, 0),
		}
		w.iter = 0
		withRapid(s, func() { rapid.Check(w.tb, w.sequence) })
		e.mu.Lock()
		found := e.first != nil
		e.mu.Unlock()
		if found || e.idleFor(w) {
			return
		}
	}
}

// sequence is rapid's property: one sequence of steps.
func (w *worker) sequence(rt *rapid.T) {
	e := w.e
	e.mu.Lock()
	shrinking := e.shrinker == w
	replay := shrinking && !e.reproChecked // rapid first replays the failing sequence to see it fail again
	e.mu.Unlock()
	if !shrinking {
		i := w.iter
		w.iter++
		if i%len(e.workers) != w.n {
			return // another worker's sequence
		}
	}
	if e.idleFor(w) {
		return
	}
	if !shrinking {
		e.sequences.Add(1)
	}
	run := &sequenceRun{orig: map[int64]Record{}}
	w.run, w.seqStart = run, time.Now()
	if replay {
		defer func() {
			e.mu.Lock()
			e.reproChecked = true
			e.reproduced = run.rule == e.first.rule
			e.mu.Unlock()
		}()
	}
	defer w.restore(rt, run)
	w.judgeList(rt, true) // the previous sequence's restore put every record back
	w.restored = nil
	e.reg.setBusy(w.n, false)
	run.lines, run.step = nil, nil // the loading list is not a step
	rt.Repeat(w.actions())
}

// actions are the steps a sequence draws from; rapid draws each key
// alike, so a step listed twice is drawn twice as often: the bugs real
// backends have need a sequence of writes.
func (w *worker) actions() map[string]func(*rapid.T) {
	a := map[string]func(*rapid.T){
		"":                  w.check,
		"list":              w.step(w.list),
		"call an operation": w.step(w.callOperation),
		"bad credential":    w.step(w.badCredential),
		"malformed id":      w.step(w.malformedID),
	}
	if len(w.own) > 0 {
		write, invalid := w.step(w.write), w.step(w.writeInvalid)
		a["write"] = write
		a["write again"] = write
		a["write once more"] = write
		a["write an invalid body"] = invalid
		a["write an invalid body again"] = invalid
		a["write a body the contract is silent on"] = w.step(w.writeSilent)
		a["write to an unknown id"] = w.step(w.writeUnknown)
		a["write at once"] = w.writeAtOnce
	}
	for name, step := range a {
		a[name] = func(rt *rapid.T) {
			if !w.e.idleFor(w) {
				step(rt)
			}
		}
	}
	return a
}

// judgeList reads the list and judges it against the model; after a
// step, also by the rules every response keeps.
func (w *worker) judgeList(rt *rapid.T, afterRestore bool) {
	e, t := w.e, w.e.t
	n := min(max(e.listSize.Load(), 1), gateBytes)
	_ = e.lists.Acquire(context.Background(), n) // never fails: no deadline
	defer e.lists.Release(n)
	since := e.reg.now()
	x := w.send(Request{Method: t.inv.List.Method, Path: t.inv.List.Path})
	e.listSize.Store(int64(len(x.RespBody)))
	if !afterRestore {
		ps, _ := t.Split(t.ResponseProblems(x))
		w.expect(rt, x, ps)
	}
	w.expect(rt, x, ExpectList.Problems(x))
	ix, ps := ListProblems(e.ctx, x, t.inv.Key)
	w.expect(rt, x, ps)
	w.expect(rt, x, UniqueProblems(ix, t.inv.Key))
	w.judge(rt, x, ix, since, afterRestore)
}

// judge fails on the first way ix differs from the model, naming the
// cause by what the step did to that record (README: the causes).
func (w *worker) judge(rt *rapid.T, x *Exchange, ix *Index, since uint64, afterRestore bool) {
	e, run := w.e, w.run
	ms := slices.DeleteFunc(e.reg.judge(w.n, ix, since), func(m mismatch) bool {
		// Not this step's doing, and other workers wrote meanwhile: the
		// one whose step did it sees it in its own next list and names
		// it; a worker that only read would misname it.
		_, addressed := run.addressed[m.id]
		return !addressed && !run.wrote && m.othersBusy > 0 && !(afterRestore && w.restored[m.id])
	})
	if len(ms) == 0 {
		return
	}
	m := ms[0]
	key := e.t.inv.Key
	if !m.want.IsZero() { // put it back when the sequence ends
		e.t.Records.remember(m.id, m.want)
		if _, ok := run.orig[m.id]; !ok && slices.Contains(w.own, m.id) {
			run.orig[m.id] = m.want
		}
	}
	problem := m.describe(key)
	if len(ms) > 1 {
		problem += fmt.Sprintf(" (and %d more differences)", len(ms)-1)
	}
	accepted, addressed := run.addressed[m.id]
	switch {
	case m.kind == "appeared":
		w.fail(rt, spec.RuleRecordAppeared, "no record appears without a write that creates it", x, problem)
	case afterRestore && w.restored[m.id]:
		// The update that put it back was answered 200 (restore checks
		// that), yet the list shows otherwise.
		run.lines = append(run.lines, fmt.Sprintf("(the update that put %s %d back when the previous sequence ended, answered 200)", key, m.id))
		w.failChanged(rt, spec.RuleWriteNotStored, fmt.Sprintf("the list shows the %s as the accepted update left it", key), x, m, problem)
	case m.kind == "vanished":
		w.fail(rt, spec.RuleRecordVanished, "no record vanishes", x, problem)
	case addressed && accepted && len(m.either) > 0:
		w.failChanged(rt, spec.RuleLostUpdate, atOnceRule, x, m, problem)
	case addressed && accepted:
		w.failChanged(rt, spec.RuleWriteNotStored, fmt.Sprintf("the list shows the %s as the accepted update left it", key), x, m, problem)
	case addressed:
		w.failChanged(rt, spec.RuleRejectedChanged, "a rejected update leaves the record it addressed unchanged", x, m, problem)
	case run.wrote:
		w.failChanged(rt, spec.RuleOtherChanged, "a request changes no record it does not address", x, m, problem)
	default:
		w.failChanged(rt, spec.RuleUnprompted, "a record changes only by a write to it", x, m, problem)
	}
}

// failChanged fails on a list x that shows record m.id otherwise than the
// model, with cause c, or stale-read where a later list shows it as the
// model has it (staleRead). While shrinking, the cause is the first
// failure's stale-read without waiting again: the rule is the same.
func (w *worker) failChanged(rt *rapid.T, c Cause, rule string, x *Exchange, m mismatch, problem string) {
	e := w.e
	if e.shrinking(w) {
		e.mu.Lock()
		if e.first != nil && e.first.cause == spec.RuleStaleRead {
			c = spec.RuleStaleRead
		}
		e.mu.Unlock()
	} else if m.kind == "changed" {
		acked := w.acked
		if c != spec.RuleWriteNotStored {
			acked = time.Time{} // another's write, or none: its time is not known
		}
		wants := m.either
		if wants == nil {
			wants = []Record{m.want}
		}
		if lag := e.t.staleRead(e.ctx, acked, x, m.id, nil, wants...); lag != "" {
			c, problem = spec.RuleStaleRead, problem+"; "+lag
		}
	}
	w.fail(rt, c, rule, x, problem)
}

// restore puts back every record the sequence wrote to, when it ends; the
// next list checks it.
func (w *worker) restore(rt *rapid.T, run *sequenceRun) {
	e := w.e
	var failed []string
	cause := Cause(spec.RuleRestoreFailed)
	w.restored = map[int64]bool{}
	for _, id := range slices.Sorted(maps.Keys(run.orig)) {
		orig := run.orig[id]
		if cur, ok := e.reg.get(id); ok && cur.Equal(orig) && !rt.Failed() {
			continue // the model says it is as it was
		}
		e.reg.setBusy(w.n, true)
		w.restored[id] = true
		ctx, cancel := context.WithTimeout(context.Background(), 2*e.t.cfg.Timeout)
		err := e.t.writeBackRetrying(ctx, orig)
		cancel()
		if err != nil {
			// The Records keep the original: the run tries again when it
			// ends (Settle).
			failed = append(failed, fmt.Sprintf("%s %d: %v", e.t.inv.Key, id, err))
			cause = restoreCause(err)
			continue
		}
		w.acked = time.Now()
		e.reg.set(id, orig) // run.orig holds only the worker's own records
	}
	if len(failed) > 0 && !rt.Failed() && e.ctx.Err() == nil && !e.halted() {
		run.lines = append(run.lines, "(the restore at the end of the sequence)")
		w.fail(rt, cause, "a record written to can be restored", nil, strings.Join(failed, "; "))
	}
}

// send makes a request as part of the current step.
func (w *worker) send(r Request) *Exchange {
	x := w.e.t.Send(w.e.ctx, r)
	w.e.lat.add(x)
	w.run.step = append(w.run.step, x)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.run.wrote = true
	}
	return x
}

// begin starts a step, described by what, and reports whether the step
// budget had one left: workers check the budget before they draw, so two
// may both see the last step free; only one takes it.
func (w *worker) begin(what string) bool {
	if !w.e.shrinking(w) && !w.e.takeStep() {
		return false
	}
	run := w.run
	run.lines = append(run.lines, what)
	run.step, run.addressed, run.wrote = nil, map[int64]bool{}, false
	return true
}

// writing notes that the step writes to record id, one of the worker's:
// the worker is busy until its next list is judged, and the record's
// value before the sequence is kept for the restore.
func (w *worker) writing(id int64) {
	w.e.reg.setBusy(w.n, true)
	run := w.run
	if _, ok := run.orig[id]; !ok {
		if r, ok := w.e.reg.get(id); ok {
			run.orig[id] = r
			w.e.t.Records.remember(id, r)
			if !slices.Contains(w.touched, id) {
				w.touched = append(w.touched, id)
			}
		}
	}
	run.last, run.hasLast = id, true
}

// wrote records how the target answered a write to record id.
func (w *worker) wrote(id int64, x *Exchange) {
	w.run.addressed[id] = x.Status >= 200 && x.Status < 300
	if w.run.addressed[id] {
		w.acked = x.Time.Add(x.Elapsed)
	}
}

// fail ends the sequence: rapid gets a stable message (the rule), so that
// shrinking keeps to the same failure; the details go to the report.
func (w *worker) fail(rt *rapid.T, c Cause, rule string, x *Exchange, problem string) {
	e, run := w.e, w.run
	if e.ctx.Err() != nil || e.halted() {
		rt.SkipNow() // an interrupt is not a finding
	}
	if slices.ContainsFunc(run.step, func(sx *Exchange) bool { return sx.Status == http.StatusTooManyRequests }) {
		// Still rate limited after the run's waits: the step tells
		// nothing of the model (the checks report the 429 itself).
		rt.SkipNow()
	}
	run.rule, run.cause = rule, c
	w.stepCurls()
	if x != nil {
		run.detail = x.Want("%s", rule) + "problem: " + problem + "\n"
	} else {
		run.detail = "contract: " + rule + "\nproblem: " + problem + "\n"
	}
	if len(e.workers) > 1 {
		run.detail += fmt.Sprintf("(worker %d of %d; the others ran sequences on records of their own at the same time)\n", w.n+1, len(e.workers))
	}
	if !e.failed(w, run, time.Since(w.seqStart)) {
		rt.SkipNow() // another worker's failure came first: it is the one reported
	}
	rt.Fatalf("%s", rule)
}

// stepCurls adds the curl lines of the step's exchanges to its line.
func (w *worker) stepCurls() {
	run := w.run
	if len(run.lines) == 0 || len(run.step) == 0 {
		return
	}
	for _, x := range run.step {
		run.lines[len(run.lines)-1] += "\n     " + x.Curl()
	}
	run.step = nil
}

// expect fails on ps, the problems the oracle found in x, if there are
// any: the first one's cause and rule name the failure.
func (w *worker) expect(rt *rapid.T, x *Exchange, ps []Problem) {
	if len(ps) > 0 {
		w.fail(rt, ps[0].Cause, cmp.Or(ps[0].Want, everyResponse), x, problemsText(ps))
	}
}

// check is the invariant, run after every step: each response of the
// step keeps the rules every response keeps, and a fresh list equals the
// model.
func (w *worker) check(rt *rapid.T) {
	e, run := w.e, w.run
	if run == nil || len(run.lines) == 0 || run.step == nil && run.addressed == nil {
		return
	}
	for _, x := range run.step {
		// The statuses the suite allows beyond the documented ones: 415
		// to a body sent as another content type.
		ps, _ := e.t.Split(e.t.ResponseProblems(x, ExpectSilentType.Statuses...))
		w.expect(rt, x, ps)
	}
	w.stepCurls()
	w.judgeList(rt, false)
	e.reg.release(run.reserved)
	e.reg.setBusy(w.n, false)
	run.step, run.addressed, run.reserved = nil, nil, nil
}

// problemsText joins problems' words, the first maxExamples of them.
func problemsText(ps []Problem) string { return examples(texts(ps), "; ") }

// drawWriteID draws the worker's record a step writes to, with its value
// in the model: as often as not the one the sequence last wrote to (bugs
// hide in repeated calls on one record).
func (w *worker) drawWriteID(rt *rapid.T) (int64, Record, bool) {
	if len(w.own) == 0 {
		return 0, Record{}, false
	}
	// Both are drawn always, so that shrinking away the step that wrote
	// the last record leaves the draws of the next in place.
	id := rapid.SampledFrom(w.own).Draw(rt, "id")
	if rapid.Bool().Draw(rt, "the same record") && w.run.hasLast {
		id = w.run.last
	}
	cur, ok := w.e.reg.get(id)
	return id, cur, ok
}

// drawListedID draws any listed record.
func (w *worker) drawListedID(rt *rapid.T) (int64, bool) {
	ix := w.e.t.first
	if ix == nil || len(ix.Order) == 0 {
		return 0, false
	}
	id := ix.Order[rapid.IntRange(0, len(ix.Order)-1).Draw(rt, "listed")]
	_, ok := w.e.reg.get(id)
	return id, ok
}

// drawUnknownID draws a valid identifier the model does not hold, half
// the time one where bugs gather, and reserves it for the worker where a
// write is sent to it. It returns false where the draw hit a held one.
func (w *worker) drawUnknownID(rt *rapid.T, reserve bool) (int64, bool) {
	e := w.e
	lo := cmp.Or(e.t.inv.ID.Lowest(), big.NewInt(-1<<63))
	hi := cmp.Or(e.t.inv.ID.Highest(), big.NewInt(1<<63-1))
	var id int64
	if rapid.Bool().Draw(rt, "a special id") {
		var cands []int64
		for _, v := range append(slices.Clone(spec.SpecialInts), lo, hi, new(big.Int).Neg(big.NewInt(1))) {
			if v.Cmp(lo) >= 0 && v.Cmp(hi) <= 0 && v.IsInt64() {
				cands = append(cands, v.Int64())
			}
		}
		if len(cands) == 0 {
			return 0, false
		}
		id = rapid.SampledFrom(cands).Draw(rt, "unknown id")
	} else {
		id = rapid.Int64Range(spec.ClampInt64(lo), spec.ClampInt64(hi)).Draw(rt, "unknown id")
	}
	if !e.t.inv.ID.Accepts(json.RawMessage(strconv.FormatInt(id, 10))) {
		return 0, false
	}
	if !reserve {
		return id, !e.reg.has(id)
	}
	e.reg.setBusy(w.n, true)
	if !e.reg.reserve(id, w.n) {
		return 0, false
	}
	w.run.reserved = append(w.run.reserved, id)
	return id, true
}

// drawValidBody draws a valid update body for record cur, optional fields
// sometimes left out, never one cur lacks (no update could take it away).
func (w *worker) drawValidBody(rt *rapid.T, cur Record) Body {
	t := w.e.t
	inv := t.inv
	names, vals := t.baseValues(cur)
	sets := Values{}
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
	raw := encodeObject(kept, vals)
	return Body{Name: "valid " + string(raw), Raw: raw, Kind: Valid, Sets: sets}
}

// drawValue draws a valid value of a field: from its enum, or its grid of
// numbers, half the time one where bugs gather, or the suite's choices.
func drawValue(rt *rapid.T, f *spec.Field) []byte {
	switch {
	case len(f.Enum) > 0:
		return rapid.SampledFrom(f.Enum).Draw(rt, f.Name)
	case f.Type == "integer" || f.Type == "number":
		if g, ok := f.Grid(true); ok {
			var k *big.Int
			if rapid.Bool().Draw(rt, f.Name+" special") {
				k = rapid.SampledFrom(g.Specials()).Draw(rt, f.Name)
			} else {
				k = new(big.Int).Add(g.Lo, big.NewInt(rapid.Int64Range(0, min(g.Size(), 1<<62)-1).Draw(rt, f.Name)))
			}
			if v := spec.NumberJSON(g.Value(k)); f.Accepts(v) {
				return v
			}
		}
	}
	return f.ValueFor(nil, rapid.IntRange(0, 50).Draw(rt, f.Name))
}

// The steps (README: Stateful exploration) follow. Each but the writes
// sent at once draws a plan, which step runs.

// A plan is a step as drawn: its line, its request, and how its answer
// is judged.
type plan struct {
	what   string
	r      Request
	times  int                            // sent one after another; 0: once
	busy   bool                           // it sends what could write: the worker is busy until its next list
	id     int64                          // with writes, the worker's record it writes to
	writes bool                           // (writing)
	stores bool                           // and the answer says whether it was stored (wrote)
	want   Expectation                    // the statuses the answer may have; none: then judges it
	then   func(rt *rapid.T, x *Exchange) // after want: more judging, and what the model takes
}

// step makes draw, which draws a plan or none, a step: begin it, send the
// request, judge each answer.
func (w *worker) step(draw func(*rapid.T) (plan, bool)) func(*rapid.T) {
	return func(rt *rapid.T) {
		p, ok := draw(rt)
		if !ok || !w.begin(p.what) {
			return
		}
		if p.busy {
			w.e.reg.setBusy(w.n, true)
		}
		if p.writes {
			w.writing(p.id)
		}
		for range max(p.times, 1) {
			x := w.send(p.r)
			if p.stores {
				w.wrote(p.id, x)
			}
			if p.want.Statuses != nil {
				w.expect(rt, x, p.want.Problems(x))
			}
			if p.then != nil {
				p.then(rt, x)
			}
		}
	}
}

// list: a plain list with the key; the invariant compares it.
func (w *worker) list(*rapid.T) (plan, bool) {
	return plan{what: "list", r: Request{Method: w.e.t.inv.List.Method, Path: w.e.t.inv.List.Path}, want: ExpectList}, true
}

// write: a valid update, sometimes sent twice; the model takes the answer.
func (w *worker) write(rt *rapid.T) (plan, bool) {
	e := w.e
	id, cur, ok := w.drawWriteID(rt)
	if !ok {
		return plan{}, false
	}
	b := w.drawValidBody(rt, cur)
	twice := rapid.Bool().Draw(rt, "twice")
	var first Record
	return plan{what: fmt.Sprintf("update %s %d: %s", e.t.inv.Key, id, b.Name) + map[bool]string{true: ", twice"}[twice],
		r: e.t.Update(id, b.Raw), times: map[bool]int{false: 1, true: 2}[twice], id: id, writes: true, stores: true,
		then: func(rt *rapid.T, x *Exchange) {
			r := w.expectWritten(rt, id, x, b, false)
			if !first.IsZero() {
				w.expect(rt, x, IdempotentProblems(first, r, e.t.Timestamps()))
			}
			first = r
			e.reg.set(id, r)
		}}, true
}

// expectWritten judges x, the answer to b, a valid update of record id,
// and returns the record answered. Of writes sent at once, an answer
// without the values sent is a lost or mixed update.
func (w *worker) expectWritten(rt *rapid.T, id int64, x *Exchange, b Body, atOnce bool) Record {
	r, ps := writtenProblems(x, w.e.t.inv.Key, id, b.Sets)
	if atOnce && len(ps) > 0 && ps[0].Cause == spec.RuleEchoMismatch {
		w.fail(rt, spec.RuleLostUpdate, atOnceRule, x, problemsText(ps))
	}
	w.expect(rt, x, ps)
	return r
}

// writeAtOnce: two to four valid updates of one record sent at once. A
// backend that reads, computes and writes a record without holding it (a
// lost update) fails here, which writes one after another never show.
func (w *worker) writeAtOnce(rt *rapid.T) {
	e := w.e
	id, cur, ok := w.drawWriteID(rt)
	if !ok {
		return
	}
	bodies := make([]Body, rapid.IntRange(2, 4).Draw(rt, "writes at once"))
	names := make([]string, len(bodies))
	for i := range bodies {
		bodies[i] = w.drawValidBody(rt, cur)
		names[i] = bodies[i].Name
	}
	if !w.begin(fmt.Sprintf("update %s %d %d times at once: %s", e.t.inv.Key, id, len(bodies), strings.Join(names, "; "))) {
		return
	}
	w.writing(id)
	xs, _ := e.t.UpdateAtOnce(e.ctx, id, bodies)
	written := make([]Record, 0, len(xs))
	for i, x := range xs {
		e.lat.add(x)
		w.run.step = append(w.run.step, x)
		w.run.wrote = true
		w.wrote(id, x)
		written = append(written, w.expectWritten(rt, id, x, bodies[i], true))
	}
	e.reg.setEither(id, written)
}

// writeInvalid: a body the schema forbids; 400, and nothing changes.
func (w *worker) writeInvalid(rt *rapid.T) (plan, bool) {
	t := w.e.t
	id, cur, ok := w.drawWriteID(rt)
	if !ok {
		return plan{}, false
	}
	b := rapid.SampledFrom(t.InvalidBodies(cur)).Draw(rt, "invalid body")
	return plan{what: fmt.Sprintf("update %s %d with %s (invalid)", t.inv.Key, id, b.Name), r: t.Update(id, b.Raw), id: id, writes: true, stores: true, want: ExpectInvalidBody}, true
}

// writeSilent: a body the contract is silent on; 200 (the model takes the
// answer) or 400 (nothing changes).
func (w *worker) writeSilent(rt *rapid.T) (plan, bool) {
	e := w.e
	id, cur, ok := w.drawWriteID(rt)
	if !ok {
		return plan{}, false
	}
	bodies := e.t.SilentBodies(cur)
	if ints := w.silentInts(cur); len(ints) > 0 && rapid.Bool().Draw(rt, "a number where bugs gather") {
		bodies = ints
	}
	if rapid.Bool().Draw(rt, "another content type") {
		ct := rapid.SampledFrom([]string{"text/plain", "application/x-www-form-urlencoded", "application/xml"}).Draw(rt, "content type")
		bodies = []Body{{Name: "a valid body sent as " + ct, Raw: e.t.Harmless(cur), Kind: Silent, ContentType: ct}}
	}
	b := rapid.SampledFrom(bodies).Draw(rt, "silent body")
	r := e.t.Update(id, b.Raw)
	r.ContentType = b.ContentType
	return plan{what: fmt.Sprintf("update %s %d with %s (the contract is silent)", e.t.inv.Key, id, b.Name), r: r, id: id, writes: true, stores: true, want: ExpectSilentBody(b),
		then: func(rt *rapid.T, x *Exchange) {
			if x.Status < 300 { // accepted: the model takes the answer, whatever values it shows
				e.reg.set(id, w.expectWritten(rt, id, x, Body{}, false))
			}
		}}, true
}

// silentInts are bodies setting an integer field cur has to a special
// integer the contract neither allows nor forbids: past the range the
// suite expects accepted, inside any stated bound and on the multipleOf.
func (w *worker) silentInts(cur Record) []Body {
	t := w.e.t
	var bs []Body
	for _, f := range t.fieldsOf("integer") {
		if _, ok := t.valueOf(cur, f.Name); !ok {
			continue
		}
		for _, v := range spec.SpecialInts {
			if f.Unsure(v) {
				bs = append(bs, t.with(cur, f.Name, json.RawMessage(v.String()), fmt.Sprintf("%s %s", f.Name, v), Silent))
			}
		}
	}
	return bs
}

// writeUnknown: a valid update of an identifier nobody lists; 404.
func (w *worker) writeUnknown(rt *rapid.T) (plan, bool) {
	e := w.e
	id, ok := w.drawUnknownID(rt, true)
	if !ok {
		return plan{}, false
	}
	cur, _ := e.reg.get(w.own[0])
	return plan{what: fmt.Sprintf("update the unknown %s %d", e.t.inv.Key, id), r: e.t.Update(id, e.t.Harmless(cur)), want: ExpectUnknown}, true
}

// malformedID: an identifier that is not one; 400 or 404. Without
// --allow-mutations it carries no body, so a target that reads
// identifiers loosely (abc as 1) has no values to write anywhere; with
// it, the body is a worker's record's own values.
func (w *worker) malformedID(rt *rapid.T) (plan, bool) {
	t := w.e.t
	if t.first == nil || len(t.first.Order) == 0 {
		return plan{}, false
	}
	raw := rapid.SampledFrom(t.MalformedIDs()).Draw(rt, "malformed id")
	r := Request{Method: t.inv.Update.Method, Path: t.ItemPath(raw)}
	if len(w.own) > 0 {
		_, cur, ok := w.drawWriteID(rt)
		if !ok {
			return plan{}, false
		}
		r.Body = t.Harmless(cur)
	}
	return plan{what: fmt.Sprintf("update %s %q (not an identifier)", t.inv.Key, raw), r: r, busy: r.Body != nil, want: ExpectMalformedID}, true
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

// badCredential: any operation with a bad credential; 401.
func (w *worker) badCredential(rt *rapid.T) (plan, bool) {
	e, t := w.e, w.e.t
	c := rapid.SampledFrom(BadCredentials).Draw(rt, "credential")
	op := rapid.SampledFrom(t.contract.Operations).Draw(rt, "operation")
	path, what, kind := op.Path, "", "listed"
	// The record a wrongly accepted update would write to, with its own
	// values: the worker's, or, for a worker that owns none, a listed
	// record no worker writes to.
	curID, cur, hasCur := w.drawWriteID(rt)
	if len(op.PathParams()) > 0 {
		kinds := []string{"listed", "malformed"}
		if len(w.own) > 0 {
			kinds = append(kinds, "unknown")
		}
		var id string
		switch kind = rapid.SampledFrom(kinds).Draw(rt, "id kind"); kind {
		case "listed":
			if !hasCur {
				// Only where the run may write anywhere: --pet-id names
				// the one record a request with a body may address.
				n, ok := w.drawListedID(rt)
				if !ok || e.reg.owner(n) >= 0 || (t.cfg.PetID != 0 && n != t.cfg.PetID) {
					return plan{}, false
				}
				curID, hasCur = n, true
				cur, _ = e.reg.get(n)
			}
			id = strconv.FormatInt(curID, 10)
		case "unknown":
			n, ok := w.drawUnknownID(rt, true)
			if !ok {
				return plan{}, false
			}
			id = strconv.FormatInt(n, 10)
		default:
			id = rapid.SampledFrom(t.MalformedIDs()).Draw(rt, "malformed id")
		}
		path, what = pathWith(op, id), " on "+id
	}
	r := Request{Method: op.Method, Path: path, Auth: c.Auth(t.Key())}
	switch {
	case op == t.inv.Update && !hasCur:
		// A worker that owns no record sends no body: nothing a target
		// that ignores the credential could write.
		if kind != "malformed" {
			return plan{}, false
		}
	case op == t.inv.Update:
		r.Body = t.Harmless(cur)
		if rapid.Bool().Draw(rt, "malformed body") {
			r.Body = r.Body[:len(r.Body)-1]
			what += " with malformed JSON"
		}
	case op.Writes() && op.Body != nil:
		// Another write: a body valid against its schema, which a target
		// that ignores the credential would act on; only with
		// --allow-mutations.
		if !t.cfg.AllowMutations || len(w.own) == 0 {
			return plan{}, false
		}
		b, ok := t.ValidBody(op, rapid.IntRange(0, 50).Draw(rt, "body"))
		if !ok {
			return plan{}, false
		}
		r.Body = b
	case op.Writes() && (!t.cfg.AllowMutations || len(w.own) == 0):
		return plan{}, false
	}
	mine := op.Writes() && hasCur && slices.Contains(w.own, curID) && kind == "listed" && r.Body != nil
	return plan{what: fmt.Sprintf("%s with %s%s", op.Name(), c.Name, what), r: r, busy: op.Writes(), id: curID, writes: mine, stores: mine && op == t.inv.Update, want: ExpectAuth}, true
}

// callOperation: any reading operation with the key; where it answers a
// record, the model's.
func (w *worker) callOperation(rt *rapid.T) (plan, bool) {
	e, t := w.e, w.e.t
	reads := slices.DeleteFunc(slices.Clone(t.contract.Operations), (*spec.Operation).Writes)
	op := rapid.SampledFrom(reads).Draw(rt, "operation")
	var id int64
	known := true
	if len(op.PathParams()) > 0 {
		var ok bool
		if rapid.Bool().Draw(rt, "unknown") {
			id, ok = w.drawUnknownID(rt, false)
			known = false
		} else {
			id, ok = w.drawListedID(rt)
		}
		if !ok {
			return plan{}, false
		}
	}
	path := PathFor(op, id)
	return plan{what: fmt.Sprintf("%s %s", op.Method, path), r: Request{Method: op.Method, Path: path}, then: func(rt *rapid.T, x *Exchange) {
		if !t.ReturnsRecord(op) || len(op.PathParams()) == 0 {
			return // the invariant checks the response's rules
		}
		if !known {
			if ExpectUnknown.DocumentedBy(op) {
				w.expect(rt, x, ExpectUnknown.Problems(x))
			}
			return
		}
		listed, ok := ExpectListed(op)
		if !ok {
			return
		}
		w.expect(rt, x, listed.Problems(x))
		r, ps := recordProblems(x, t.inv.Key)
		w.expect(rt, x, ps)
		if want, ok := e.reg.get(id); ok && e.reg.settled(id, w.n) {
			w.expect(rt, x, AsListedProblems(want, r))
		}
	}}, true
}
