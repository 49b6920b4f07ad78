package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// A Tally is what a run's report says: the counts, the failed checks
// grouped by cause, and the entries the suite added.
type Tally struct {
	Passed, Skipped, SkippedMutating int
	Failed                           []string            // full names of the failed checks, in run order
	Causes                           []string            // distinct causes, most checks first
	ByCause                          map[string][]string // cause → the checks it broke
	Warnings, Observations, Restores []string
	Exploration                      []string
}

// CheckName is a check's name without Ginkgo's prefixes: its containers'
// texts after the area and its own text.
func CheckName(s types.SpecReport) string {
	parts := slices.Clone(s.ContainerHierarchyTexts)
	if len(parts) > 0 {
		parts = parts[1:]
	}
	return strings.Join(append(parts, s.LeafNodeText), " ")
}

// FullName is the area and the check's name, as --list shows it.
func FullName(s types.SpecReport) string {
	return string(AreaOf(s.Labels())) + ": " + CheckName(s)
}

// TallyReport counts the checks of r and gathers their entries.
// mutations says whether the run allowed writes: a mutating check skipped
// without them is counted apart.
func TallyReport(r types.Report, mutations bool) Tally {
	t := Tally{ByCause: map[string][]string{}}
	for _, s := range r.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt {
			switch {
			case s.State == types.SpecStatePassed:
				t.Passed++
			case s.State == types.SpecStateSkipped || s.State == types.SpecStatePending:
				t.Skipped++
				if Mutating.In(s.Labels()) && !mutations {
					t.SkippedMutating++
				}
			case s.State.Is(types.SpecStateFailureStates):
				name := FullName(s)
				t.Failed = append(t.Failed, name)
				c := causeOf(s)
				if _, ok := t.ByCause[c]; !ok {
					t.Causes = append(t.Causes, c)
				}
				t.ByCause[c] = append(t.ByCause[c], name)
			}
		}
		for _, e := range s.ReportEntries {
			switch e.Name {
			case EntryWarning:
				t.Warnings = append(t.Warnings, e.StringRepresentation())
			case EntryObservation:
				t.Observations = append(t.Observations, e.StringRepresentation())
			case EntryRestoreFailed:
				t.Restores = append(t.Restores, e.StringRepresentation())
			case EntryExploration:
				t.Exploration = append(t.Exploration, e.StringRepresentation())
			}
		}
	}
	sort.SliceStable(t.Causes, func(i, j int) bool { return len(t.ByCause[t.Causes[i]]) > len(t.ByCause[t.Causes[j]]) })
	return t
}

// causeOf returns what a failure is about: the last cause the check
// recorded, or the first line of its failure.
func causeOf(s types.SpecReport) string {
	c := ""
	for _, e := range s.ReportEntries {
		if e.Name == EntryCause {
			c = e.StringRepresentation()
		}
	}
	if c == "" {
		c, _, _ = strings.Cut(s.Failure.Message, "\n")
		if c == "" {
			c = s.State.String()
		}
	}
	return Printable([]byte(c))
}

// Summarize writes the end-of-run summary: counts, failures grouped by
// cause, skipped mutating checks, warnings, observations, exploration and
// any record that could not be restored.
func Summarize(w io.Writer, t Tally) {
	fmt.Fprintf(w, "\n== Conformance summary: %d passed, %d failed, %d skipped ==\n", t.Passed, len(t.Failed), t.Skipped)
	if len(t.Causes) > 0 {
		fmt.Fprintf(w, "Failures by cause (%d causes):\n", len(t.Causes))
		for _, c := range t.Causes {
			checks := t.ByCause[c]
			fmt.Fprintf(w, "  ✗ %s\n    broke %d %s:\n", c, len(checks), plural(len(checks), "check", "checks"))
			for _, n := range checks {
				fmt.Fprintf(w, "      - %s\n", n)
			}
		}
	}
	if t.SkippedMutating > 0 {
		fmt.Fprintf(w, "%d mutating checks were skipped: no request changed data. Pass --allow-mutations to run them.\n", t.SkippedMutating)
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
	section("Warnings (what HTTP's RFCs require and the contract does not; --strict fails them):", t.Warnings)
	obs := slices.Clone(t.Observations)
	sort.Strings(obs)
	section("Observations (the contract is silent; what the target chose):", obs)
	section("Exploration:", t.Exploration)
	if len(t.Restores) > 0 {
		fmt.Fprintf(w, "\n!!! Data could NOT be restored; set it back by hand:\n  %s\n", strings.Join(dedupe(t.Restores), "\n  "))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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

// JSONReport renders r as Ginkgo's JSON report does, an array of one
// report, with the key replaced in every string value (before encoding,
// so no key can break the document) and without the working directory:
// SuitePath is empty and paths under it are relative.
func JSONReport(r types.Report, rd *Redactor) ([]byte, error) {
	r.SuitePath = ""
	b, err := json.Marshal([]types.Report{r})
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	cwd, _ := os.Getwd()
	v = mapStrings(v, func(s string) string {
		if cwd != "" && cwd != "/" {
			if rest, ok := strings.CutPrefix(s, cwd+string(filepath.Separator)); ok {
				s = rest
			}
		}
		return rd.String(s)
	})
	return json.MarshalIndent(v, "", "  ")
}
