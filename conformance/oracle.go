package conformance

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// The oracle: expectation functions that take an exchange and return
// typed problems. The checks and the exploration both call them, so a
// verdict is decided in one place.

// WrittenProblems judges the answer x to a valid update of record id that
// set sets: the record, with its identifier and every value sent. It
// returns the record answered.
func (t *Target) WrittenProblems(x *Exchange, id int64, sets Values) (Record, []Problem) {
	key, rid := t.inv.Key, strconv.FormatInt(id, 10)
	r, err := decodeRecord(x.RespBody, key)
	if err != nil {
		return r, []Problem{{Cause: CauseWriteAnswer, Record: rid, Text: "the answer is " + err.Error() + ", not the record updated"}}
	}
	var ps []Problem
	add := func(field, want string) {
		got, ok := r.Field(field)
		p := Problem{Cause: CauseWriteAnswer, Field: field, Record: rid, Text: field + ": missing, want " + want}
		if ok {
			p.Text = fmt.Sprintf("%s: %s, want %s", field, exchange.Printable(got), want)
		}
		ps = append(ps, p)
	}
	if got, ok := r.Int(key); !ok || got != id {
		add(key, rid)
	}
	for _, f := range slices.Sorted(mapKeys(sets)) {
		if got, _ := r.Field(f); canonical(got) != canonical(sets[f]) {
			add(f, "the value sent, "+string(sets[f]))
		}
	}
	return r, ps
}
