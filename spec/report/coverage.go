package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// CoverageRule says how coverage is counted, in every report that shows it.
const CoverageRule = "A pair is an operation and one response its contract documents: an exact status (200), a range (4XX) or default. " +
	"An answer exercises the one pair its status resolves to, as the contract reads it: the exact status, else the range, else default. " +
	"So default counts as one pair, exercised by any status the operation documents no code or range for; " +
	"an answer with a status the operation does not document at all exercises nothing (it is a violation)."

// Coverage is which documented responses of each operation a run, or
// the traffic, exercised.
type Coverage struct {
	Operations []OperationCoverage
	Min        float64 // the figure the run must reach, in percent (--min-coverage); 0: none
}

// OperationCoverage is one operation's documented responses and the
// answers it got.
type OperationCoverage struct {
	Name         string // the operation's name: its operationId, or method and path
	Method, Path string
	Answers      int64 // answers counted for it, of any status
	Responses    []ResponseCoverage
	Undocumented []StatusCount // statuses answered that it does not document
}

// ResponseCoverage is one documented response: a pair.
type ResponseCoverage struct {
	Code     string        // as the document writes it: 200, 4XX or default
	Statuses []StatusCount // the statuses that exercised it; none: not exercised
	Why      string        // why it was not exercised, where that is known
}

// A StatusCount is how many answers had a status.
type StatusCount struct {
	Status int
	Count  int64
}

// A Pair is one documented response of one operation.
type Pair struct {
	Operation, Code, Why string
}

// Exercised reports whether an answer exercised the response.
func (r ResponseCoverage) Exercised() bool { return len(r.Statuses) > 0 }

// DefaultOnly lists the statuses answered that an operation documents
// only by a range or as default: where the contract says little, what
// the target chose.
func (c *Coverage) DefaultOnly() []string {
	var out []string
	for _, op := range c.Operations {
		for _, r := range op.Responses {
			if _, err := strconv.Atoi(r.Code); err == nil || !r.Exercised() {
				continue
			}
			out = append(out, fmt.Sprintf("%s answered %s, which the contract documents only as %s", op.Name, seenText(r.Statuses), r.Code))
		}
	}
	return out
}

// Figure returns the pairs exercised and the pairs documented.
func (c *Coverage) Figure() (exercised, documented int) {
	for _, op := range c.Operations {
		for _, r := range op.Responses {
			documented++
			if r.Exercised() {
				exercised++
			}
		}
	}
	return exercised, documented
}

// Percent returns the figure in percent; 100 where nothing is documented.
func (c *Coverage) Percent() float64 {
	e, d := c.Figure()
	if d == 0 {
		return 100
	}
	return 100 * float64(e) / float64(d)
}

// Met reports whether the figure reaches Min, comparing exercised × 100
// with Min × documented: 2 of 3 pairs meets 66.67 and misses 66.7.
func (c *Coverage) Met() bool {
	e, d := c.Figure()
	return c.Min <= 0 || d == 0 || float64(e)*100 >= c.Min*float64(d)-1e-9
}

// Missing returns the pairs not exercised, in contract order.
func (c *Coverage) Missing() []Pair {
	var out []Pair
	for _, op := range c.Operations {
		for _, r := range op.Responses {
			if !r.Exercised() {
				out = append(out, Pair{op.Name, r.Code, r.Why})
			}
		}
	}
	return out
}

// Headline renders the figure: "64% (9 of 14 documented responses)".
func (c *Coverage) Headline() string {
	e, d := c.Figure()
	return fmt.Sprintf("%s (%d of %d documented responses)", percent(c.Percent()), e, d)
}

// Gate says whether the figure misses the minimum, and names the pairs
// not exercised, with why where known; "" where it is met.
func (c *Coverage) Gate() string {
	if c.Met() {
		return ""
	}
	s := fmt.Sprintf("coverage %s is below --min-coverage %s; not exercised:", c.Headline(), percent(c.Min))
	for _, p := range c.Missing() {
		s += "\n  - " + p.Operation + " " + p.Code
		if p.Why != "" {
			s += ": " + p.Why
		}
	}
	return s
}

// percent renders a percentage rounded down to a tenth, without a
// needless decimal: 64%, 66.6% (2 of 3, which misses a minimum of 66.7).
func percent(p float64) string {
	s := strconv.FormatFloat(math.Floor(p*10+1e-9)/10, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + "%"
}

// exercisedText renders a response exercised: "200 ×12" for an exact
// code, "default: 501 ×4, 503 ×1" for a range or default.
func exercisedText(r ResponseCoverage) string {
	if len(r.Statuses) == 1 && strconv.Itoa(r.Statuses[0].Status) == r.Code {
		return seenText(r.Statuses)
	}
	return r.Code + ": " + seenText(r.Statuses)
}

// seenText renders the statuses that exercised a response: "200 ×12".
func seenText(ss []StatusCount) string {
	parts := make([]string, len(ss))
	for i, sc := range ss {
		parts[i] = fmt.Sprintf("%d ×%d", sc.Status, sc.Count)
	}
	return strings.Join(parts, ", ")
}

// ParsePercent reads a --min-coverage value: a number from 0 to 100,
// with or without a % sign, such as 80 or 62.5%.
func ParsePercent(s string) (float64, error) {
	p, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || p < 0 || p > 100 || p != p {
		return 0, fmt.Errorf("want a percentage from 0 to 100, such as 80")
	}
	return p, nil
}
