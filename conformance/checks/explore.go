package checks

import (
	"strconv"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/conformance"
)

// registerExplore adds the exploration (Target.Explore), labelled
// mutating where it writes: with --allow-mutations.
func registerExplore(t *conformance.Target) {
	if t.Config().Explore.Off {
		return
	}
	labels := conformance.Labels(conformance.AreaExplore)
	if t.Config().AllowMutations {
		labels = conformance.Labels(conformance.AreaExplore, conformance.Mutating)
	}
	ginkgo.Describe(string(conformance.AreaExplore), labels, func() {
		ginkgo.It("random sequences of calls keep the model: read after write, no other record changed, rejected writes change nothing, documented statuses and bodies only", func(ctx ginkgo.SpecContext) {
			if why := t.ListBroken(); why != "" {
				conformance.NotJudged(why)
			}
			t.RequireStable()
			res := t.Explore(ctx)
			ginkgo.AddReportEntry(conformance.EntryExploration, res.Summary(), ginkgo.ReportEntryVisibilityFailureOrVerbose)
			if thin := res.Thin(); thin != "" {
				ginkgo.AddReportEntry(conformance.EntryExploreThin, thin, ginkgo.ReportEntryVisibilityFailureOrVerbose)
			}
			if f := res.Failure; f != nil {
				t.Because(f.Cause, "exploration: "+f.Rule)
				seed := strconv.FormatUint(res.Seed, 10)
				ginkgo.Fail("exploration (seed " + seed + "; replay with --seed " + seed + "): " + f.String())
			}
		})
	})
}
