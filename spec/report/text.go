package report

import (
	"fmt"
	"io"
	"strings"
)

// Bounds of the console's summary.
const (
	textSeen      = 3  // the variants of what a cause's failures saw
	textNoteLines = 20 // the lines of a note
)

// Text renders the run as the console's end-of-run summary. It hides no
// secret: the console writes it through a redacting writer, and JUnit,
// which holds it as Summary, hides them as it renders.
func (r Run) Text() string {
	var b strings.Builder
	var head []string
	for _, c := range r.Counts {
		head = append(head, fmt.Sprintf("%d %s", c.N, c.Label))
	}
	fmt.Fprintf(&b, "\n== Conformance summary: %s ==\n", strings.Join(head, ", "))
	notes := func(failing bool) {
		for _, n := range r.Notes {
			if (n.Severity == severityError) == failing {
				textList(&b, n, textNoteLines)
			}
		}
	}
	notes(true)
	if len(r.Causes) > 0 {
		fmt.Fprintf(&b, "Failures by cause (%s):\n", Plural(len(r.Causes), "cause"))
	}
	for _, c := range r.Causes {
		fmt.Fprintf(&b, "  ✗ %s: %s\n", c.Name, c.About)
		for _, s := range upTo(c.Seen, textSeen, asIs, "... (%d more)") {
			fmt.Fprintf(&b, "      seen: %s\n", s)
		}
		fmt.Fprintf(&b, "    broke %s:\n", Plural(c.Count, c.Unit))
		for _, f := range c.Failures {
			fmt.Fprintf(&b, "      - %s\n", f.Title)
		}
	}
	var warnings []string
	for _, w := range r.Warnings {
		for _, f := range w.Failures {
			for _, p := range f.Problems {
				warnings = append(warnings, p+" ("+w.Name+")")
			}
		}
	}
	textList(&b, Note{Title: "Warnings (what HTTP's RFCs require and the contract does not; --strict fails them)", Lines: Dedupe(warnings)}, 0)
	textList(&b, Note{Title: "Observations (the contract is silent; what the target chose)", Lines: r.Observations}, 0)
	notes(false)
	WriteLeftChanged(&b, r.LeftChanged)
	if c := r.Coverage; c != nil {
		b.WriteString("Coverage: " + c.Headline())
		if c.Min > 0 && c.Met() {
			fmt.Fprintf(&b, ", at least --min-coverage %g%%", c.Min)
		}
		b.WriteString("\n")
		if g := c.Gate(); g != "" {
			b.WriteString("!!! " + g + "\n")
		}
	}
	return b.String()
}

// textList writes a note as a title and its lines, at most limit of them
// (0: every one); a note that needs a person is marked !!!. A note
// without lines is not written.
func textList(b *strings.Builder, n Note, limit int) {
	if len(n.Lines) == 0 {
		return
	}
	if n.Severity != "" {
		b.WriteString("!!! ")
	}
	fmt.Fprintf(b, "%s:\n", n.Title)
	for _, l := range upTo(n.Lines, limit, asIs, "and %d more (the reports list them)") {
		fmt.Fprintf(b, "  - %s\n", l)
	}
}

// upTo renders the first n of items by line (n 0: every one), then, where
// some are left out, more, a format of how many.
func upTo[T any](items []T, n int, line func(T) string, more string) []string {
	var out []string
	for i, it := range items {
		if i == n && n > 0 {
			return append(out, fmt.Sprintf(more, len(items)-i))
		}
		out = append(out, line(it))
	}
	return out
}

func asIs(s string) string { return s }

// WriteLeftChanged writes the records a run left changed to w, as every
// report lists them; nothing where there are none.
func WriteLeftChanged(w io.Writer, left []Changed) {
	if len(left) == 0 {
		return
	}
	fmt.Fprintf(w, "\n!!! %s (%s):\n", LeftChangedTitle, Plural(len(left), "record"))
	for _, c := range left {
		fmt.Fprintf(w, "  %s\n", c)
	}
}

// Dedupe drops repeated lines, keeping the first, and says how often a
// repeated one was seen: "line (3 times)".
func Dedupe(lines []string) []string {
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
