package checks

import (
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"

	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/conformance"
)

// bigBody is what the check of a 4 MiB body allows: the contract shows
// no size limit.
var bigBody = conformance.Expectation{Rule: "a body of 4 MiB answers 200, 400 or 413: the contract shows no size limit",
	Statuses: []int{http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge}, Cause: spec.RuleWrongErrorStatus, Accepted: spec.RuleInvalidAccepted}

// badRequest is what the check of the 400 Error body wants: a malformed
// identifier the target does not answer 404, or a malformed body.
var badRequest = conformance.Expectation{Rule: "400 with an Error body for a malformed identifier or body",
	Statuses: []int{http.StatusBadRequest}, Cause: spec.RuleWrongErrorStatus, Accepted: spec.RuleInvalidAccepted}

func registerBadInput(t *conformance.Target) {
	s, writes := t.Inventory(), t.Config().AllowMutations
	name := s.Update.Name()
	ginkgo.Describe(string(conformance.AreaBadInput), conformance.Labels(conformance.AreaBadInput), func() {
		ginkgo.Describe("bodies", conformance.Labels(conformance.AreaBadInput, conformance.Mutating), func() {
			var id int64
			ginkgo.BeforeEach(func() { id = t.RequireMutations() })
			// The names are the schema's; the bodies are built per run from
			// the record as it is then.
			for _, proto := range t.InvalidBodies(t.Prototype()) {
				ginkgo.It(name+": "+proto.Name+" gives 400 and leaves the record unchanged", func(ctx ginkgo.SpecContext) {
					orig := t.Protect(ctx, id)
					b, ok := conformance.Named(t.InvalidBodies(orig), proto.Name)
					if !ok {
						ginkgo.Skip("not applicable to this record")
					}
					x := t.Do(ctx, t.Update(id, b.Raw))
					t.Expect(x, conformance.ExpectInvalidBody)
					t.ExpectUnchanged(ctx, x, orig)
				})
			}
		})

		// Read-only they carry no body, so a target that reads identifiers
		// loosely (abc as 1) has no values to write anywhere; with
		// --allow-mutations, the pet's own values, and every record is
		// compared before and after.
		malformedLabels := conformance.Labels(conformance.AreaBadInput)
		if writes {
			malformedLabels = conformance.Labels(conformance.AreaBadInput, conformance.Mutating)
		}
		for _, raw := range t.MalformedIDs() {
			var ahead conformance.Request
			if !writes {
				ahead = t.Ahead(malformedLabels, conformance.Request{Method: s.Update.Method, Path: t.ItemPath(raw)})
			}
			ginkgo.It(fmt.Sprintf("%s: %s %s gives 400 or 404", name, s.Key, raw), malformedLabels, func(ctx ginkgo.SpecContext) {
				// 400 (an invalid value) and 404 (no pet) are both right;
				// Do checks the Error body.
				if !writes {
					x := t.Do(ctx, ahead)
					t.Expect(x, conformance.ExpectMalformedID)
					t.Observe("a malformed "+s.Key, "%d", x.Status)
					return
				}
				orig := t.Protect(ctx, t.RequireMutations())
				before, _ := t.List(ctx)
				x := t.Do(ctx, conformance.Request{Method: s.Update.Method, Path: t.ItemPath(raw), Body: t.Harmless(orig)})
				t.Expect(x, conformance.ExpectMalformedID)
				t.Observe("a malformed "+s.Key, "%d", x.Status)
				t.ExpectNothingChanged(ctx, x, before)
			})
		}

		ginkgo.It(name+": a body of 4 MiB (observation: the contract shows no size limit)", conformance.Labels(conformance.AreaBadInput, conformance.Observation), func(ctx ginkgo.SpecContext) {
			orig := t.Current(ctx)
			h := t.Harmless(orig)
			body := string(h[:len(h)-1]) + `,"conformancePad":"` + strings.Repeat("x", 4<<20) + `"}`
			x := t.Do(ctx, t.Update(t.RequirePet(), []byte(body)), http.StatusRequestEntityTooLarge)
			t.Expect(x, bigBody)
			t.ExpectUnchanged(ctx, x, orig)
			t.Observe("a body of 4 MiB", "%d after %s", x.Status, x.Elapsed.Round(time.Millisecond))
		})

		ginkgo.It(name+": a JSON body sent as text/plain (observation: 400, 415 or accepted)", conformance.Labels(conformance.AreaBadInput, conformance.Observation), func(ctx ginkgo.SpecContext) {
			orig := t.Current(ctx)
			r := t.Update(t.RequirePet(), t.Harmless(orig))
			r.ContentType = "text/plain"
			x := t.Do(ctx, r, http.StatusUnsupportedMediaType)
			t.Expect(x, conformance.ExpectSilentType)
			t.ExpectUnchanged(ctx, x, orig)
			t.Observe("a JSON body sent as text/plain", "%d", x.Status)
		})
	})
}

func registerErrors(t *conformance.Target) {
	s := t.Inventory()
	ginkgo.Describe(string(conformance.AreaErrors), conformance.Labels(conformance.AreaErrors), func() {
		noKey := t.Ahead(conformance.Labels(conformance.AreaErrors), conformance.Request{Method: s.List.Method, Path: s.List.Path, Auth: conformance.NoAuth})
		ginkgo.It("401: the Error body has non-empty code and message and status 401", func(ctx ginkgo.SpecContext) {
			x := t.Do(ctx, noKey)
			t.Expect(x, conformance.ExpectAuth)
			t.ExpectNone(x, t.ErrorProblems(x))
		})

		// No body: nothing a loose reading of the identifier could write.
		malformed := t.Ahead(conformance.Labels(conformance.AreaErrors), conformance.Request{Method: s.Update.Method, Path: t.ItemPath(t.MalformedIDs()[0])})
		ginkgo.It("400: the Error body has non-empty code and message and status 400", func(ctx ginkgo.SpecContext) {
			x := t.Do(ctx, malformed)
			if x.Status == http.StatusNotFound {
				// The target answers a malformed identifier 404, which
				// the contract allows: a body with an invalid value gets
				// the 400 instead, sent to a record, so only where
				// writes are allowed.
				if !t.Config().AllowMutations {
					conformance.NotJudged("the target answers a malformed identifier 404 (allowed), and without --allow-mutations the suite sends no invalid body to a record, the other request the contract answers 400")
				}
				orig := t.Protect(ctx, t.RequireMutations())
				b, _ := conformance.Named(t.InvalidBodies(orig), "malformed JSON")
				x = t.Do(ctx, t.Update(orig.ID, b.Raw))
			}
			t.Expect(x, badRequest)
			t.ExpectNone(x, t.ErrorProblems(x))
		})
	})

	ginkgo.Describe(string(conformance.AreaResponses), conformance.Labels(conformance.AreaResponses), func() {
		ginkgo.It("Content-Type is application/json on 200, 400 and 401 answers", func(ctx ginkgo.SpecContext) {
			for _, r := range []conformance.Request{
				{Method: s.List.Method, Path: s.List.Path},
				{Method: s.List.Method, Path: s.List.Path, Auth: conformance.NoAuth},
				{Method: s.Update.Method, Path: t.ItemPath(t.MalformedIDs()[0])},
			} {
				x := t.Send(ctx, r)
				if x.MediaType() != "application/json" {
					t.FailBecause(spec.RuleResponseType, x, "request and response bodies are application/json", []string{"Content-Type " + exchange.Quote(x.RespHeader.Get("Content-Type"))})
				}
			}
		})
	})
}
