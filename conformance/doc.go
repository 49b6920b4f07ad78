// Package conformance is the framework of the Pet Store Inventory
// conformance suite: everything the checks in conformance/checks run on,
// and no checks of its own.
//
//   - Prepare builds a Target, or says why it cannot (a *SetupError). Its
//     Client sends with the key, the extra headers and the caps, and
//     records each Exchange; its Records hold the first listing and what
//     the run wrote, to restore; its Bodies build what a check sends; its
//     own methods give a check its verdict (Do, Expect, FailWith, Observe,
//     Warn; the oracle's, oracle.go, need no Target).
//   - DecodeList reads a list as a stream into an Index of Record values,
//     an identifier and the record's bytes each.
//   - Target.Explore runs a property-based state machine (pgregory.net/rapid)
//     that draws sequences of calls from the schemas, several workers at
//     once on records of their own, and checks a shared model of the
//     target after every step.
//   - Run registers the checks and runs them with Ginkgo, then writes the
//     summary (failures grouped by cause, the coverage of the documented
//     responses) and the reports: Ginkgo's JSON, and from one
//     report.Run (its cases, its causes each with the exchanges a failed
//     check recorded, its coverage) JUnit, Markdown, HTML and GitHub
//     annotations. A run whose target stops answering, or that passes
//     --max-run-time, stops and says so.
//   - Secrets are the values no output shows (the key, the extra headers):
//     everything written passes through their redactor.
//
// A caller:
//
//	target, err := conformance.Prepare(ctx, conformance.Config{BaseURL: url, APIKey: key})
//	if err != nil { ... } // the run could not be made
//	outcome, err := conformance.Run(target, checks.Register, conformance.RunOptions{JUnitReport: "junit.xml"})
//
// Where the contract is silent the checks accept every behaviour it allows
// and record the target's choice; what only HTTP's RFCs require is a
// warning naming the RFC, a failure with Config.Strict.
package conformance
