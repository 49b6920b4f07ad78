package conformance

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/report"
)

// Defaults of the exploration (ExploreConfig).
const (
	DefaultExploreTime    = 10 * time.Second
	DefaultShrinkTime     = 10 * time.Second
	DefaultSequenceLength = 15
)

// exploreChecks is how many sequences one rapid.Check draws for all the
// workers together; each worker runs the ones whose number it owns.
// More than any run gets through: the budget ends a run, not this.
const exploreChecks = 1 << 14

// ExploreConfig bounds the exploration (Target.Explore).
type ExploreConfig struct {
	Off            bool          // no exploration
	Time           time.Duration // how long new sequences are drawn (shrinking takes at most ShrinkTime more); 0: DefaultExploreTime
	Steps          int           // the steps of all workers together, besides Time; 0: no bound
	Workers        int           // sequences at once, each on records of its own; 0: Config.Workers
	Seed           uint64        // the same seed against a target in the same state draws the same sequences; 0: random (reported)
	SequenceLength int           // the average steps of a sequence; 0: DefaultSequenceLength
	ShrinkTime     time.Duration // bounds shrinking a failure; 0: Time, at most DefaultShrinkTime; negative: none (replayed once)
}

func (c ExploreConfig) withDefaults() ExploreConfig {
	orDefault(&c.Time, DefaultExploreTime)
	orDefault(&c.SequenceLength, DefaultSequenceLength)
	if c.ShrinkTime == 0 {
		c.ShrinkTime = min(c.Time, DefaultShrinkTime)
	}
	if c.Seed == 0 {
		c.Seed = rand.Uint64()&(1<<53-1) | 1
	}
	return c
}

// batchSeed derives the seed of a round of checks from the run's
// (splitmix64): the same run seed gives the same rounds, and neighbouring
// seeds share none.
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

// An exploreResult is what an exploration did and found.
type exploreResult struct {
	Seed          uint64
	Workers       int
	Steps         int // steps run while exploring (not counting shrinking)
	Sequences     int
	Elapsed       time.Duration // shrinking included
	Found         time.Duration // when the failure was found, from the start; 0: none
	Stopped       string        // why it stopped drawing: "the time budget", "the step budget", "an interrupt", "a failure"
	Failure       *exploreFailure
	P50, P95, Max time.Duration // how long the target took to answer
	Budget        time.Duration // the time budget (--explore-time)
}

// MinExploreSteps is the fewest steps an exploration stopped by its time
// budget must make to mean much (README: How much it explored); fewer,
// and Thin says so.
const MinExploreSteps = 200

// Thin says, where the exploration ran out of time before MinExploreSteps
// steps, how little it explored and what to do; "" otherwise.
func (r *exploreResult) Thin() string {
	if r.Stopped != "the time budget" || r.Steps >= MinExploreSteps {
		return ""
	}
	s := fmt.Sprintf("the exploration made only %s in its %s budget, fewer than the %d it needs to mean much; \"nothing broken\" says little", report.Plural(r.Steps, "step"), r.Budget, MinExploreSteps)
	if r.Max > 0 {
		s += fmt.Sprintf(". The target answered in %s (p50), %s (p95), %s at most", r.P50, r.P95, r.Max)
	}
	// A step is a request and a list, the workers' steps overlap.
	var per time.Duration
	switch {
	case r.Steps > 0 && r.Elapsed > 0:
		per = r.Elapsed / time.Duration(r.Steps)
	case r.P50 > 0 && r.Workers > 0:
		per = 2 * r.P50 / time.Duration(r.Workers)
	}
	need := "a longer --explore-time"
	if per > 0 {
		need = fmt.Sprintf("--explore-time %s or more", max(per*MinExploreSteps, time.Second).Round(time.Second))
	}
	return s + ". Give " + need + ", more --workers, or run against a closer or faster target"
}

// A latencies records how long the target took to answer; at most
// maxLatencies kept.
type latencies struct {
	mu sync.Mutex // guards d
	d  []time.Duration
}

const maxLatencies = 1 << 20

func (l *latencies) add(x *Exchange) {
	if x.Status == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) < maxLatencies {
		l.d = append(l.d, x.Elapsed)
	}
}

// percentiles returns the median, the 95th percentile and the longest.
func (l *latencies) percentiles() (p50, p95, most time.Duration) {
	l.mu.Lock()
	d := slices.Clone(l.d)
	l.mu.Unlock()
	if len(d) == 0 {
		return 0, 0, 0
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))].Round(time.Millisecond) }
	return at(0.5), at(0.95), d[len(d)-1].Round(time.Millisecond)
}

// An exploreFailure is a sequence of calls after which the target broke
// the contract, shrunk to the shortest one rapid found in the time
// allowed.
type exploreFailure struct {
	Rule     string   // the rule broken
	Cause    Cause    // what the rule is about, for the summary's grouping
	Detail   string   // what was sent and what came back at the failing step
	Steps    []string // the sequence, one line per step, each with its curl lines
	Original int      // steps of the sequence first found
	Shrunk   bool     // the sequence shown is one rapid made shorter, or found as short
	Why      string   // where not Shrunk, why the sequence shown is the one first found
}

func (f *exploreFailure) String() string {
	var b strings.Builder
	how := fmt.Sprintf("shrunk from %d steps", f.Original)
	if !f.Shrunk {
		how = "as first found: " + f.Why
	}
	fmt.Fprintf(&b, "a sequence of %s breaks the contract (%s): %s\n", report.Plural(len(f.Steps), "step"), how, f.Rule)
	for i, s := range f.Steps {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, s)
	}
	b.WriteString(f.Detail)
	return b.String()
}

func (r *exploreResult) Summary() string {
	found := "nothing broken"
	if r.Failure != nil {
		broken := fmt.Sprintf("%q did not hold", r.Failure.Rule)
		found = "found: " + broken
		if r.Found > 0 {
			found = fmt.Sprintf("found after %s: %s", r.Found.Round(time.Millisecond), broken)
		}
	}
	lat := ""
	if r.Max > 0 {
		lat = fmt.Sprintf(", answers in %s (p50), %s (p95), %s (max)", r.P50, r.P95, r.Max)
	}
	return fmt.Sprintf("%d steps in %d sequences in %s, %s, seed %d%s, stopped by %s; %s",
		r.Steps, r.Sequences, r.Elapsed.Round(time.Millisecond), report.Plural(r.Workers, "worker"), r.Seed, lat, r.Stopped, found)
}

// Explore runs the state machine against the target within
// Config.Explore's budget. Without Config.AllowMutations it sends only
// reads and requests a conforming target rejects (README: Safety); with
// it, every record a sequence writes is restored when the sequence ends,
// and checked when the exploration ends.
func (t *Target) Explore(ctx context.Context) *exploreResult {
	cfg := t.cfg.Explore
	res := &exploreResult{Seed: cfg.Seed, Budget: cfg.Time}
	if cfg.Off {
		res.Stopped = "nothing (exploration is off)"
		return res
	}
	e := newExplorer(ctx, t)
	res.Workers = len(e.workers)
	if e.reg == nil {
		res.Stopped = "nothing: no list to start from"
		return res
	}
	var wg sync.WaitGroup
	for _, w := range e.workers {
		wg.Go(w.explore)
	}
	wg.Wait()
	res.Steps, res.Sequences, res.Elapsed = int(e.steps.Load()), int(e.sequences.Load()), time.Since(e.start)
	res.P50, res.P95, res.Max = e.lat.percentiles()
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.first != nil:
		res.Stopped = "a failure"
	case ctx.Err() != nil || e.halted():
		res.Stopped = "an interrupt"
	case cfg.Steps > 0 && res.Steps >= cfg.Steps:
		res.Stopped = "the step budget"
	default:
		res.Stopped = "the time budget"
	}
	if f := e.first; f != nil {
		// The shortest failing sequence shrinking found for the same
		// rule; where there is none (why), the one first found, as it was.
		last, why := e.last, ""
		switch {
		case cfg.ShrinkTime < 0:
			why = "shrinking is off"
		case !e.reproChecked:
			why = "shrinking ran out of time before it could replay the sequence"
		case !e.reproduced:
			why = "it did not happen again when the sequence was replayed alone (a flaky target, or the effect of another worker's requests)"
		case last == nil || last.rule != f.rule:
			why = "shrinking ran out of time"
		case len(last.lines) >= len(f.lines) && time.Now().After(e.shrinkUntil):
			why = "shrinking ran out of time before it found a shorter sequence"
		case len(last.lines) >= len(f.lines):
			why = "no shorter sequence fails the same way"
		}
		if why != "" {
			last = f
		}
		res.Found = e.found
		res.Failure = &exploreFailure{Rule: last.rule, Cause: last.cause, Detail: last.detail, Steps: last.lines, Original: len(f.lines), Shrunk: why == "", Why: why}
	}
	if t.cfg.AllowMutations && res.Failure == nil && ctx.Err() == nil {
		if err := e.settle(); err != nil {
			res.Failure = &exploreFailure{Rule: "every record written to is put back when the exploration ends", Cause: spec.RuleRestoreFailed, Detail: "problem: " + err.Error() + "\n", Why: "found after the last sequence"}
		}
	}
	return res
}

// rapidTB is the rapid.TB a worker runs under: it keeps rapid's verdict
// and discards its logs.
type rapidTB struct{ failed atomic.Bool }

func (*rapidTB) Helper()                  {}
func (*rapidTB) Name() string             { return "conformance-explore" }
func (*rapidTB) Logf(string, ...any)      {}
func (*rapidTB) Log(...any)               {}
func (tb *rapidTB) Skipf(string, ...any)  { tb.Fail() }
func (tb *rapidTB) Skip(...any)           { tb.Fail() }
func (tb *rapidTB) SkipNow()              { tb.Fail() }
func (tb *rapidTB) Errorf(string, ...any) { tb.Fail() }
func (tb *rapidTB) Error(...any)          { tb.Fail() }
func (tb *rapidTB) Fatalf(string, ...any) { tb.Fail() }
func (tb *rapidTB) Fatal(...any)          { tb.Fail() }
func (tb *rapidTB) FailNow()              { tb.Fail() }
func (tb *rapidTB) Fail()                 { tb.failed.Store(true) }
func (tb *rapidTB) Failed() bool          { return tb.failed.Load() }

// rapidSettings are rapid's own settings, read from its flags.
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

// withRapid runs f with rapid's flags set to s. Checks with the same
// settings (the workers of one exploration) run at once; others wait.
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

// An explorer is what the workers of one exploration share: the budget,
// the model of every record (the registry), and the first failure.
type explorer struct {
	t        *Target
	ctx      context.Context
	cfg      ExploreConfig
	start    time.Time
	deadline time.Time
	reg      *registry
	workers  []*worker
	lists    *semaphore.Weighted // bounds the bytes of lists held at once (gateBytes)
	listSize atomic.Int64        // the size of the last list read: what the next one is taken to be
	lat      latencies           // how long the target took to answer

	steps, sequences atomic.Int64 // while exploring, not shrinking

	mu           sync.Mutex // guards what follows
	shrinker     *worker    // the worker whose failure is being shrunk; nil: none yet
	shrinkUntil  time.Time
	reproChecked bool // rapid replayed the first failing sequence
	reproduced   bool // and it failed again, the same way
	first, last  *sequenceRun
	found        time.Duration // when first was found, from the start
}

// newExplorer lists the records, makes them the model, and gives each
// worker records of its own to write to (README: Workers).
func newExplorer(ctx context.Context, t *Target) *explorer {
	cfg := t.cfg.Explore
	n := cfg.Workers
	orDefault(&n, t.cfg.Workers)
	e := &explorer{t: t, ctx: ctx, cfg: cfg, start: time.Now(), lists: semaphore.NewWeighted(gateBytes)}
	e.deadline = e.start.Add(cfg.Time)
	for i := range n {
		e.workers = append(e.workers, &worker{e: e, n: i, tb: &rapidTB{}})
	}
	ix := t.first
	x := t.Send(ctx, Request{Method: t.inv.List.Method, Path: t.inv.List.Path})
	if got, err := DecodeList(ctx, x.RespBody, t.inv.Key); err == nil && x.Status == 200 && x.Failure == "" {
		ix = got
	}
	e.listSize.Store(int64(len(x.RespBody)))
	if ix == nil {
		return e
	}
	e.reg = newRegistry(ix)
	if !t.cfg.AllowMutations {
		return e
	}
	ids := slices.Sorted(slices.Values(ix.Order))
	if t.cfg.PetID != 0 {
		ids = []int64{t.cfg.PetID}
	}
	// Between two workers' blocks lies a record no worker writes: a write
	// that wrongly changes the record next to it changes one that every
	// worker may judge, rather than one another worker is writing.
	writers := min(n, max(1, len(ids)/2))
	for i := range writers {
		lo, hi := i*len(ids)/writers, (i+1)*len(ids)/writers
		if i < writers-1 {
			hi-- // the gap
		}
		own := ids[lo:hi]
		e.workers[i].own = own
		for _, id := range own {
			e.reg.recs[id].owner = i
		}
	}
	return e
}

// halted reports whether the run was stopped.
func (e *explorer) halted() bool {
	why, _ := e.t.stop.reason()
	return why != ""
}

// idleFor reports whether w should do nothing now: the budget is spent,
// the run stopped, or another worker's failure is being shrunk. While w
// shrinks its own failure, only the shrinking time applies.
func (e *explorer) idleFor(w *worker) bool {
	if e.ctx.Err() != nil || e.halted() {
		return true
	}
	e.mu.Lock()
	shrinker, until := e.shrinker, e.shrinkUntil
	e.mu.Unlock()
	switch {
	case shrinker == w:
		// rapid bounds shrinking only between its passes; a slow target
		// would stretch one pass, so the property bounds it too.
		return time.Now().After(until)
	case shrinker != nil:
		return true
	}
	return (e.cfg.Steps > 0 && e.steps.Load() >= int64(e.cfg.Steps)) || time.Now().After(e.deadline)
}

// takeStep counts one step, unless the step budget is spent.
func (e *explorer) takeStep() bool {
	for {
		n := e.steps.Load()
		if e.cfg.Steps > 0 && n >= int64(e.cfg.Steps) {
			return false
		}
		if e.steps.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (e *explorer) shrinking(w *worker) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.shrinker == w
}

// failed records a failing sequence of w: the first one of the run, or,
// while w shrinks it, a shorter one with the same rule. It reports
// whether w should go on (false: another worker's failure came first).
func (e *explorer) failed(w *worker, run *sequenceRun, seqTime time.Duration) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.first == nil:
		e.first, e.shrinker, e.found = run, w, time.Since(e.start)
		// Room for rapid to replay the sequence at least twice (to see
		// that it fails again), then the time budget for shrinking.
		e.shrinkUntil = time.Now().Add(max(e.cfg.ShrinkTime, 0) + 2*seqTime)
	case e.shrinker != w:
		return false
	}
	if run.rule == e.first.rule {
		e.last = run
	}
	return true
}

// settle checks, when the exploration ends, that every record a worker
// wrote to is as it first was, and puts back any that is not.
func (e *explorer) settle() error {
	var ids []int64
	for _, w := range e.workers {
		ids = append(ids, w.touched...)
	}
	if len(ids) == 0 {
		return nil
	}
	ix, x := e.t.readList(context.Background(), true)
	if ix == nil {
		return fmt.Errorf("the list after the exploration could not be read (%s)", gotLine(x))
	}
	var failed []string
	for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
		e.t.Records.mu.Lock()
		orig, ok := e.t.Records.pending[id]
		e.t.Records.mu.Unlock()
		if ok && e.t.restored(orig, ix.ByID[id]) == nil {
			e.t.settled(id, nil)
		} else if err := e.t.restore(id); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return nil
}
