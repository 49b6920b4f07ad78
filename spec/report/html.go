package report

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
	"strings"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// htmlFailures bounds the failures the page shows under one cause; the
// JUnit report holds every one.
const htmlFailures = 200

//go:embed report.css
var reportCSS string

//go:embed report.html
var reportHTML string

// page is the HTML report's template. Its one style sheet is inline, and
// its Content-Security-Policy allows that sheet (by its hash) and nothing
// else: no script, no font, no image and no request of any kind, so the
// page reads the same from a file, an artifact or a mail, and a hostile
// target's text that escaping let through could still run nothing.
var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"plural":  Plural[int64],
	"percent": percent,
	"seen":    seenText,
	"lines":   func(s string) string { return blockText(s) },
	"line":    func(s string) string { return exchange.Printable([]byte(s)) },
	"cause": func(c Cause, i int, kind string) causeView {
		v := causeView{Cause: c, Index: i, Kind: kind}
		if len(c.Failures) > htmlFailures {
			v.Hidden, v.Cause.Failures = len(c.Failures)-htmlFailures, c.Failures[:htmlFailures]
		}
		return v
	},
}).Parse(strings.Replace(reportHTML, "/*CSS*/", reportCSS, 1)))

// styleHash is the CSP source of the inline style sheet.
var styleHash = func() string {
	sum := sha256.Sum256([]byte(reportCSS))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// htmlView is what the template reads.
type htmlView struct {
	Run
	Verdict, VerdictClass string
	CSP                   string
	Exercised, Documented int
	LeftChangedTitle      string
	CoverageRule          string
}

// causeView is what the template's "cause" reads.
type causeView struct {
	Cause  Cause
	Index  int
	Kind   string
	Hidden int // failures not shown
}

// HTML renders the run as one self-contained page, every failure cause
// with every failure it explains expandable to its exchange. Every secret
// rd knows is hidden first; html/template then escapes every text of the
// run for where it stands.
func (r Run) HTML(rd *exchange.Redactor) []byte {
	r = r.redacted(rd)
	v := htmlView{Run: r, Verdict: r.Verdict(), LeftChangedTitle: LeftChangedTitle, CoverageRule: CoverageRule,
		CSP: "default-src 'none'; style-src " + styleHash + "; base-uri 'none'; form-action 'none'"}
	v.VerdictClass = map[string]string{VerdictPassed: "passed", VerdictFailed: "failed", VerdictCoverage: "failed", VerdictCannotRun: "cannot"}[v.Verdict]
	if r.Coverage != nil {
		v.Exercised, v.Documented = r.Coverage.Figure()
	}
	var b bytes.Buffer
	if err := page.Execute(&b, v); err != nil {
		// The template is fixed and its data plain values: a failure is a
		// bug, which the tests catch; say so rather than write half a page.
		return []byte("<!doctype html><title>report</title><p>the report could not be rendered: " + template.HTMLEscapeString(err.Error()))
	}
	return b.Bytes()
}
