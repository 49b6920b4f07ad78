package conformance

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/petstore/inventory-kit/spec/report"
)

// A registry is the exploration's model of every record, shared by its
// workers (README: Workers). Each worker writes only records of its own
// and keeps their entries. A worker that has sent a write its next list
// has not checked yet is busy: until then the other workers do not judge
// its records, since what they see of them may be its doing, not the
// target's.
type registry struct {
	mu      sync.Mutex // guards what follows
	version uint64     // counts changes of busy
	recs    map[int64]*entry
	busy    map[int]bool   // workers with writes not checked yet
	stamp   map[int]uint64 // version when a worker's busy last changed
}

// An entry is one record as the model holds it.
type entry struct {
	rec    Record   // zero: no record, an identifier reserved for a write to an unknown one
	owner  int      // the worker that writes it; -1: none does
	either []Record // after writes sent at once, their answers: the owner's next list must show one, which becomes rec
}

func newRegistry(ix *Index) *registry {
	r := &registry{recs: make(map[int64]*entry, len(ix.Order)), busy: map[int]bool{}, stamp: map[int]uint64{}}
	for _, id := range ix.Order {
		r.recs[id] = &entry{rec: ix.ByID[id], owner: -1}
	}
	return r
}

// now returns the registry's version: a list sent after it may be judged
// against the entries of any worker whose busy did not change since.
func (r *registry) now() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.version
}

// setBusy marks worker w busy (about to write) or not (its writes
// checked).
func (r *registry) setBusy(w int, busy bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.busy[w] == busy {
		return
	}
	r.busy[w] = busy
	r.version++
	r.stamp[w] = r.version
}

// get returns the model of record id, and whether the model has it.
func (r *registry) get(id int64) (Record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.recs[id]
	if !ok || e.rec.IsZero() {
		return Record{}, false
	}
	return e.rec, true
}

// settled reports whether record id's owner, if any, is not busy: its
// model can be compared with what the target answers now.
func (r *registry) settled(id int64, by int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.recs[id]
	return ok && (e.owner < 0 || e.owner == by || !r.busy[e.owner])
}

func (r *registry) owner(id int64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.recs[id]; ok {
		return e.owner
	}
	return -1
}

// set makes rec the model of record id, which the caller owns.
func (r *registry) set(id int64, rec Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.recs[id]; ok {
		e.rec, e.either = rec, nil
	}
}

// setEither notes that record id, which the caller owns, is now one of
// recs: the answers to writes sent at once.
func (r *registry) setEither(id int64, recs []Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.recs[id]; ok && len(recs) > 0 {
		e.rec, e.either = recs[len(recs)-1], recs
	}
}

// has reports whether the model holds id, listed or reserved.
func (r *registry) has(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.recs[id]
	return ok
}

// reserve takes id, which no record has, for worker w's write to an
// unknown identifier; false if the model holds it already.
func (r *registry) reserve(id int64, w int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.recs[id]; ok {
		return false
	}
	r.recs[id] = &entry{owner: w}
	return true
}

// release gives back reserved identifiers, checked still unknown.
func (r *registry) release(ids []int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if e, ok := r.recs[id]; ok && e.rec.IsZero() {
			delete(r.recs, id)
		}
	}
}

// A mismatch is one way a list differs from the model.
type mismatch struct {
	id         int64
	want, got  Record   // zero where there is none
	kind       string   // "changed", "vanished", "appeared"
	either     []Record // the values written at once, one of which was wanted
	own        bool     // the record is the judging worker's
	othersBusy int      // other workers that were in a writing step meanwhile
}

// judge compares ix, a list worker w sent when the registry's version was
// since, with the model (but records whose owner was busy since), and
// returns the mismatches in identifier order. Where writes sent at once
// left w's record one of several, the list decides which.
func (r *registry) judge(w int, ix *Index, since uint64) []mismatch {
	r.mu.Lock()
	defer r.mu.Unlock()
	busy := 0
	for o, b := range r.busy {
		if o != w && (b || r.stamp[o] > since) {
			busy++
		}
	}
	var out []mismatch
	for id, e := range r.recs {
		own := e.owner == w
		if !own && e.owner >= 0 && (r.busy[e.owner] || r.stamp[e.owner] > since) {
			continue
		}
		got, listed := ix.ByID[id]
		if e.either != nil && own {
			if listed && slices.ContainsFunc(e.either, got.Equal) {
				e.rec, e.either = got, nil
				continue
			}
			if listed {
				out = append(out, mismatch{id: id, want: e.rec, got: got, kind: "changed", either: e.either, own: own, othersBusy: busy})
				continue
			}
		}
		switch {
		case e.rec.IsZero() && listed:
			out = append(out, mismatch{id: id, got: got, kind: "appeared", own: own, othersBusy: busy})
		case e.rec.IsZero():
		case !listed:
			out = append(out, mismatch{id: id, want: e.rec, kind: "vanished", own: own, othersBusy: busy})
		case !got.Equal(e.rec):
			out = append(out, mismatch{id: id, want: e.rec, got: got, kind: "changed", own: own, othersBusy: busy})
		}
	}
	for _, id := range ix.Order {
		if _, ok := r.recs[id]; !ok {
			out = append(out, mismatch{id: id, got: ix.ByID[id], kind: "appeared", othersBusy: busy})
		}
	}
	slices.SortFunc(out, func(a, b mismatch) int { return cmp.Compare(a.id, b.id) })
	return out
}

// describe renders a mismatch for a failure.
func (m mismatch) describe(key string) string {
	var s string
	switch kind := m.kind; {
	case kind == "appeared":
		s = fmt.Sprintf("%s %d appeared: %s", key, m.id, m.got)
	case kind == "vanished":
		s = fmt.Sprintf("%s %d is no longer listed (it was %s)", key, m.id, m.want)
	case len(m.either) > 0:
		s = fmt.Sprintf("%s %d is %s; want one of the %d records the writes sent at once answered: %s", key, m.id, m.got, len(m.either), examples(m.either, ", ")) // 2 to 4
	default:
		s = fmt.Sprintf("%s %d: %s", key, m.id, strings.Join(m.want.Diff(m.got), ", "))
	}
	if m.othersBusy > 0 && !m.own {
		s += fmt.Sprintf(" (seen while %s of the exploration wrote)", report.Plural(m.othersBusy, "other worker"))
	}
	return s
}

// gateBytes bounds the bytes of the lists the workers read and judge at
// once: a list of many records is read a few at a time, a short one by
// every worker at once, and one list however long.
const gateBytes = 32 << 20
