// Package conformance is the framework of the Pet Store Inventory
// conformance suite: everything the checks in conformance/checks run on,
// and no checks of its own.
//
//   - ReadShape reads from the loaded contract what the checks need: the
//     list and update operations, the record's identifier and fields, the
//     update body, their types, enums and bounds. Nothing is typed twice.
//   - Prepare builds a Target: the HTTP client, the caps on response bodies
//     and on 429 waits, and one plain list call that decides whether a run
//     can be made (a *SetupError when not).
//   - Target.Send records an Exchange; Target.ResponseProblems applies the
//     rules every response keeps; Do, ExpectStatus, FailWith, Protect,
//     Observe and Warn are what checks call.
//   - Target.Explore runs a property-based state machine (pgregory.net/rapid)
//     that draws sequences of calls from the schemas and checks a model of
//     the target after every step.
//   - Run registers the checks and runs them with Ginkgo, then writes the
//     summary (failures grouped by cause, the coverage of the documented
//     responses) and the reports: Ginkgo's JSON, and from one
//     report.Run (its cases, its causes each with the exchanges a failed
//     check recorded, its coverage) JUnit, Markdown, HTML and GitHub
//     annotations.
//   - A Redactor is the one place the API key is hidden: everything written
//     passes through it.
//
// A caller:
//
//	target, err := conformance.Prepare(ctx, conformance.Config{BaseURL: url, APIKey: key})
//	if err != nil { ... } // the run could not be made
//	outcome, err := conformance.Run(target, checks.Register, conformance.RunOptions{junitReport: "junit.xml"})
//
// Where the contract is silent the checks accept every behaviour it allows
// and record the target's choice; what only HTTP's RFCs require is a
// warning naming the RFC, a failure with Config.Strict.
package conformance
