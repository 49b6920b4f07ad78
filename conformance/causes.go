package conformance

import (
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// A Cause names what a failure is about, so that the summary groups the
// checks one defect breaks under one line, whatever status or value each
// of them saw. It is the name of the rule the failure breaks: one of the
// contract's Judge's (spec.Rules), or one of the suite's own below, for
// what only the suite's sequences of calls show. The checks record it
// (FailBecause, FailWith and the oracle's expectations each
// give one); the summary never reads it out of a message.
type Cause string

// The Judge's rules the checks name themselves.
const (
	CauseNoAnswer        Cause = spec.RuleNoAnswer
	CauseUndocumented    Cause = spec.RuleStatus
	CauseContentType     Cause = spec.RuleResponseType
	CauseResponseSchema  Cause = spec.RuleResponseBody
	CauseAuthNotEnforced Cause = spec.RuleAuthNotEnforced
	CauseInvalidAccepted Cause = spec.RuleInvalidAccepted
	CauseWriteAnswer     Cause = spec.RuleEchoMismatch
)

// The suite's own rules.
const (
	CauseTooLarge          Cause = "response-too-large"
	CauseRateLimited       Cause = "rate-limited"
	CauseServerError       Cause = "server-error"
	CauseWrongErrorStatus  Cause = "wrong-error-status"
	CauseUnknownNot404     Cause = "unknown-record-not-404"
	CauseBadIDAccepted     Cause = "malformed-identifier-not-rejected"
	CauseValidRefused      Cause = "valid-request-refused"
	CauseUnexpectedStatus  Cause = "unexpected-status"
	CauseRecordMissing     Cause = "record-missing"
	CauseDuplicateIDs      Cause = "duplicate-identifiers"
	CauseRecordMismatch    Cause = "record-mismatch"
	CauseWriteNotStored    Cause = "write-not-stored"
	CauseStaleRead         Cause = "stale-read"
	CauseNotIdempotent     Cause = "not-idempotent"
	CauseOtherChanged      Cause = "other-record-changed"
	CauseUnprompted        Cause = "record-changed-without-write"
	CauseUnstable          Cause = "records-unstable"
	CauseRejectedChanged   Cause = "rejected-write-changed-data"
	CauseLostUpdate        Cause = "lost-update"
	CauseRecordAppeared    Cause = "record-appeared"
	CauseRecordVanished    Cause = "record-vanished"
	CauseRestoreFailed     Cause = "restore-failed"
	CauseStrictWarning     Cause = "rfc-warning-strict"
	CauseExplorationOthers Cause = "exploration"
)

// suiteRules says in a line what each of the suite's own rules means.
var suiteRules = map[Cause]string{
	CauseTooLarge:          "a response body past the cap",
	CauseRateLimited:       "still rate limited (429) after the allowed waits",
	CauseServerError:       "a 5xx answer",
	CauseWrongErrorStatus:  "a request the contract forbids answered with another error status",
	CauseUnknownNot404:     "an unknown record not answered 404",
	CauseBadIDAccepted:     "an identifier that is not a valid one not answered 400 or 404",
	CauseValidRefused:      "a valid request refused",
	CauseUnexpectedStatus:  "a status the check does not allow",
	CauseRecordMissing:     "a record that should be listed is not",
	CauseDuplicateIDs:      "records listed more than once",
	CauseRecordMismatch:    "a record answered differently from the list",
	CauseWriteNotStored:    "an update not stored as answered",
	CauseStaleRead:         "stale read (reads lag writes): a read after an acknowledged update showed the record as before it, a later read showed the update",
	CauseNotIdempotent:     "the same update twice gives different records",
	CauseOtherChanged:      "a request changed a record it did not address",
	CauseUnprompted:        "a record changed though no request wrote to it",
	CauseUnstable:          "the target does not hold its records still: lists with no write between them differ",
	CauseRejectedChanged:   "a rejected request changed data",
	CauseLostUpdate:        "concurrent updates lost or mixed",
	CauseRecordAppeared:    "a record appeared without a write that creates it",
	CauseRecordVanished:    "a record vanished",
	CauseRestoreFailed:     "data written could not be put back",
	CauseStrictWarning:     "what an RFC requires (a failure under --strict)",
	CauseExplorationOthers: "exploration found a sequence that breaks the contract",
}

// Text says what the cause means.
func (c Cause) Text() string {
	if s, ok := suiteRules[c]; ok {
		return s
	}
	if r, ok := spec.RuleNamed(string(c)); ok {
		return r.About
	}
	return string(c)
}

// A causeEntry is the report entry a failed check adds: the cause it
// breaks and the detail it saw. The summary reads the value back
// (causeOf), never its text.
type causeEntry struct {
	Cause  Cause  `json:"cause"`
	Detail string `json:"detail"`
}

// String renders the entry as the JSON report shows it.
func (e causeEntry) String() string { return string(e.Cause) + " | " + e.Detail }

// Because records why the check fails: the cause and the detail seen.
// FailBecause, FailWith and Expect record it themselves.
func (t *Target) Because(c Cause, detail string) {
	ginkgo.AddReportEntry(entryCause, causeEntry{Cause: c, Detail: detail}, ginkgo.ReportEntryVisibilityNever)
}

// FailBecause fails the check with the exchange and the problems found,
// recording the cause.
func (t *Target) FailBecause(c Cause, x *Exchange, want string, problems []string) {
	ginkgo.GinkgoHelper()
	if why, _ := t.stop.reason(); why != "" && (x == nil || x.Failure == exchange.FailureNoAnswer) {
		// Not the target's answer: the run stopped under the check.
		ginkgo.AbortSuite("the run stopped: " + why)
	}
	if len(problems) > maxExamples {
		problems = append(problems[:maxExamples:maxExamples], fmt.Sprintf("and %d more problems", len(problems)-maxExamples))
	}
	detail := want + " — got " + gotLine(x)
	if len(problems) > 0 {
		p := problems[0]
		if !strings.HasPrefix(p, "status ") {
			p = digits.ReplaceAllString(p, "N")
		}
		detail = want + " — " + p
	}
	t.Because(c, detail)
	t.recordExample(x, want, problems)
	ginkgo.Fail(x.Want("%s", want) + "problems:\n  - " + strings.Join(problems, "\n  - "))
}
