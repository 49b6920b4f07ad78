// Package traffic checks observed HTTP traffic against the contract: an
// exchange seen by the validating proxy as it passes, or read from a HAR
// file. A Checker finds the operation an exchange addresses and applies
// the operation's compiled checks from package spec (parameters, body,
// documented statuses, Content-Type, schemas), plus the rules the seed
// states for every operation: a bearer credential is required and
// enforced, and every error carries an Error body whose status is the HTTP
// status. Each broken rule is a Violation with a stable rule name, such
// as response-body-schema.
//
// Findings groups violations: identical ones (same operation, rule, place
// and status) are one Finding with a count, first and last seen, and one
// example exchange with its secrets redacted. Findings writes JSON lines
// as violations happen and JUnit XML on demand.
//
// A typical use, as the proxy makes it:
//
//	checker, _ := traffic.NewChecker(contract, nil)
//	findings := traffic.NewFindings(contract, traffic.FindingsOptions{})
//	x := &traffic.Exchange{...} // request and answer
//	findings.Record(x, checker.Check(x))
//	for _, f := range findings.List() { ... }
//
// The package does not import Ginkgo: the proxy and the HAR command use it
// without the conformance suite.
package traffic
