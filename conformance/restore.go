package conformance

import (
	"errors"

	"github.com/petstore/inventory-kit/spec/exchange"

	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
)

// A guard remembers the records a run wrote to, with their original
// values, until they are restored. The original of a record is as the
// run's first list showed it, read before the run's first write: a list
// read later, from a replica that lags the writes, may show a value the
// run wrote itself.
type guard struct {
	first   *Index           // the records as first listed, before any write; set before the checks run
	mu      sync.Mutex       // guards pending
	pending map[int64]Record // records written to and not yet restored, as they were
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
	if _, dup := g.pending[id]; !dup {
		g.pending[id] = orig
	}
}

// Protect records the record's original values before a check writes to
// it and restores them when the check ends, pass or fail. It returns the
// original record.
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
			t.because(CauseRestoreFailed, "the check changed data it could not restore")
			ginkgo.Fail("the check changed data it could not restore: " + err.Error())
		}
	})
	return orig
}

// restore puts the record back and checks that the list shows it. A
// failure is written to Config.Stderr at once, since the run may not get
// as far as a report.
func (t *Target) restore(id int64) error {
	t.guard.mu.Lock()
	orig, ok := t.guard.pending[id]
	t.guard.mu.Unlock()
	if !ok {
		return nil
	}
	if why, gone := t.stop.reason(); gone {
		err := fmt.Errorf("%s %d: could not restore %s: %s", t.inv.Key, id, t.restorable(orig), why)
		fmt.Fprintf(t.cfg.Stderr, "\n!!! RESTORE FAILED: %v\n", err)
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*t.cfg.Timeout+t.cfg.RestoreDeadline)
	defer cancel()
	if err := t.putBack(ctx, orig); err != nil {
		err = fmt.Errorf("%s %d: could not restore %s: %v", t.inv.Key, id, t.restorable(orig), err)
		fmt.Fprintf(t.cfg.Stderr, "\n!!! RESTORE FAILED: %v\n", err)
		return err
	}
	t.guard.mu.Lock()
	delete(t.guard.pending, id)
	t.guard.mu.Unlock()
	return nil
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
	var err error
	for attempt := 0; ; attempt++ {
		if err = t.writeBack(ctx, orig); err == nil {
			break
		}
		if !errors.Is(err, errRetry) || attempt == restoreAttempts-1 || time.Now().After(deadline) {
			return err
		}
		pause(ctx, restorePoll)
	}
	for {
		x := t.send(ctx, Request{Method: t.inv.List.Method, Path: t.inv.List.Path, restore: true})
		ix, derr := DecodeList(ctx, x.RespBody, t.inv.Key)
		switch {
		case x.Failure != "" || derr != nil:
			err = fmt.Errorf("the list after the restore could not be read")
		default:
			if err = t.restored(orig, ix.ByID[orig.ID]); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%w (still so %s after the restore was acknowledged)", err, t.cfg.RestoreDeadline)
		}
		pause(ctx, restorePoll)
	}
}

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

// writeBack sends the update that puts orig's values back.
func (t *Target) writeBack(ctx context.Context, orig Record) error {
	r := t.Update(orig.ID, t.Harmless(orig))
	r.restore = true
	x := t.send(ctx, r)
	switch {
	case x.Failure == exchange.FailureNoAnswer:
		return fmt.Errorf("%s (%w)", x.Err, errRetry)
	case x.Status >= 500:
		return fmt.Errorf("%s answered %d (%w)", t.inv.Update.Method, x.Status, errRetry)
	case x.Status != http.StatusOK:
		return fmt.Errorf("%s answered %d", t.inv.Update.Method, x.Status)
	}
	return nil
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
// yet, as after an interrupt. It returns one message per record it could
// not restore.
func (t *Target) RestoreAll() []string {
	t.guard.mu.Lock()
	ids := make([]int64, 0, len(t.guard.pending))
	for id := range t.guard.pending {
		ids = append(ids, id)
	}
	t.guard.mu.Unlock()
	slices.Sort(ids)
	var failed []string
	for _, id := range ids {
		if err := t.restore(id); err != nil {
			failed = append(failed, err.Error())
		}
	}
	return failed
}
