// Package conformance is the framework of the Pet Store Inventory
// conformance suite: everything the checks in conformance/checks run on
// (sending and recording exchanges, the oracle's verdicts, restoring what
// a check wrote, the stateful exploration, the reports), and no checks of
// its own. README.md describes it.
//
// A caller:
//
//	target, err := conformance.Prepare(ctx, conformance.Config{BaseURL: url, APIKey: key})
//	if err != nil { ... } // the run could not be made
//	outcome, err := conformance.Run(target, checks.Register, conformance.RunOptions{JUnitReport: "junit.xml"})
package conformance
