package report

import (
	"fmt"
	"strings"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// annotationBytes bounds the message of one annotation; GitHub shows the
// start of a long one anyway.
const annotationBytes = 2000

// Annotations renders the run as GitHub Actions workflow commands, one
// line each: each failure cause once as ::error, each warning as
// ::warning, a note that needs a person, a coverage below the minimum and
// a run that could not be made as ::error. Every secret rd knows is
// hidden first; then %, CR and LF are escaped as GitHub requires (and :
// and , in the title), so that no text of the run can end a command.
func (r Run) Annotations(rd *exchange.Redactor) []byte {
	r = r.redacted(rd)
	var b strings.Builder
	if r.CannotRun != "" {
		workflowCommand(&b, "error", r.Name+": could not run", r.CannotRun)
	}
	cause := func(level string, c Cause) {
		msg := c.About
		if c.Count > 0 {
			msg += " (" + Plural(c.Count, c.Unit) + ")"
		}
		if len(c.Failures) > 0 {
			f := c.Failures[0]
			msg += "\ne.g. " + f.Title
			if f.Want != "" {
				msg += "\nthe contract wants: " + f.Want
			}
			if f.Got != "" {
				got, _, _ := strings.Cut(f.Got, "\n")
				msg += "\ngot: " + got
			}
			if f.Request != "" {
				msg += "\n" + f.Request
			}
		}
		workflowCommand(&b, level, c.Name, msg)
	}
	if len(r.LeftChanged) > 0 {
		workflowCommand(&b, "error", LeftChangedTitle, strings.Join(r.leftChangedLines(), "\n"))
	}
	for _, c := range r.Causes {
		cause("error", c)
	}
	for _, c := range r.Warnings {
		cause("warning", c)
	}
	for _, n := range r.Notes {
		if n.Severity == severityError || n.Severity == severityWarning {
			workflowCommand(&b, n.Severity, n.Title, strings.Join(n.Lines, "\n"))
		}
	}
	if c := r.Coverage; c != nil && !c.Met() {
		workflowCommand(&b, "error", "coverage below --min-coverage", c.Gate())
	}
	return []byte(b.String())
}

// workflowCommand writes one workflow command: ::level title=TITLE::MESSAGE.
func workflowCommand(b *strings.Builder, level, title, msg string) {
	if len(msg) > annotationBytes {
		msg = strings.ToValidUTF8(msg[:annotationBytes], "") + " ..."
	}
	// Other control characters (a terminal's escapes) shown as ·.
	title, msg = exchange.Printable([]byte(title)), blockText(msg)
	fmt.Fprintf(b, "::%s title=%s::%s\n", level, escapeProperty(title), escapeData(msg))
}

// escapeData escapes a workflow command's message as GitHub's toolkit
// does: % as %25, CR as %0D, LF as %0A.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value: as a
// message, and : as %3A and , as %2C besides.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
