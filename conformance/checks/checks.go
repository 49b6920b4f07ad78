// Package checks holds the conformance checks of the Pet Store Inventory
// contract: Ginkgo specs built from the loaded contract's shape. The
// framework they run on (sending, recording, the rules every response
// keeps, restoring, reporting, exploring) is package conformance; this
// package only says what to check.
//
// Register adds the checks for a prepared target; conformance.Run runs
// them:
//
//	target, err := conformance.Prepare(ctx, conformance.Config{BaseURL: url, APIKey: key})
//	if err != nil { ... } // a *conformance.SetupError: the run could not be made
//	outcome, err := conformance.Run(target, checks.Register, conformance.RunOptions{})
//
// Where the contract is silent the checks accept every allowed behaviour
// and record the target's choice as an observation; what only HTTP's RFCs
// require is a warning naming the RFC (a failure with Config.Strict).
package checks

import (
	"github.com/petstore/inventory-kit/conformance"
)

// Register adds every check for t to Ginkgo's tree. Call it once, before
// Ginkgo runs (conformance.Run does).
func Register(t *conformance.Target) {
	registerAuth(t)
	registerList(t)
	registerUpdate(t)
	registerBadInput(t)
	registerErrors(t)
	registerOperations(t)
	registerConcurrency(t)
	registerSilent(t)
	registerExplore(t)
}
