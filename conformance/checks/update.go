package checks

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/conformance"
)

func registerUpdate(t *conformance.Target) {
	s := t.Inventory()
	name := s.Update.Name()
	ginkgo.Describe(string(conformance.AreaUpdate), conformance.Labels(conformance.AreaUpdate, conformance.Mutating), func() {
		var id int64
		ginkgo.BeforeEach(func() { id = t.RequireMutations() })

		ginkgo.It(name+": the answer has the same identifier and the values sent", func(ctx ginkgo.SpecContext) {
			orig := t.Protect(ctx, id)
			b := t.Write(orig, 0)
			x := t.Do(ctx, t.Update(id, b.Raw))
			t.ExpectWritten(x, id, b)
		})

		ginkgo.It(name+": a following list shows the values written", func(ctx ginkgo.SpecContext) {
			orig := t.Protect(ctx, id)
			b := t.Write(orig, 1)
			x := t.Do(ctx, t.Update(id, b.Raw))
			written := t.ExpectWritten(x, id, b)
			ix, lx := t.List(ctx)
			if got := ix.ByID[id]; !got.Equal(written) {
				c, lag := notStored(t.StaleRead(ctx, x.Time.Add(x.Elapsed), lx, id, nil, written))
				t.FailBecause(c, lx, fmt.Sprintf("after the update, the list shows %s %d as the update answered it", s.Key, id),
					append([]string{"differs: " + strings.Join(written.Diff(got), ", ")}, nonEmpty(lag)...))
			}
		})

		ginkgo.It(name+": the same update twice gives the same result", func(ctx ginkgo.SpecContext) {
			orig := t.Protect(ctx, id)
			b := t.Write(orig, 2)
			first := t.ExpectWritten(t.Do(ctx, t.Update(id, b.Raw)), id, b)
			x := t.Do(ctx, t.Update(id, b.Raw))
			second := t.ExpectWritten(x, id, b)
			ix, lx := t.List(ctx)
			skip := t.Timestamps()
			if first.EqualExcept(second, skip) && !second.EqualExcept(ix.ByID[id], skip) {
				// The answers agree and the list does not: a list that
				// lags, or an update not stored.
				c, lag := notStored(t.StaleRead(ctx, x.Time.Add(x.Elapsed), lx, id, skip, second))
				t.FailBecause(c, lx, fmt.Sprintf("after the same update twice, the list shows %s %d as both answered it", s.Key, id),
					append([]string{"differs: " + strings.Join(second.Diff(ix.ByID[id]), ", ")}, nonEmpty(lag)...))
			}
			if !first.EqualExcept(second, skip) {
				t.FailBecause(conformance.CauseNotIdempotent, x, "an update is idempotent: the second identical request gives the same record",
					[]string{fmt.Sprintf("first %s, second %s, listed %s", first, second, ix.ByID[id])})
			}
		})

		ginkgo.It(name+": no other record changes", func(ctx ginkgo.SpecContext) {
			before, _ := t.List(ctx)
			orig := t.Protect(ctx, id)
			b := t.Write(orig, 3)
			x := t.Do(ctx, t.Update(id, b.Raw))
			t.ExpectWritten(x, id, b)
			after, _ := t.List(ctx)
			var ps []string
			for _, other := range before.Order {
				if ctx.Err() != nil {
					return
				}
				if other == id {
					continue
				}
				if a, ok := after.ByID[other]; !ok || !a.Equal(before.ByID[other]) {
					ps = append(ps, fmt.Sprintf("%s %d was %s, now %s", s.Key, other, before.ByID[other], a))
				}
			}
			if len(ps) > 0 {
				t.FailBecause(conformance.CauseOtherChanged, x, fmt.Sprintf("only %s %d changes", s.Key, id), ps)
			}
		})

		ginkgo.It(name+": an unknown but valid identifier gives 404 with an Error body", func(ctx ginkgo.SpecContext) {
			unknown := t.UnknownID(ctx)
			x := t.Do(ctx, t.Update(unknown, t.Harmless(t.Current(ctx))))
			t.ExpectStatus(x, "404 with an Error body for a record that does not exist", http.StatusNotFound)
		})

		for _, proto := range t.AtBounds(t.Prototype()) {
			ginkgo.It(name+": "+proto.Name+" is accepted and stored", func(ctx ginkgo.SpecContext) {
				orig := t.Protect(ctx, id)
				body, ok := conformance.Named(t.AtBounds(orig), proto.Name)
				if !ok {
					ginkgo.Skip("not applicable: the record lacks the field, and an update cannot take a field away again")
				}
				x := t.Do(ctx, t.Update(id, body.Raw))
				written := t.ExpectWritten(x, id, body)
				ix, lx := t.List(ctx)
				if !ix.ByID[id].Equal(written) {
					c, lag := notStored(t.StaleRead(ctx, x.Time.Add(x.Elapsed), lx, id, nil, written))
					t.FailBecause(c, lx, "the list shows the value written", append([]string{strings.Join(written.Diff(ix.ByID[id]), ", ")}, nonEmpty(lag)...))
				}
			})
		}
	})
}

// notStored names the cause of a list that does not show an accepted
// update: a stale read where a later list showed it (lag, what was seen),
// else a write not stored.
func notStored(lag string) (conformance.Cause, string) {
	if lag != "" {
		return conformance.CauseStaleRead, lag
	}
	return conformance.CauseWriteNotStored, ""
}

// nonEmpty is s as a list of problems: none where s is "".
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
