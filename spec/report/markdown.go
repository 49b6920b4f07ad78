package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// Bounds of the Markdown summary, which must stay short enough to read in
// a pull request (GitHub takes at most 1 MiB of job summary a step).
const (
	mdChecksNamed   = 5   // the failed checks named under a cause
	mdObservations  = 12  // the observations listed
	mdNoteLines     = 8   // the lines of a note shown
	mdBlockBytes    = 900 // the bytes of a code block (a curl line, an answer)
	mdWarningsNamed = 10  // the warnings listed
	mdLeftChanged   = 500 // the records left changed listed
)

// Markdown renders the run as a summary for people, each failure cause
// with one example (the HTML report holds every failure). Every secret rd
// knows is hidden first; every text from the run is then escaped, so a
// record field holding <script> or | renders as text and breaks no table.
func (r Run) Markdown(rd *exchange.Redactor) []byte {
	r = r.redacted(rd)
	var b strings.Builder
	icon := map[string]string{VerdictPassed: "✅", VerdictFailed: "❌", VerdictCoverage: "❌", VerdictCannotRun: "⚠️"}[r.Verdict()]
	fmt.Fprintf(&b, "### %s %s: %s\n\n", icon, mdText(r.Name), r.Verdict())
	if r.CannotRun != "" {
		fmt.Fprintf(&b, "The run could not be made:\n\n%s\n", mdBlock(r.CannotRun, ""))
	}
	var head []string
	for _, c := range r.Counts {
		head = append(head, fmt.Sprintf("%d %s", c.N, mdText(c.Label)))
	}
	if len(head) > 0 {
		fmt.Fprintf(&b, "**%s**", strings.Join(head, " · "))
		if r.Coverage != nil {
			fmt.Fprintf(&b, " · coverage **%s**", mdText(r.Coverage.Headline()))
		}
		b.WriteString("\n\n")
	}
	if len(r.Facts) > 0 {
		var facts []string
		for _, p := range r.Facts {
			facts = append(facts, mdText(p.Name)+": "+mdText(p.Value))
		}
		fmt.Fprintf(&b, "%s\n\n", strings.Join(facts, " · "))
	}
	if r.Coverage != nil && !r.Coverage.Met() {
		fmt.Fprintf(&b, "**Coverage %s is below the minimum, %s** (--min-coverage): see Coverage below.\n\n", mdText(percent(r.Coverage.Percent())), mdText(percent(r.Coverage.Min)))
	}
	if len(r.LeftChanged) > 0 {
		fmt.Fprintf(&b, "#### ❗ %s\n\n", mdText(LeftChangedTitle))
		mdList(&b, r.leftChangedLines(), mdLeftChanged, " (the HTML and JUnit reports list them)", mdText)
		b.WriteString("\n")
	}
	if len(r.Causes) > 0 {
		mdCauses(&b, "Failures by cause", r.Causes)
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, "#### Warnings\n\n")
		mdList(&b, r.Warnings, mdWarningsNamed, " (the HTML report lists them)", func(w Cause) string {
			l := mdCode(w.Name) + mdText(": "+w.About)
			if w.Count > 1 {
				l += " (" + Plural(w.Count, w.Unit) + ")"
			}
			if len(w.Failures) > 0 && w.Failures[0].Title != "" {
				l += ", e.g. " + mdText(w.Failures[0].Title)
			}
			return l
		})
		b.WriteString("\n")
	}
	for _, n := range r.Notes {
		mark := map[string]string{severityError: "❗ ", severityWarning: "⚠️ "}[n.Severity]
		fmt.Fprintf(&b, "#### %s%s\n\n", mark, mdText(n.Title))
		mdList(&b, n.Lines, mdNoteLines, "", mdText)
		b.WriteString("\n")
	}
	if r.Coverage != nil {
		mdCoverage(&b, r.Coverage)
	}
	if len(r.Observations) > 0 {
		fmt.Fprintf(&b, "#### Where the contract is silent\n\n")
		mdList(&b, r.Observations, mdObservations, " (the HTML report lists them)", mdText)
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// mdCauses writes the causes: a table, then one example of each.
func mdCauses(b *strings.Builder, title string, causes []Cause) {
	fmt.Fprintf(b, "#### %s\n\n| cause | what it means | seen |\n|---|---|---|\n", title)
	for _, c := range causes {
		fmt.Fprintf(b, "| %s | %s | %s |\n", mdCode(c.Name), mdText(c.About), Plural(c.Count, c.Unit))
	}
	b.WriteString("\n")
	for _, c := range causes {
		fmt.Fprintf(b, "##### ✗ %s: %s\n\n", mdCode(c.Name), Plural(c.Count, c.Unit))
		if len(c.Failures) == 0 {
			continue
		}
		f := c.Failures[0]
		fmt.Fprintf(b, "e.g. **%s**\n\n", mdText(f.Title))
		if f.Want != "" {
			fmt.Fprintf(b, "The contract wants: %s\n\n", mdText(f.Want))
		}
		if f.Request != "" {
			fmt.Fprintf(b, "%s\n", mdBlock(f.Request, "sh"))
		}
		if f.Got != "" {
			fmt.Fprintf(b, "What came back:\n\n%s\n", mdBlock(f.Got, ""))
		}
		for _, p := range f.Problems {
			fmt.Fprintf(b, "- %s\n", mdText(p))
		}
		if len(f.Problems) > 0 {
			b.WriteString("\n")
		}
		if f.Request == "" && f.Got == "" && f.Detail != "" {
			fmt.Fprintf(b, "%s\n", mdBlock(f.Detail, ""))
		}
		if len(c.Failures) > 1 {
			names := upTo(c.Failures[1:], mdChecksNamed, func(f Failure) string { return mdText(f.Title) }, "and %d more")
			fmt.Fprintf(b, "Also: %s.\n\n", strings.Join(names, "; "))
		}
	}
}

// mdList writes the first limit of items as a list, each rendered by
// line, then how many more there are and, after more, where to find them.
func mdList[T any](b *strings.Builder, items []T, limit int, more string, line func(T) string) {
	for _, l := range upTo(items, limit, line, "and %d more"+more) {
		fmt.Fprintf(b, "- %s\n", l)
	}
}

// mdCoverage writes the coverage table, one row an operation.
func mdCoverage(b *strings.Builder, c *Coverage) {
	fmt.Fprintf(b, "#### Coverage: %s\n\n", mdText(c.Headline()))
	undocumented := slices.ContainsFunc(c.Operations, func(op OperationCoverage) bool { return len(op.Undocumented) > 0 })
	head, rule := "| operation | exercised | not exercised |", "|---|---|---|"
	if undocumented {
		head, rule = head+" answered, not documented |", rule+"---|"
	}
	fmt.Fprintf(b, "%s\n%s\n", head, rule)
	for _, op := range c.Operations {
		var yes, no []string
		for _, r := range op.Responses {
			if r.Exercised() {
				yes = append(yes, mdText(exercisedText(r)))
			} else if r.Why != "" {
				no = append(no, "**"+mdText(r.Code)+"** "+mdText(r.Why))
			} else {
				no = append(no, "**"+mdText(r.Code)+"**")
			}
		}
		fmt.Fprintf(b, "| %s<br>%s | %s | %s |", mdText(op.Name), mdText(op.Method+" "+op.Path), cmp.Or(strings.Join(yes, ", "), "–"), cmp.Or(strings.Join(no, "<br>"), "–"))
		if undocumented {
			fmt.Fprintf(b, " %s |", cmp.Or(mdText(seenText(op.Undocumented)), "–"))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "\n%s\n\n", mdText(CoverageRule))
}

// mdText renders a text from the run inline: on one line (control
// characters, newlines included, become ·), with what Markdown and GitHub
// read as markup escaped: HTML's < > & as entities, and \ ` * _ [ ] | ~ $ #
// @ with a backslash, so that nothing becomes emphasis, code, a link, an
// image, a table cell, math, a heading or a mention.
func mdText(s string) string { return mdEscapes.Replace(exchange.Printable([]byte(s))) }

var mdEscapes = strings.NewReplacer("<", "&lt;", ">", "&gt;", "&", "&amp;", `\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`,
	"[", `\[`, "]", `\]`, "|", `\|`, "~", `\~`, "$", `\$`, "#", `\#`, "@", `\@`)

// mdCode renders one of the suite's ids (a rule, a cause) as code; any
// other text is rendered by mdText.
func mdCode(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == ' ') {
			return mdText(s)
		}
	}
	return "`" + s + "`"
}

// mdBlock renders a text from the run as a fenced code block, of lang:
// cut to mdBlockBytes, control characters but newlines and tabs shown
// as ·, fenced by more backticks than the text holds in a row, so that no
// line of it can end the block.
func mdBlock(s, lang string) string {
	if len(s) > mdBlockBytes {
		cut := mdBlockBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf(" ... (%d bytes in all)", len(s))
	}
	s = blockText(s)
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

// blockText renders a text on several lines: invalid UTF-8 becomes
// U+FFFD, and control characters but newline and tab become ·.
func blockText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return '·'
		}
		return r
	}, strings.ToValidUTF8(strings.ReplaceAll(s, "\r\n", "\n"), "\uFFFD"))
}
