package checks

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/petstore/inventory-kit/spec/report/reporttest"
)

// Environment of a child process run by TestBrokenServerReports.
const (
	markdownEnv = "CONFORMANCE_MARKDOWN_REPORT" // where to write the Markdown report
	htmlEnv     = "CONFORMANCE_HTML_REPORT"     // where to write the HTML report
)

// reportedServers are the servers TestBrokenServerReports renders: the
// correct mock, and broken ones whose failures have one cause, several,
// a crash, and a warning only.
var reportedServers = []string{correctServer, "auth-ignored", "list-item-unknown-status", "malformed-json-crashes", "error-placeholders", "no-www-authenticate"}

// TestBrokenServerReports runs the suite, as a GitHub Actions job, against
// the correct mock and some of the broken servers, each in its own
// process, and reads the reports people read: the Markdown names every
// cause the JSON report records, once, and the HTML shows every failed
// check; each cause is annotated once; the correct mock passes with no
// error annotation; no report holds the key.
func TestBrokenServerReports(t *testing.T) {
	if os.Getenv(brokenEnv) != "" {
		t.Skip("in a child process")
	}
	if testing.Short() {
		t.Skip("-short: skipping the broken-server runs")
	}
	dir := t.TempDir()
	for _, name := range reportedServers {
		t.Run(name, func(t *testing.T) {
			prefix := filepath.Join(dir, name)
			md, page := prefix+".md", prefix+".html"
			r := runChildEnv(t, name, prefix, markdownEnv+"="+md, htmlEnv+"="+page, exploreEnv+"=20", "GITHUB_ACTIONS=true")
			failed, warnings, _ := outcome(r.report)
			causes := map[string]bool{}
			for _, s := range r.report.SpecReports {
				if s.LeafNodeType != types.NodeTypeIt || !s.State.Is(types.SpecStateFailureStates) {
					continue
				}
				for _, e := range s.ReportEntries {
					if e.Name == "cause" {
						var c struct{ Cause string }
						if err := json.Unmarshal([]byte(e.Value.AsJSON), &c); err != nil {
							t.Fatalf("the cause entry %s: %v", e.Value.AsJSON, err)
						}
						causes[c.Cause] = true
					}
				}
			}
			mdBytes, err := os.ReadFile(md)
			if err != nil {
				t.Fatal(err)
			}
			m := reporttest.ReadMarkdown(t, mdBytes, testKey)
			verdict := "passed"
			if len(failed) > 0 {
				verdict = "failed"
			}
			if !strings.HasSuffix(m.Headings[0], ": "+verdict) {
				t.Errorf("the Markdown's heading %q; want %s (%d checks failed)", m.Headings[0], verdict, len(failed))
			}
			pageBytes, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			h := reporttest.ReadHTML(t, pageBytes, testKey)
			for _, f := range failed {
				// The page names a check as FullName does.
				if !strings.Contains(h.Text, f) {
					t.Errorf("the HTML does not show the failed check %q", f)
				}
			}
			as := reporttest.ReadAnnotations(t, r.output, testKey)
			var errs []string
			for _, a := range as {
				if a.Level == "error" {
					errs = append(errs, a.Title)
				}
			}
			for c := range causes {
				if !slices.ContainsFunc(m.Headings, func(h string) bool { return strings.HasPrefix(h, "✗ `"+c+"`: ") }) {
					t.Errorf("the Markdown has no section for the cause %s", c)
				}
				if n := slices.Index(errs, c); n < 0 || slices.Index(errs[n+1:], c) >= 0 {
					t.Errorf("annotations %q; want the cause %s once", errs, c)
				}
			}
			if len(causes) != len(errs) {
				t.Errorf("%d causes, %d error annotations %q", len(causes), len(errs), errs)
			}
			if len(warnings) > 0 && !strings.Contains(m.Text, "Warnings") {
				t.Errorf("%d warnings, and no Warnings in the Markdown", len(warnings))
			}
			if !strings.Contains(m.Text, "Coverage: ") {
				t.Errorf("the Markdown has no coverage")
			}
		})
	}
}

// annotations is where a child run prints its GitHub annotations: stdout
// under GITHUB_ACTIONS=true, else nowhere.
func annotations() io.Writer {
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		return os.Stdout
	}
	return nil
}
