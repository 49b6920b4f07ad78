// Package conformance is the Pet Store Inventory conformance suite: Ginkgo
// specs that tell, in one run, whether an implementation honours the
// contract in spec/openapi.yaml. The same specs run under go test against
// the in-process mock and from cmd/inventory-conformance against a deployed
// backend.
//
// A caller prepares a Target (which checks that the target answers and
// accepts the key), hands it to Use, and runs the specs with Ginkgo's
// RunSpecs:
//
//	target, err := conformance.Prepare(ctx, conformance.Config{BaseURL: url, APIKey: key})
//	if err != nil { ... } // a *SetupError: the run could not be made
//	conformance.Use(target)
//	conformance.SummaryTo(os.Stdout)
//	ginkgo.RunSpecs(t, conformance.SuiteName, suiteConfig, reporterConfig)
//
// Specs that write are labelled "mutating" and skip unless
// Config.AllowMutations is set; each of them records the original quantity
// of the pet it touches and restores it afterwards. Where the contract is
// silent the suite accepts every allowed behaviour and records the target's
// choice as a report entry; Summarize prints those entries after a run.
package conformance
