package mockserver

import (
	"fmt"

	"github.com/petstore/inventory-kit/spec"
)

// staleExample says why the mock will not send an example: it no longer
// matches the contract's schema for its answer.
func staleExample(op *spec.Operation, r *spec.Response, ex *spec.Example) string {
	return fmt.Sprintf("Prefer: example=%s: the %s response of %s has this example, but it does not match the contract (%s), so the mock will not send it; update or remove the example in the spec",
		ex.Name, r.Code, op.Name(), spec.Join(ex.Problems))
}

// exampleWarnings names, for the start-up log, each example of the
// contract that does not match its schema, and the problem.
func exampleWarnings(c *spec.Contract) []string {
	var out []string
	for _, op := range c.Operations {
		for _, r := range op.Responses {
			for _, ex := range r.Examples {
				if len(ex.Problems) > 0 {
					out = append(out, fmt.Sprintf("%s: response %s: example %s does not match the contract (%s); Prefer: example=%s answers 400 until it is updated or removed",
						op.Name(), r.Code, ex.Name, spec.Join(ex.Problems), ex.Name))
				}
			}
		}
	}
	return out
}
