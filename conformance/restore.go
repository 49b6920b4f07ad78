package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"
)

// A guard remembers the records a run wrote to, with their original
// values, until they are restored, and all of them until the run ends,
// when Settle checks each. The original of a record is as the run's first
// list showed it, read before the run's first write: a list read later,
// from a replica that lags the writes, may show a value the run wrote
// itself.
type guard struct {
	first   *Index           // the records as first listed, before any write; set before the checks run
	mu      sync.Mutex       // guards pending, written and why
	pending map[int64]Record // records written to and not yet restored, as they were
	written map[int64]Record // every record written to, as it was
	why     map[int64]string // why the last restore of a record did not hold
}

// remember records the original of id to restore: as first listed, else
// orig; unless one is already recorded.
func (g *guard) remember(id int64, orig Record) {
	if g.first != nil {
		if r, ok := g.first.ByID[id]; ok {
			orig = r
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if w, ok := g.written[id]; ok {
		orig = w
	} else {
		g.written[id] = orig
	}
	if _, dup := g.pending[id]; !dup {
		g.pending[id] = orig
	}
}

// Written returns the identifiers of the records the run wrote to (or
// found changed and put back), in order.
func (t *Target) Written() []int64 {
	t.guard.mu.Lock()
	defer t.guard.mu.Unlock()
	return slices.Sorted(maps.Keys(t.guard.written))
}

// Protect records the record's original values before a check writes to
// it and restores them when the check ends, pass or fail. It returns the
// original record. A restore that fails fails the check, unless it failed
// already: its cause is the one to rank (a 5xx that refused the restore is
// the target's server error; restore-failed is a restore acknowledged and
// not kept). The run tries again when it ends (Settle).
func (t *Target) Protect(ctx context.Context, id int64) Record {
	ginkgo.GinkgoHelper()
	t.RequireStable()
	ix, x := t.List(ctx)
	orig, ok := ix.ByID[id]
	if !ok {
		t.FailBecause(CauseRecordMissing, x, fmt.Sprintf("%s %d to be listed before the check writes to it", t.inv.Key, id), []string{"not listed"})
	}
	t.guard.remember(id, orig)
	if f := t.guard.first; f != nil && f.ByID[id].JSON != nil {
		orig = f.ByID[id]
	}
	ginkgo.DeferCleanup(func() {
		if err := t.restore(id); err != nil {
			ginkgo.AddReportEntry(entryRestoreFailed, err.Error(), ginkgo.ReportEntryVisibilityAlways)
			if ginkgo.CurrentSpecReport().Failed() {
				return
			}
			t.because(restoreCause(err), "the check changed data it could not restore")
			ginkgo.Fail("the check changed data it could not restore: " + err.Error())
		}
	})
	return orig
}

// restoreCause names the cause of a restore that failed: the target's
// answer to the write where it was a 5xx or none, else restore-failed.
func restoreCause(err error) Cause {
	var we *writeError
	if errors.As(err, &we) {
		return we.cause
	}
	return CauseRestoreFailed
}

// restore puts the record back and checks that the list shows it.
func (t *Target) restore(id int64) error {
	t.guard.mu.Lock()
	orig, ok := t.guard.pending[id]
	t.guard.mu.Unlock()
	if !ok {
		return nil
	}
	fail := func(why error) error {
		t.guard.mu.Lock()
		t.guard.why[id] = why.Error()
		t.guard.mu.Unlock()
		return fmt.Errorf("%s %d: could not restore %s: %w", t.inv.Key, id, t.restorable(orig), why)
	}
	if why, gone := t.stop.reason(); gone {
		return fail(errors.New(why))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*t.cfg.Timeout+t.cfg.RestoreDeadline)
	defer cancel()
	if err := t.putBack(ctx, orig); err != nil {
		return fail(err)
	}
	t.guard.mu.Lock()
	delete(t.guard.pending, id)
	delete(t.guard.why, id)
	t.guard.mu.Unlock()
	return nil
}

// Settle puts back every record the run wrote to and did not restore
// yet (each write sent again while the target answers 5xx or nothing),
// then reads the list, again every restorePoll up to
// Config.RestoreDeadline while a record whose restore was acknowledged
// still differs (reads may lag), and returns the records the last list
// shows otherwise than before the run's first write, each with the values
// found and wanted and why: the one list of what to set back by hand,
// which every report and the console show. The deadline is shared: a run
// that left many records changed waits it once. A run that wrote nothing
// reads nothing.
func (t *Target) Settle() []report.Changed {
	ids := t.Written()
	if len(ids) == 0 {
		return nil
	}
	why := func(id int64, err error) {
		t.guard.mu.Lock()
		t.guard.why[id] = err.Error()
		t.guard.mu.Unlock()
	}
	refused := map[int64]bool{} // the restore write was not accepted: no read can show it
	t.guard.mu.Lock()
	pending := maps.Clone(t.guard.pending)
	t.guard.mu.Unlock()
	_, gone := t.stop.reason()
	for _, id := range slices.Sorted(maps.Keys(pending)) {
		if gone {
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), restoreAttempts*(t.cfg.Timeout+restorePoll))
		if err := t.writeBackRetrying(ctx, pending[id]); err != nil {
			why(id, err)
			refused[id] = true
		}
		cancel()
	}
	deadline := time.Now().Add(t.cfg.RestoreDeadline)
	rewritten := map[int64]bool{} // written back again at the end
	for {
		var ix *Index
		listed := ""
		if why, gone := t.stop.reason(); gone {
			listed = "not known (" + why + ")"
		} else {
			var x *Exchange
			if ix, x = t.readList(context.Background(), true); ix == nil {
				listed = "not known (the list after the run answered " + gotLine(x) + ")"
			}
		}
		var left []report.Changed
		waiting := false // a restore was acknowledged and the list does not show it yet
		for _, id := range ids {
			t.guard.mu.Lock()
			orig, reason := t.guard.written[id], t.guard.why[id]
			_, isPending := t.guard.pending[id]
			t.guard.mu.Unlock()
			if ix == nil && !isPending {
				continue // restored and read back; the list cannot say more now
			}
			c := report.Changed{Record: fmt.Sprintf("%s %d", t.inv.Key, id), Found: listed, Wanted: t.restorable(orig), Why: reason}
			if ix != nil {
				got := ix.ByID[id]
				err := t.restored(orig, got)
				if err == nil {
					t.guard.mu.Lock()
					delete(t.guard.pending, id)
					delete(t.guard.why, id)
					t.guard.mu.Unlock()
					continue
				}
				c.Found = t.found(orig, got)
				if !refused[id] && !isPending && !rewritten[id] {
					// Restored and read back once, changed since: put back
					// again.
					rewritten[id] = true
					ctx, cancel := context.WithTimeout(context.Background(), restoreAttempts*(t.cfg.Timeout+restorePoll))
					if err := t.writeBackRetrying(ctx, orig); err != nil {
						why(id, err)
						refused[id] = true
						c.Why = err.Error()
					}
					cancel()
				}
				if !refused[id] {
					waiting = true
					c.Why = fmt.Sprintf("the restore was acknowledged; the list still showed otherwise %s later", t.cfg.RestoreDeadline)
					if rewritten[id] {
						c.Why = "it changed after its restore was read back; written back again, the list still showed otherwise"
					}
				}
			}
			left = append(left, c)
		}
		if len(left) == 0 || !waiting || ix == nil || time.Now().After(deadline) {
			return left
		}
		pause(context.Background(), restorePoll)
	}
}

// found renders the writable fields of got that orig has, as restorable
// renders orig's: "quantity 555", "(not listed)".
func (t *Target) found(orig, got Record) string {
	if got.IsZero() {
		return "(not listed)"
	}
	var parts []string
	for _, f := range t.writable() {
		_, had := orig.Field(f.Name)
		v, has := got.Field(f.Name)
		switch {
		case has:
			parts = append(parts, f.Name+" "+exchange.Printable(v))
		case had:
			parts = append(parts, f.Name+" (absent)")
		}
	}
	if len(parts) == 0 {
		return got.String()
	}
	return strings.Join(parts, ", ")
}

// restorable renders the values a restore sets, such as "quantity 5".
func (t *Target) restorable(orig Record) string {
	var parts []string
	for _, f := range t.writable() {
		if v, ok := orig.Field(f.Name); ok {
			parts = append(parts, f.Name+" "+exchange.Printable(v))
		}
	}
	if len(parts) == 0 {
		return orig.String()
	}
	return strings.Join(parts, ", ")
}

// putBack writes orig's values and reads the list until it shows them
// or Config.RestoreDeadline passes: a target whose reads lag its writes
// shows a restore late, not never. A write answered 5xx, or not at all,
// is sent again meanwhile.
func (t *Target) putBack(ctx context.Context, orig Record) error {
	deadline := time.Now().Add(t.cfg.RestoreDeadline)
	err := t.writeBackRetrying(ctx, orig)
	if err != nil {
		return err
	}
	for {
		if ix, _ := t.readList(ctx, true); ix == nil {
			err = fmt.Errorf("the list after the restore could not be read")
		} else if err = t.restored(orig, ix.ByID[orig.ID]); err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%w (still so %s after the restore was acknowledged)", err, t.cfg.RestoreDeadline)
		}
		pause(ctx, restorePoll)
	}
}

// StaleRead tells an update that was not stored from one a lagging read
// does not show yet. acked is when the update was answered 200 (zero: not
// known); lx the list after it, which showed record id otherwise than any
// of wants. It reads the list again every restorePoll, up to
// staleReadWait (at most Config.RestoreDeadline) after lx, and where one
// shows a want (the fields in skip aside) it returns what was seen with
// its timings: a stale read (CauseStaleRead). "": no later list showed it.
func (t *Target) StaleRead(ctx context.Context, acked time.Time, lx *Exchange, id int64, skip []string, wants ...Record) string {
	deadline := lx.Time.Add(min(staleReadWait, t.cfg.RestoreDeadline))
	for time.Now().Before(deadline) && ctx.Err() == nil {
		pause(ctx, restorePoll)
		ix, x := t.readList(ctx, false)
		if ix == nil {
			break
		}
		got, ok := ix.ByID[id]
		if !ok || !slices.ContainsFunc(wants, func(w Record) bool { return got.EqualExcept(w, skip) }) {
			continue
		}
		if acked.IsZero() {
			return fmt.Sprintf("reads lag writes: a list sent %s later showed %s %d as written", since(lx.Time, x.Time), t.inv.Key, id)
		}
		return fmt.Sprintf("reads lag writes: the list sent %s after the update was acknowledged showed %s %d as before it; the list sent %s after showed the update",
			since(acked, lx.Time), t.inv.Key, id, since(acked, x.Time))
	}
	return ""
}

// readList reads the list: its index, nil where the answer is no list
// (ExpectList, ListProblems). restore marks a restore's read.
func (t *Target) readList(ctx context.Context, restore bool) (*Index, *Exchange) {
	x := t.send(ctx, Request{Method: t.inv.List.Method, Path: t.inv.List.Path, restore: restore})
	if len(ExpectList.Problems(x)) > 0 {
		return nil, x
	}
	ix, ps := t.ListProblems(ctx, x)
	if len(ps) > 0 {
		return nil, x
	}
	return ix, x
}

// since renders how long after from at was, to the millisecond.
func since(from, at time.Time) string { return max(at.Sub(from), 0).Round(time.Millisecond).String() }

// staleReadWait is how long after an acknowledged update a list may show
// it late and the update count as stored (a read replica's lag).
const staleReadWait = 2 * time.Second

// How a restore is retried: writes answered 5xx or not at all are sent
// again, up to restoreAttempts times; the list is read again every
// restorePoll until it shows the restore.
const (
	restoreAttempts = 4
	restorePoll     = 100 * time.Millisecond
)

// errRetry marks a restore write worth sending again.
var errRetry = errors.New("worth another try")

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// A writeError is a restore's write that the target did not accept:
// worth sending again where it answered 5xx or nothing.
type writeError struct {
	cause Cause // server-error, no-answer, restore-failed
	msg   string
}

func (e *writeError) Error() string { return e.msg }

// Is makes a 5xx or no answer errRetry.
func (e *writeError) Is(target error) bool {
	return target == errRetry && e.cause != CauseRestoreFailed
}

// writeBack sends the update that puts orig's values back.
func (t *Target) writeBack(ctx context.Context, orig Record) error {
	r := t.Update(orig.ID, t.Harmless(orig))
	r.restore = true
	x := t.send(ctx, r)
	switch {
	case x.Failure == exchange.FailureNoAnswer:
		return &writeError{CauseNoAnswer, x.Err}
	case x.Status >= 500:
		return &writeError{CauseServerError, fmt.Sprintf("%s answered %d", t.inv.Update.Method, x.Status)}
	case x.Status != http.StatusOK:
		return &writeError{CauseRestoreFailed, fmt.Sprintf("%s answered %d", t.inv.Update.Method, x.Status)}
	}
	return nil
}

// writeBackRetrying is writeBack sent again, up to restoreAttempts times,
// while the target answers 5xx or nothing.
func (t *Target) writeBackRetrying(ctx context.Context, orig Record) error {
	var err error
	for attempt := 0; attempt < restoreAttempts; attempt++ {
		if attempt > 0 {
			pause(ctx, restorePoll)
		}
		if err = t.writeBack(ctx, orig); err == nil || !errors.Is(err, errRetry) || ctx.Err() != nil {
			return err
		}
	}
	return fmt.Errorf("%w (%d tries)", err, restoreAttempts)
}

// restored says whether got, the record as listed after a restore, shows
// orig's writable values (and no writable field orig lacked).
func (t *Target) restored(orig, got Record) error {
	for _, f := range t.writable() {
		v, had := orig.Field(f.Name)
		w, has := got.Field(f.Name)
		switch {
		case had && !has:
			return fmt.Errorf("wanted %s %s, found none: the list after the restore shows %s", f.Name, exchange.Printable(v), got)
		case had && canonical(w) != canonical(v):
			return fmt.Errorf("wanted %s %s, found %s: the list after the restore shows %s", f.Name, exchange.Printable(v), exchange.Printable(w), got)
		case !had && has:
			return fmt.Errorf("the list after the restore shows %s with %s %s, a field it did not have; an update cannot take it away", got, f.Name, exchange.Printable(w))
		}
	}
	return nil
}

// RestoreAll restores every record a check wrote to and did not restore
// yet, as after an interrupt or at the end of a run (Settle). It returns
// one message per record it could not restore.
func (t *Target) RestoreAll() []string {
	t.guard.mu.Lock()
	ids := slices.Sorted(maps.Keys(t.guard.pending))
	t.guard.mu.Unlock()
	var failed []string
	for _, id := range ids {
		if err := t.restore(id); err != nil {
			failed = append(failed, err.Error())
		}
	}
	return failed
}
