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

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"
)

// Records are the records a run protects and restores: the first
// listing, and the original values of every record the run writes to
// (Target.Protect remembers one), until a restore is read back, and of
// all of them until the run ends, when Settle puts back and checks each.
// The original of a record is as the first list showed it: a list read
// later, from a replica that lags the writes, may show a value the run
// wrote itself.
type Records struct {
	client *Client
	bodies Bodies

	first                *Index          // the records as first listed; nil when the list broke the contract
	petID                int64           // the record mutating checks touch; 0 when none is known
	listBroken, unstable string          // why the checks that need records are not judged; "": they are
	unstableX            *Exchange       // the second list, which differed
	badRecords           map[string]bool // the records the first list showed breaking the contract: its check fails on them, the others note them

	mu      sync.Mutex       // guards pending, written and why
	pending map[int64]Record // records written to and not yet restored, as they were
	written map[int64]Record // every record written to, as it was
	why     map[int64]string // why the last restore of a record did not hold
}

// PetID returns the record mutating checks touch, or 0 when none is known.
func (rs *Records) PetID() int64 { return rs.petID }

// Listed returns the records as first listed, nil when the list broke the
// contract.
func (rs *Records) Listed() *Index { return rs.first }

// ListBroken says why the first list broke the contract; "" if it did
// not.
func (rs *Records) ListBroken() string { return rs.listBroken }

// Unstable says why the target cannot be judged on what a write did (two
// lists with no write between them differ), with the second list; "" if
// it held its records still.
func (rs *Records) Unstable() (string, *Exchange) { return rs.unstable, rs.unstableX }

// remember records the original of id to restore: as first listed, else
// orig; unless one is already recorded.
func (rs *Records) remember(id int64, orig Record) {
	if rs.first != nil {
		if r, ok := rs.first.ByID[id]; ok {
			orig = r
		}
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if w, ok := rs.written[id]; ok {
		orig = w
	} else {
		rs.written[id] = orig
	}
	if _, dup := rs.pending[id]; !dup {
		rs.pending[id] = orig
	}
}

// writtenIDs returns the records the run wrote to (or put back), in order.
func (rs *Records) writtenIDs() []int64 {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Sorted(maps.Keys(rs.written))
}

// Protect records the record's original values before a check writes to
// it and restores them when the check ends, pass or fail, and returns
// them. A restore that fails fails the check, unless it failed already;
// the run tries again when it ends (Settle).
func (t *Target) Protect(ctx context.Context, id int64) Record {
	ginkgo.GinkgoHelper()
	t.RequireStable()
	ix, x := t.List(ctx)
	orig, ok := ix.ByID[id]
	if !ok {
		t.FailBecause(spec.RuleRecordMissing, x, fmt.Sprintf("%s %d to be listed before the check writes to it", t.inv.Key, id), []string{"not listed"})
	}
	t.remember(id, orig)
	if f := t.first; f != nil && f.ByID[id].JSON != nil {
		orig = f.ByID[id]
	}
	ginkgo.DeferCleanup(func() {
		if err := t.restore(id); err != nil {
			ginkgo.AddReportEntry(entryRestoreFailed, err.Error(), ginkgo.ReportEntryVisibilityAlways)
			if ginkgo.CurrentSpecReport().Failed() {
				return
			}
			t.Because(restoreCause(err), "the check changed data it could not restore")
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
	return spec.RuleRestoreFailed
}

// restore puts the record back and checks that the list shows it.
func (rs *Records) restore(id int64) error {
	rs.mu.Lock()
	orig, ok := rs.pending[id]
	rs.mu.Unlock()
	if !ok {
		return nil
	}
	err := rs.putBack(orig)
	if rs.settled(id, err); err != nil {
		return fmt.Errorf("%s %d: could not restore %s: %w", rs.bodies.inv.Key, id, rs.values(orig, orig), err)
	}
	return nil
}

// settled records that record id was restored and read back, or, with
// err, why its restore did not hold.
func (rs *Records) settled(id int64, err error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if err != nil {
		rs.why[id] = err.Error()
		return
	}
	delete(rs.pending, id)
	delete(rs.why, id)
}

// Settle puts back every record the run wrote to and did not restore
// yet, then reads the list, again every restorePoll up to
// Config.RestoreDeadline (once for all records) while a record whose
// restore was acknowledged still differs, and returns the records the
// last list shows otherwise than before the run's first write: the one
// list of what to set back by hand, which every report shows.
func (rs *Records) Settle() []report.Changed {
	ids := rs.writtenIDs()
	if len(ids) == 0 {
		return nil
	}
	refused := map[int64]bool{} // the restore write was not accepted: no read can show it
	rs.mu.Lock()
	pending := maps.Clone(rs.pending)
	rs.mu.Unlock()
	_, gone := rs.client.stop.reason()
	for _, id := range slices.Sorted(maps.Keys(pending)) {
		if gone {
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), restoreAttempts*(rs.client.cfg.Timeout+restorePoll))
		if err := rs.writeBackRetrying(ctx, pending[id]); err != nil {
			rs.settled(id, err)
			refused[id] = true
		}
		cancel()
	}
	deadline := time.Now().Add(rs.client.cfg.RestoreDeadline)
	rewritten := map[int64]bool{} // written back again at the end
	for {
		var ix *Index
		listed := ""
		if why, gone := rs.client.stop.reason(); gone {
			listed = "not known (" + why + ")"
		} else {
			var x *Exchange
			if ix, x = rs.readList(context.Background(), true); ix == nil {
				listed = "not known (the list after the run answered " + gotLine(x) + ")"
			}
		}
		var left []report.Changed
		waiting := false // a restore was acknowledged and the list does not show it yet
		for _, id := range ids {
			rs.mu.Lock()
			orig, reason := rs.written[id], rs.why[id]
			_, isPending := rs.pending[id]
			rs.mu.Unlock()
			if ix == nil && !isPending {
				continue // restored and read back; the list cannot say more now
			}
			c := report.Changed{Record: fmt.Sprintf("%s %d", rs.bodies.inv.Key, id), Found: listed, Wanted: rs.values(orig, orig), Why: reason}
			if ix != nil {
				got := ix.ByID[id]
				err := rs.restored(orig, got)
				if err == nil {
					rs.settled(id, nil)
					continue
				}
				c.Found = rs.values(orig, got)
				if !refused[id] && !isPending && !rewritten[id] {
					// Restored and read back once, changed since: put back
					// again.
					rewritten[id] = true
					ctx, cancel := context.WithTimeout(context.Background(), restoreAttempts*(rs.client.cfg.Timeout+restorePoll))
					if err := rs.writeBackRetrying(ctx, orig); err != nil {
						rs.settled(id, err)
						refused[id] = true
						c.Why = err.Error()
					}
					cancel()
				}
				if !refused[id] {
					waiting = true
					c.Why = fmt.Sprintf("the restore was acknowledged; the list still showed otherwise %s later", rs.client.cfg.RestoreDeadline)
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
		waitFor(context.Background(), restorePoll)
	}
}

// values renders the writable fields of got that orig has, such as
// "quantity 555": values(orig, orig) are what a restore of orig sets.
func (rs *Records) values(orig, got Record) string {
	if got.IsZero() {
		return "(not listed)"
	}
	var parts []string
	for _, f := range rs.bodies.writable() {
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

// putBack writes orig's values, unless the run was stopped, and reads the
// list until it shows them or Config.RestoreDeadline passes: a target
// whose reads lag its writes shows a restore late, not never.
func (rs *Records) putBack(orig Record) error {
	if why, gone := rs.client.stop.reason(); gone {
		return errors.New(why)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*rs.client.cfg.Timeout+rs.client.cfg.RestoreDeadline)
	defer cancel()
	deadline := time.Now().Add(rs.client.cfg.RestoreDeadline)
	err := rs.writeBackRetrying(ctx, orig)
	if err != nil {
		return err
	}
	for {
		if ix, _ := rs.readList(ctx, true); ix == nil {
			err = fmt.Errorf("the list after the restore could not be read")
		} else if err = rs.restored(orig, ix.ByID[orig.ID]); err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%w (still so %s after the restore was acknowledged)", err, rs.client.cfg.RestoreDeadline)
		}
		waitFor(ctx, restorePoll)
	}
}

// staleRead tells an update that was not stored from one a lagging read
// does not show yet. acked is when the update was answered 200 (zero: not
// known); lx the list after it, which showed record id otherwise than any
// of wants. It reads the list again every restorePoll, up to
// staleReadWait (at most Config.RestoreDeadline) after lx, and where one
// shows a want (skip aside) it returns what was seen with its timings;
// "": no later list showed it.
func (rs *Records) staleRead(ctx context.Context, acked time.Time, lx *Exchange, id int64, skip []string, wants ...Record) string {
	deadline := lx.Time.Add(min(staleReadWait, rs.client.cfg.RestoreDeadline))
	for time.Now().Before(deadline) && ctx.Err() == nil {
		waitFor(ctx, restorePoll)
		ix, x := rs.readList(ctx, false)
		if ix == nil {
			break
		}
		got, ok := ix.ByID[id]
		if !ok || !slices.ContainsFunc(wants, func(w Record) bool { return got.EqualExcept(w, skip) }) {
			continue
		}
		if acked.IsZero() {
			return fmt.Sprintf("reads lag writes: a list sent %s later showed %s %d as written", since(lx.Time, x.Time), rs.bodies.inv.Key, id)
		}
		return fmt.Sprintf("reads lag writes: the list sent %s after the update was acknowledged showed %s %d as before it; the list sent %s after showed the update",
			since(acked, lx.Time), rs.bodies.inv.Key, id, since(acked, x.Time))
	}
	return ""
}

// readList reads the list: its index, nil where the answer is no list.
// restore marks a restore's read.
func (rs *Records) readList(ctx context.Context, restore bool) (*Index, *Exchange) {
	x := rs.client.send(ctx, Request{Method: rs.bodies.inv.List.Method, Path: rs.bodies.inv.List.Path, restore: restore})
	if len(ExpectList.Problems(x)) > 0 {
		return nil, x
	}
	ix, ps := ListProblems(ctx, x, rs.bodies.inv.Key)
	if len(ps) > 0 {
		return nil, x
	}
	return ix, x
}

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

// A writeError is a restore's write that the target did not accept:
// worth sending again where it answered 5xx or nothing.
type writeError struct {
	cause Cause // server-error, no-answer, restore-failed
	msg   string
}

func (e *writeError) Error() string { return e.msg }

// writeBackRetrying sends the update that puts orig's values back, again
// up to restoreAttempts times while the target answers 5xx or nothing.
func (rs *Records) writeBackRetrying(ctx context.Context, orig Record) error {
	r := rs.bodies.Update(orig.ID, rs.bodies.Harmless(orig))
	r.restore = true
	var err *writeError
	for attempt := 0; attempt < restoreAttempts; attempt++ {
		if attempt > 0 {
			waitFor(ctx, restorePoll)
		}
		switch x := rs.client.send(ctx, r); {
		case x.Failure == exchange.FailureNoAnswer:
			err = &writeError{spec.RuleNoAnswer, x.Err}
		case x.Status >= 500:
			err = &writeError{spec.RuleServerError, fmt.Sprintf("%s answered %d", r.Method, x.Status)}
		case x.Status != http.StatusOK:
			return &writeError{spec.RuleRestoreFailed, fmt.Sprintf("%s answered %d", r.Method, x.Status)}
		default:
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
	}
	return fmt.Errorf("%w (%d tries)", err, restoreAttempts)
}

// restored says whether got, the record as listed after a restore, shows
// orig's writable values (and no writable field orig lacked).
func (rs *Records) restored(orig, got Record) error {
	for _, f := range rs.bodies.writable() {
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
