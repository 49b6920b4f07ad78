package conformance

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// Names of the report entries the suite adds. Tools reading the JSON report
// can select on them.
const (
	EntryObservation   = "observation"    // where the contract is silent, what the target chose
	EntryWarning       = "warning"        // something the contract does not require but clients want
	EntryRestoreFailed = "restore failed" // a pet whose quantity could not be put back
)

// observe records what the target chose where the contract is silent.
func observe(what, format string, args ...any) {
	AddReportEntry(EntryObservation, redactKey(what+": "+fmt.Sprintf(format, args...)), ReportEntryVisibilityFailureOrVerbose)
}

// warn records a shortfall the contract does not make a failure.
func warn(format string, args ...any) {
	AddReportEntry(EntryWarning, redactKey(fmt.Sprintf(format, args...)), ReportEntryVisibilityFailureOrVerbose)
}

// redactKey replaces the target's key in s, in case the target echoed it
// into a value the suite records.
func redactKey(s string) string {
	if current == nil || current.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, current.cfg.APIKey, KeyPlaceholder)
}

var (
	summaryMu  sync.Mutex // guards summaryOut
	summaryOut io.Writer  = os.Stdout
)

// SummaryTo sets where the summary goes at the end of a run (default os.Stdout).
func SummaryTo(w io.Writer) {
	summaryMu.Lock()
	defer summaryMu.Unlock()
	summaryOut = w
}

var _ = ReportAfterSuite("conformance summary", func(r Report) {
	summaryMu.Lock()
	defer summaryMu.Unlock()
	Summarize(summaryOut, r)
})

// A tally is what a run's report says: the counts, the full texts of the
// failed checks, and the report entries the suite added. Summarize prints
// it; the proof test reads it to see which checks a broken server failed.
type tally struct {
	passed, skipped, skippedMutating int
	failed                           []string
	warnings, observations, restores []string
}

// tallyReport counts the checks of r and gathers its entries. A restore
// failure may be recorded outside any check (RestoreAll after the suite),
// so entries are read from every node.
func tallyReport(r types.Report) tally {
	var t tally
	for _, s := range r.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt {
			switch {
			case s.State == types.SpecStatePassed:
				t.passed++
			case s.State == types.SpecStateSkipped || s.State == types.SpecStatePending:
				t.skipped++
				if slices.Contains(s.Labels(), "mutating") && strings.Contains(s.Failure.Message, "--allow-mutations") {
					t.skippedMutating++
				}
			case s.State.Is(types.SpecStateFailureStates):
				t.failed = append(t.failed, s.FullText())
			}
		}
		for _, e := range s.ReportEntries {
			switch e.Name {
			case EntryWarning:
				t.warnings = append(t.warnings, e.StringRepresentation())
			case EntryObservation:
				t.observations = append(t.observations, e.StringRepresentation())
			case EntryRestoreFailed:
				t.restores = append(t.restores, e.StringRepresentation())
			}
		}
	}
	return t
}

// Summarize writes a short summary of a run: counts, skipped mutating
// checks, warnings, observations and any pet that could not be restored.
func Summarize(w io.Writer, r types.Report) {
	t := tallyReport(r)
	fmt.Fprintf(w, "\n== Conformance summary: %d passed, %d failed, %d skipped ==\n", t.passed, len(t.failed), t.skipped)
	if t.skippedMutating > 0 {
		fmt.Fprintf(w, "%d mutating checks were skipped: no request changed data. Pass --allow-mutations to run them.\n", t.skippedMutating)
	}
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(w, "%s\n", title)
		for _, l := range dedupe(lines) {
			fmt.Fprintf(w, "  - %s\n", l)
		}
	}
	section("Warnings (not required by the contract):", t.warnings)
	sort.Strings(t.observations)
	section("Observations (the contract is silent; what the target chose):", t.observations)
	if len(t.restores) > 0 {
		fmt.Fprintf(w, "\n!!! Data could NOT be restored; set it back by hand:\n  %s\n", strings.Join(dedupe(t.restores), "\n  "))
	}
}

// dedupe drops repeated lines, keeping the first, and counts the repeats.
func dedupe(lines []string) []string {
	n := map[string]int{}
	var out []string
	for _, l := range lines {
		if n[l] == 0 {
			out = append(out, l)
		}
		n[l]++
	}
	for i, l := range out {
		if n[l] > 1 {
			out[i] = fmt.Sprintf("%s (%d times)", l, n[l])
		}
	}
	return out
}
