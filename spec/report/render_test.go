package report_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"
	"github.com/petstore/inventory-kit/spec/report/reporttest"
)

// key is the secret the runs below hold; no report may show it.
const key = "rk-render-secret-5150"

// hostileText holds what Markdown, HTML, tables, GitHub's workflow
// commands and terminals read as markup, and the key.
const hostileText = "<script>alert(1)</script> | `code` ```fence``` *em* [a](http://evil.test) ![i](x) $x^2$ #1 @team ~~s~~ 50% a:b,c &amp; \\ \x1b[2J\r\n::error::forged\n## forged heading\n| forged | row |\n" + key

var rd = exchange.NewRedactor(exchange.Secret{Value: key, Var: "INVENTORY_API_KEY"})

// hostileRun is a failing run whose every text is hostile.
func hostileRun() report.Run {
	curl := exchange.Curl(&exchange.Exchange{Method: "PATCH", URL: "http://127.0.0.1:1/v1/inventory/1?q=<x>|y",
		Header: http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}},
		Body:   []byte(`{"name":"` + "```" + `<script>|"}`)}, rd)
	f := report.Failure{Title: hostileText, Want: hostileText, Request: curl,
		Got: "200 OK, Content-Type \"application/json\"\n[{\"petId\":1,\"name\":\"" + hostileText + "\"}]", Problems: []string{hostileText}, Detail: hostileText, Count: 1}
	return report.Run{
		Name: "hostile " + hostileText, Start: time.Unix(0, 0),
		Facts:  []report.Property{{Name: "target", Value: hostileText}},
		Counts: []report.Count{{N: 1, Label: "passed"}, {N: 2, Label: "failed"}},
		Causes: []report.Cause{
			{Name: "response-body-schema", About: hostileText, Severity: spec.SeverityError, Count: 2, Unit: "check", Failures: []report.Failure{f, f}},
			{Name: hostileText, About: "a cause named by the target", Severity: spec.SeverityError, Count: 1, Unit: "check", Failures: []report.Failure{f}},
		},
		Warnings:     []report.Cause{{Name: "RFC 9110 section 11.6.1", About: hostileText, Severity: spec.SeverityWarning, Count: 1, Unit: "check", Failures: []report.Failure{{Title: hostileText}}}},
		Observations: []string{hostileText},
		Notes:        []report.Note{{Severity: spec.SeverityError, Title: hostileText, Lines: []string{hostileText}}},
		Coverage: &report.Coverage{Min: 90, Operations: []report.OperationCoverage{{Name: hostileText, Method: "GET", Path: "/v1/" + hostileText,
			Responses:    []report.ResponseCoverage{{Code: "200", Statuses: []report.StatusCount{{Status: 200, Count: 3}}}, {Code: "404", Why: hostileText}},
			Undocumented: []report.StatusCount{{Status: 418, Count: 1}}}}},
	}
}

// TestHostileRun renders a run whose every text holds markup and the
// key: no format shows the key; the Markdown's tables keep their cells
// and its code blocks their fences, and its text reads as sent; the HTML
// holds no element or attribute the run's text wrote, and shows that
// text; each annotation is one line, its values decoded as sent.
func TestHostileRun(t *testing.T) {
	run := hostileRun()
	// What a reader sees of the hostile text: the key hidden, control
	// characters shown as ·.
	visible := exchange.Printable([]byte(rd.String(hostileText)))

	md := reporttest.ReadMarkdown(t, run.Markdown(rd), key)
	if !strings.Contains(md.Text, visible) {
		t.Errorf("the Markdown does not read as the text sent:\nwant %q\nin %s", visible, md.Text)
	}
	if md.Tables != 2 {
		t.Errorf("the Markdown holds %d tables; want 2 (causes, coverage)", md.Tables)
	}
	curl := false
	for _, b := range md.Blocks {
		curl = curl || strings.HasPrefix(b, "curl ") && strings.Contains(b, "$INVENTORY_API_KEY") && strings.Contains(b, "```<script>|")
	}
	if !curl {
		t.Errorf("no code block holds the curl line, key as $INVENTORY_API_KEY, body whole: %q", md.Blocks)
	}
	for _, h := range md.Headings {
		if strings.Contains(h, "forged") && !strings.Contains(h, "response-body-schema") && !strings.HasPrefix(h, "✗") && !strings.HasPrefix(h, "❗") && !strings.HasPrefix(h, "❌") {
			t.Errorf("a heading the run's text made: %q", h)
		}
	}

	page := reporttest.ReadHTML(t, run.HTML(rd), key)
	if !strings.Contains(page.Text, visible) {
		t.Errorf("the HTML does not show the text sent:\nwant %q", visible)
	}
	if page.Details < 4 {
		t.Errorf("the HTML holds %d <details>; want one for each of the 4 failures at least", page.Details)
	}

	as := reporttest.ReadAnnotations(t, run.Annotations(rd), key)
	levels := map[string]int{}
	for _, a := range as {
		levels[a.Level]++
	}
	// 2 causes and the note that needs a person and the coverage gate;
	// the warning.
	if levels["error"] != 4 || levels["warning"] != 1 || len(as) != 5 {
		t.Errorf("annotations %+v; want 4 errors and 1 warning", as)
	}
	if as[1].Title != exchange.Printable([]byte(rd.String(hostileText))) || !strings.Contains(as[0].Message, "\n") {
		t.Errorf("annotation values not read back as sent: title %q", as[1].Title)
	}
	if n := bytes.Count(run.Annotations(rd), []byte("\n")); n != len(as) {
		t.Errorf("%d lines for %d annotations", n, len(as))
	}
}

// TestVerdicts: each format says how the run ended.
func TestVerdicts(t *testing.T) {
	passed := report.Run{Name: "r", Counts: []report.Count{{N: 3, Label: "passed"}}, Coverage: &report.Coverage{}}
	below := passed
	below.Coverage = &report.Coverage{Min: 50, Operations: []report.OperationCoverage{{Name: "op", Responses: []report.ResponseCoverage{{Code: "200"}}}}}
	tests := []struct {
		name    string
		run     report.Run
		verdict string
		errors  int // annotations
	}{
		{"passed", passed, report.VerdictPassed, 0},
		{"failed", hostileRun(), report.VerdictFailed, 5}, // 4 errors (its coverage gate among them), 1 warning
		{"coverage below the minimum", below, report.VerdictCoverage, 1},
		{"could not run", report.CannotRun("r", "c", "target unreachable: "+key, time.Now()), report.VerdictCannotRun, 1},
		{"a failed case", report.Run{Name: "r", Cases: []report.Case{{State: report.Errored}}}, report.VerdictFailed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v := tt.run.Verdict(); v != tt.verdict {
				t.Fatalf("Verdict = %q; want %q", v, tt.verdict)
			}
			md := reporttest.ReadMarkdown(t, tt.run.Markdown(rd), key)
			if len(md.Headings) == 0 || !strings.HasSuffix(md.Headings[0], ": "+tt.verdict) {
				t.Errorf("the Markdown's first heading %q; want it to end in the verdict", md.Headings)
			}
			page := reporttest.ReadHTML(t, tt.run.HTML(rd), key)
			if !strings.HasSuffix(page.Title, ": "+tt.verdict) {
				t.Errorf("the page's title %q; want it to end in the verdict", page.Title)
			}
			as := reporttest.ReadAnnotations(t, tt.run.Annotations(rd), key)
			if len(as) != tt.errors {
				t.Errorf("%d annotations; want %d: %+v", len(as), tt.errors, as)
			}
		})
	}
}

// TestOutputs writes every report of a run, appends the Markdown to the
// step summary (twice: two runs), and annotates only where asked.
func TestOutputs(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"GITHUB_STEP_SUMMARY": dir + "/summary.md", "GITHUB_ACTIONS": "true"}
	var annotations bytes.Buffer
	o := report.Outputs{JUnit: dir + "/a/j.xml", Markdown: dir + "/b/r.md", HTML: dir + "/c/r.html"}
	o.GitHub(func(k string) string { return env[k] }, &annotations)
	for range 2 {
		if err := o.Write(hostileRun(), rd); err != nil {
			t.Fatal(err)
		}
	}
	summary := readFile(t, env["GITHUB_STEP_SUMMARY"])
	if n := strings.Count(summary, "### ❌ hostile"); n != 2 {
		t.Errorf("the step summary holds %d summaries; want the 2 appended", n)
	}
	for _, f := range []string{o.JUnit, o.Markdown, o.HTML} {
		if b := readFile(t, f); len(b) == 0 || strings.Contains(b, key) {
			t.Errorf("%s: empty, or holds the key", f)
		}
	}
	if n := strings.Count(annotations.String(), "::error "); n != 8 {
		t.Errorf("%d error annotations for two runs; want 8", n)
	}
	o.GitHub(func(string) string { return "" }, &annotations)
	if o.StepSummary != "" || o.Annotations != nil {
		t.Errorf("outside GitHub Actions: %+v", o)
	}
	bad := report.Outputs{Markdown: readOnlyPath(t)}
	if err := bad.Write(hostileRun(), rd); err == nil || !strings.Contains(err.Error(), "--markdown-report") {
		t.Errorf("Write to a path that cannot be written: %v; want an error naming --markdown-report", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readOnlyPath returns a path no file can be written at, even by root:
// its directory is a file.
func readOnlyPath(t *testing.T) string {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(f, "report.md")
}
