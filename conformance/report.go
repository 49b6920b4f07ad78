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

// Summarize writes a short summary of a run: counts, skipped mutating
// checks, warnings, observations and any pet that could not be restored.
func Summarize(w io.Writer, r types.Report) {
	var passed, failed, skipped, skippedMutating int
	var warnings, observations, restores []string
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			for _, e := range s.ReportEntries {
				if e.Name == EntryRestoreFailed {
					restores = append(restores, e.StringRepresentation())
				}
			}
			continue
		}
		switch {
		case s.State == types.SpecStatePassed:
			passed++
		case s.State == types.SpecStateSkipped || s.State == types.SpecStatePending:
			skipped++
			if slices.Contains(s.Labels(), "mutating") && strings.Contains(s.Failure.Message, "--allow-mutations") {
				skippedMutating++
			}
		case s.State.Is(types.SpecStateFailureStates):
			failed++
		}
		for _, e := range s.ReportEntries {
			switch e.Name {
			case EntryWarning:
				warnings = append(warnings, e.StringRepresentation())
			case EntryObservation:
				observations = append(observations, e.StringRepresentation())
			case EntryRestoreFailed:
				restores = append(restores, e.StringRepresentation())
			}
		}
	}
	fmt.Fprintf(w, "\n== Conformance summary: %d passed, %d failed, %d skipped ==\n", passed, failed, skipped)
	if skippedMutating > 0 {
		fmt.Fprintf(w, "%d mutating checks were skipped: no request changed data. Pass --allow-mutations to run them.\n", skippedMutating)
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
	section("Warnings (not required by the contract):", warnings)
	sort.Strings(observations)
	section("Observations (the contract is silent; what the target chose):", observations)
	if len(restores) > 0 {
		fmt.Fprintf(w, "\n!!! Data could NOT be restored; set it back by hand:\n  %s\n", strings.Join(dedupe(restores), "\n  "))
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
