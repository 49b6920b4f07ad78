package spec

import "sync/atomic"

// Answers counts the answers each operation of a contract got, by status:
// what a coverage report reads to tell the documented responses a run or
// the traffic exercised from the ones it did not. It is safe for
// concurrent use and takes no lock. Its memory is fixed when it is made:
// one counter per operation and status from 100 to 599 (4 KiB an
// operation); a status outside that range, or an exchange of no
// operation, is not counted.
type Answers struct {
	byOp map[string]*[statusSpan]atomic.Int64 // operation name → answers by status-100
}

const (
	lowestStatus = 100
	statusSpan   = 500 // 100..599
)

// NewAnswers returns a zero count for every operation of c.
func NewAnswers(c *Contract) *Answers {
	a := &Answers{byOp: make(map[string]*[statusSpan]atomic.Int64, len(c.Operations))}
	for _, op := range c.Operations {
		a.byOp[op.Name()] = new([statusSpan]atomic.Int64)
	}
	return a
}

// Count counts one answer with status to the named operation.
func (a *Answers) Count(operation string, status int) {
	if a == nil || status < lowestStatus || status >= lowestStatus+statusSpan {
		return
	}
	if n := a.byOp[operation]; n != nil {
		n[status-lowestStatus].Add(1)
	}
}

// ByStatus returns the answers counted, by operation name and status;
// an operation without any answer has an empty map.
func (a *Answers) ByStatus() map[string]map[int]int64 {
	out := map[string]map[int]int64{}
	if a == nil {
		return out
	}
	for name, counts := range a.byOp {
		m := map[int]int64{}
		for i := range counts {
			if n := counts[i].Load(); n > 0 {
				m[i+lowestStatus] = n
			}
		}
		out[name] = m
	}
	return out
}
