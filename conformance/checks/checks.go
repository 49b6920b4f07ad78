// Package checks holds the conformance checks of the Pet Store Inventory
// contract: Ginkgo specs built from the loaded contract's shape, run by
// conformance.Run on the framework of package conformance (see its
// README).
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
