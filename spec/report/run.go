// Package report renders what a run found for the people and the
// machines that read it. A Run is the one shape every report is written
// from, whatever made it: the conformance suite's checks, or the checks of
// recorded traffic (the validating proxy's findings, the HAR check's).
//
// The machines read JUnit (Run.JUnit) and GitHub's workflow commands
// (Run.Annotations); people read the console's summary (Run.Text), a
// Markdown summary (Run.Markdown) and one self-contained HTML page
// (Run.HTML). Every renderer hides every secret its Redactor knows before
// it escapes anything for its format, so neither a key nor a hostile
// target's text can break a document's structure.
package report

import (
	"fmt"
	"slices"
	"time"
)

// A Run is what a run found.
type Run struct {
	Name       string // the suite's name, such as "Pet Store Inventory conformance"
	Start      time.Time
	Duration   time.Duration
	Properties []Property // what the run was and found, for JUnit: target, contract, seed, counts, causes
	Cases      []Case
	Summary    string // the end-of-run summary, as the console showed it (Text)

	// What people read besides the cases.
	Facts        []Property // what the run was: target, contract, mode, seed
	Counts       []Count    // the headline: checks passed, failed, skipped; exchanges, violations
	Causes       []Cause    // failures grouped by cause, most first
	Warnings     []Cause    // what fails no check: RFC warnings, bodies too large to check
	Observations []string   // where the contract is silent, what the target chose
	Notes        []Note     // anything else to know: exploration, skipped writes
	LeftChanged  []Changed  // the records the run wrote to and left changed; a run with any fails
	Coverage     *Coverage  // the documented responses exercised; nil: not measured
	CannotRun    string     // why the run could not be made; "": it was
}

// A Property is one fact about a run.
type Property struct{ Name, Value string }

// A Count is one number of the headline, such as 12 passed.
type Count struct {
	N     int64
	Label string
}

// A Cause is one reason checks failed, or traffic broke the contract, with
// every failure it explains.
type Cause struct {
	Name     string    // the rule or cause id, such as response-auth-not-enforced
	About    string    // what it means, in a line
	Severity string    // spec.SeverityError or spec.SeverityWarning
	Count    int64     // how often it happened: checks broken, or violations seen
	Unit     string    // what Count counts: "check", "violation"; singular
	Seen     []string  // what its failures saw, each variant once, in the order first seen
	Failures []Failure // the failed checks, or the groups of violations; the first is the example
}

// A Failure is one failed check, or one group of violations, and the
// exchange that shows it.
type Failure struct {
	Title    string   // the check's full name, or the group's operation and place
	Want     string   // what the contract wanted
	Request  string   // the request, as a curl line (the key as $INVENTORY_API_KEY)
	Got      string   // what came back: status, Content-Type, the start of the body
	Problems []string // what was wrong with it
	Detail   string   // everything the check said, every exchange of it included
	Count    int64    // how often: 1 for a check, the group's count for traffic
}

// A Note is one more thing to know about a run.
type Note struct {
	Severity string // "" for information; spec.SeverityWarning for what to know before trusting the verdict; spec.SeverityError for what fails the run
	Title    string
	Lines    []string
}

// A Case is one check of a run.
type Case struct {
	Suite    string // its group: an area of the suite, or the checked traffic
	Class    string // its class: conformance.<area>, or an operation
	Name     string
	Duration time.Duration
	State    State
	Message  string // why it failed, errored or was skipped, in a line
	Detail   string // the whole failure
	Kind     string // the failure's kind: its cause or rule, or how a check errored
	Output   string // what it noted besides: warnings, observations
}

// A State is how a check ended.
type State int

// The states.
const (
	Passed State = iota
	Failed
	Errored // panicked, interrupted or timed out: the check could not judge
	Skipped
)

// The verdicts of a run.
const (
	VerdictPassed    = "passed"
	VerdictFailed    = "failed"
	VerdictCoverage  = "coverage below the minimum"
	VerdictCannotRun = "could not run"
)

// Verdict says in a word or three how the run ended.
func (r Run) Verdict() string {
	switch {
	case r.CannotRun != "":
		return VerdictCannotRun
	case r.failed():
		return VerdictFailed
	case r.Coverage != nil && !r.Coverage.Met():
		return VerdictCoverage
	}
	return VerdictPassed
}

// failed reports whether anything of the run failed: a check, a cause
// of error severity, a note that needs a person, a record left changed.
func (r Run) failed() bool {
	return slices.ContainsFunc(r.Cases, func(c Case) bool { return c.State == Failed || c.State == Errored }) ||
		slices.ContainsFunc(r.Causes, func(c Cause) bool { return c.Severity != severityWarning }) ||
		slices.ContainsFunc(r.Notes, func(n Note) bool { return n.Severity == severityError }) ||
		len(r.LeftChanged) > 0
}

// The severities, as spec names them (spec.SeverityError, SeverityWarning).
const (
	severityError   = "error"
	severityWarning = "warning"
)

// Passed reports whether the verdict is passed.
func (r Run) Passed() bool { return r.Verdict() == VerdictPassed }

// Plural renders n with its unit, such as "1 check" or "3 checks".
func Plural[N ~int | ~int64](n N, unit string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, unit)
	}
	switch {
	case unit == "":
		return fmt.Sprint(n)
	case unit[len(unit)-1] == 's':
		return fmt.Sprintf("%d %ses", n, unit)
	case unit[len(unit)-1] == 'y':
		return fmt.Sprintf("%d %sies", n, unit[:len(unit)-1])
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// RequestFindings says how many violations are in requests, what clients
// sent, and how many in answers: a conformance suite run through the
// proxy sends requests that break the contract on purpose, and a backend
// that answers them as the contract says has broken nothing.
func RequestFindings(requests, answers int64) string {
	are := func(n int64) string {
		return Plural(n, "violation") + map[bool]string{true: " is", false: " are"}[n == 1]
	}
	return fmt.Sprintf("%s in requests: what the clients sent breaks the contract (a conformance suite sends such requests on purpose, to see them refused); %s in the answers, by which the backend is judged.",
		are(requests), are(answers))
}
