package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/spec/report/reporttest"
)

// humanRun is a run of the command with the reports people read: its
// exit status, its output, and the reports as their readers see them.
type humanRun struct {
	code        int
	out         string
	md          reporttest.Markdown
	page        reporttest.HTML
	annotations []reporttest.Annotation
	summary     string // the step summary
	html        string // the HTML report's path
}

// runHuman runs the command in a child process, as a GitHub Actions job
// (GITHUB_ACTIONS=true, a $GITHUB_STEP_SUMMARY file), with
// --markdown-report and --html-report, and reads what it wrote. secrets
// must show nowhere.
func runHuman(t *testing.T, secrets []string, args ...string) humanRun {
	t.Helper()
	dir := t.TempDir()
	md, page, summary := filepath.Join(dir, "r", "report.md"), filepath.Join(dir, "r", "report.html"), filepath.Join(dir, "summary.md")
	a, _ := json.Marshal(append(args, "--markdown-report", md, "--html-report", page))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgs+"="+string(a), "INVENTORY_API_KEY="+testKey, "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+summary)
	out, err := cmd.CombinedOutput()
	r := humanRun{out: string(out), html: page}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, testKey)
	r.md = reporttest.ReadMarkdown(t, []byte(readFile(t, md)), secrets...)
	r.page = reporttest.ReadHTML(t, []byte(readFile(t, page)), secrets...)
	r.annotations = reporttest.ReadAnnotations(t, out, secrets...)
	r.summary = readFile(t, summary)
	if r.summary != readFile(t, md)+"\n" {
		t.Errorf("the step summary is not the Markdown report:\n%s", r.summary)
	}
	return r
}

// annotated returns the titles of the annotations of a level.
func (r humanRun) annotated(level string) []string {
	var titles []string
	for _, a := range r.annotations {
		if a.Level == level {
			titles = append(titles, a.Title)
		}
	}
	return titles
}

// TestHumanReports runs the suite as a GitHub Actions job against the
// mock, a mock that ignores the key and one that answers 401 without a
// challenge, and reads each report as its reader does: the verdict, the
// counts, each cause once with its example (the curl line with the key as
// $INVENTORY_API_KEY), the coverage, the warnings, and the annotations
// GitHub shows on the pull request.
func TestHumanReports(t *testing.T) {
	tests := []struct {
		name     string
		wrap     func(http.Handler) http.Handler
		args     []string
		code     int
		verdict  string
		errors   []string // the causes annotated as errors
		warnings int      // annotated as warnings
		text     []string // in the Markdown and the HTML
	}{
		{"the mock", nil, []string{"--allow-mutations", "--explore-steps", "30", "--seed", "3"}, cli.ExitOK, "passed", nil, 0,
			[]string{"passed", "Coverage", "listInventory", "updateInventory", "Where the contract is silent", "list order", "replay with --seed 3"}},
		{"a target that ignores the key", ignoresKey, []string{"--label-filter", "auth || list", "--explore-steps", "0"}, cli.ExitFailed, "failed",
			[]string{"response-auth-not-enforced"}, 0,
			[]string{"failed", "response-auth-not-enforced", "no Authorization header gives 401", "; want 401", "skipped by label"}},
		{"a 401 without a challenge", withoutChallenge, []string{"--label-filter", "auth", "--explore-steps", "0"}, cli.ExitOK, "passed", nil, 1,
			[]string{"Warnings", "RFC 9110 section 11.6.1", "401 without a WWW-Authenticate header"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := newMock(t, tt.wrap)
			r := runHuman(t, nil, append([]string{"--base-url", url}, tt.args...)...)
			if r.code != tt.code {
				t.Fatalf("exit %d; want %d\n%s", r.code, tt.code, r.out)
			}
			if h := r.md.Headings[0]; !strings.HasSuffix(h, ": "+tt.verdict) {
				t.Errorf("the Markdown's heading %q; want the verdict %s", h, tt.verdict)
			}
			if !strings.HasSuffix(r.page.Title, ": "+tt.verdict) {
				t.Errorf("the page's title %q; want the verdict %s", r.page.Title, tt.verdict)
			}
			if got := r.annotated("error"); strings.Join(got, ",") != strings.Join(tt.errors, ",") {
				t.Errorf("error annotations %q; want each cause once: %q", got, tt.errors)
			}
			if got := r.annotated("warning"); len(got) != tt.warnings {
				t.Errorf("warning annotations %q; want %d", got, tt.warnings)
			}
			for _, w := range tt.text {
				if !strings.Contains(r.md.Text+strings.Join(r.md.Blocks, "\n"), w) {
					t.Errorf("the Markdown lacks %q:\n%s", w, r.summary)
				}
				if !strings.Contains(r.page.Text, w) {
					t.Errorf("the HTML lacks %q", w)
				}
			}
			if tt.code == cli.ExitFailed {
				curl := false
				for _, b := range r.md.Blocks {
					curl = curl || strings.HasPrefix(b, "curl -sS -i ")
				}
				if !curl {
					t.Errorf("the Markdown shows no curl line: %q", r.md.Blocks)
				}
				if !strings.Contains(strings.Join(r.page.Pre, "\n"), "curl -sS -i ") {
					t.Errorf("the HTML shows no curl line")
				}
			}
			if strings.Count(r.md.Text, "Coverage: ") != 1 || !strings.Contains(r.out, "Coverage: ") {
				t.Errorf("the coverage is not in the Markdown once and on the console:\n%s", r.out)
			}
		})
	}
}

// TestMinCoverage gates on the coverage of documented responses: a
// read-only run exercises no update that succeeds, and says so; a label
// filter leaves out checks, and the gate says that too. Below the
// minimum the run exits 1, naming each pair not exercised and why.
func TestMinCoverage(t *testing.T) {
	url, _ := newMock(t, nil)
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"read-only, below", []string{"--min-coverage", "90"}, cli.ExitFailed,
			[]string{"is below --min-coverage 90%", "updateInventory 200: read-only run", "--allow-mutations"}},
		{"read-only, reached", []string{"--min-coverage", "40%"}, cli.ExitOK, []string{", at least --min-coverage 40%"}},
		{"a label filter", []string{"--label-filter", "auth", "--min-coverage", "100"}, cli.ExitFailed,
			[]string{"listInventory default", "skipped by label (--label-filter \"auth\" left out"}},
		{"not a percentage", []string{"--min-coverage", "120"}, cli.ExitCannotRun, []string{"--min-coverage", "from 0 to 100"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runChild(t, append([]string{"--base-url", url, "--explore-steps", "0"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d; want %d\n%s", code, tt.code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// hostileStrings hold what Markdown, HTML, tables and workflow commands
// read as markup.
const hostileStrings = "<script>alert(1)</script>|`x`|*b*|[l](http://evil.test)|$m$|#1 @all %0A ::error::forged"

// TestHostileTargetReports: a target whose records, field names, error
// messages and headers hold Markdown and HTML control characters and the
// key fails its checks; no report shows the key, none is broken by the
// target's text, and the text shows as text.
func TestHostileTargetReports(t *testing.T) {
	url := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo", hostileStrings+" "+r.Header.Get("Authorization"))
		var b bytes.Buffer // JSON with < > & as they are, as a careless server sends them
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(hostileStrings + " " + testKey)
		h := bytes.TrimSpace(b.Bytes())
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			w.Header().Set("WWW-Authenticate", "Bearer realm=\""+hostileStrings+"\"")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"code":%s,"message":%s,"status":401}`, h, h)
			return
		}
		if r.Method == http.MethodPatch {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"code":%s,"message":%s,"status":418}`, h, h)
			return
		}
		fmt.Fprintf(w, `[{"petId":1,"quantity":3,"status":%s,%s:1}]`, h, h)
	})
	r := runHuman(t, nil, "--base-url", url, "--explore-steps", "10", "--seed", "1")
	if r.code != cli.ExitFailed {
		t.Fatalf("exit %d; want 1\n%s", r.code, r.out)
	}
	if strings.Contains(r.md.Text, "body-too-large-to-check") {
		t.Errorf("a body whole but for the key, hidden, is judged too large to check:\n%s", r.summary)
	}
	// The target's text, the key hidden, as it came back.
	shown := hostileStrings + " $INVENTORY_API_KEY"
	if !strings.Contains(strings.Join(r.md.Blocks, "\n"), shown) {
		t.Errorf("the Markdown does not show what came back as text:\n%s", r.summary)
	}
	if !strings.Contains(strings.Join(r.page.Pre, "\n"), shown) {
		t.Errorf("the HTML does not show what came back as text")
	}
	// Where it stands in a line of text, it reads as the target sent it.
	if !strings.Contains(r.md.Text, `WWW-Authenticate on 401: "Bearer realm=\"`+hostileStrings+`\""`) || !strings.Contains(r.page.Text, hostileStrings) {
		t.Errorf("the observation of the target's challenge does not read as sent:\n%s", r.md.Text)
	}
	if len(r.annotated("error")) == 0 {
		t.Errorf("no error annotation:\n%s", r.out)
	}
	for _, a := range r.annotations {
		if strings.Contains(a.Title, "forged") {
			t.Errorf("an annotation titled by the target: %+v", a)
		}
	}
}

// TestCannotRunReports: a run that cannot be made replaces the reports
// with ones saying why, appends that to the step summary and annotates
// it.
func TestCannotRunReports(t *testing.T) {
	dir := t.TempDir()
	md, page := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.html")
	for _, f := range []string{md, page} {
		os.WriteFile(f, []byte("a green report of an earlier run"), 0o644)
	}
	var out, errOut strings.Builder
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md")}
	code := conform(t.Context(), []string{"--base-url", "http://127.0.0.1:1/v1", "--api-key", testKey, "--markdown-report", md, "--html-report", page},
		func(k string) string { return env[k] }, &out, &errOut)
	if code != cli.ExitCannotRun {
		t.Fatalf("exit %d; want 2", code)
	}
	m := reporttest.ReadMarkdown(t, []byte(readFile(t, md)), testKey)
	if !strings.HasSuffix(m.Headings[0], ": could not run") || !strings.Contains(strings.Join(m.Blocks, ""), "unreachable") {
		t.Errorf("the Markdown does not say the run could not be made, and why:\n%s", readFile(t, md))
	}
	if h := reporttest.ReadHTML(t, []byte(readFile(t, page)), testKey); !strings.Contains(h.Text, "unreachable") {
		t.Errorf("the HTML does not say why the run could not be made")
	}
	if s := readFile(t, env["GITHUB_STEP_SUMMARY"]); strings.Count(s, "could not run") != 1 {
		t.Errorf("the step summary holds %d summaries; want the one of the end, not the placeholder's:\n%s", strings.Count(s, "could not run"), s)
	}
	as := reporttest.ReadAnnotations(t, []byte(out.String()), testKey)
	if len(as) != 1 || as[0].Level != "error" || !strings.Contains(as[0].Message, "unreachable") {
		t.Errorf("annotations %+v; want one error saying why", as)
	}
}

// TestHARReports checks a browser's recording as a GitHub Actions job
// with the reports people read: its violations by rule with their
// examples, its coverage, annotations, and none of its token.
func TestHARReports(t *testing.T) {
	dir := t.TempDir()
	md, page, summary := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.html"), filepath.Join(dir, "summary.md")
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary, "INVENTORY_API_KEY": testKey}
	code, out, errOut := runInProcess([]string{"--har", "testdata/browser.har", "--markdown-report", md, "--html-report", page, "--min-coverage", "50"}, env)
	if code != cli.ExitFailed {
		t.Fatalf("exit %d; want 1\n%s%s", code, out, errOut)
	}
	secrets := []string{testKey, "har-browser-token-0a1b2c"}
	m := reporttest.ReadMarkdown(t, []byte(readFile(t, md)), secrets...)
	for _, w := range []string{"response-body-schema", "request-body", "response-content-type", "Coverage: ", "below the minimum", "browser.har"} {
		if !strings.Contains(m.Text, w) {
			t.Errorf("the Markdown lacks %q:\n%s", w, readFile(t, md))
		}
	}
	h := reporttest.ReadHTML(t, []byte(readFile(t, page)), secrets...)
	if !strings.Contains(strings.Join(h.Pre, "\n"), "curl -sS -i ") {
		t.Errorf("the HTML shows no curl line")
	}
	as := reporttest.ReadAnnotations(t, []byte(out), secrets...)
	var titles []string
	for _, a := range as {
		titles = append(titles, a.Title)
	}
	if !strings.Contains(strings.Join(titles, ","), "response-body-schema") || !strings.Contains(strings.Join(titles, ","), "coverage below --min-coverage") {
		t.Errorf("annotations %q; want each rule broken and the coverage gate", titles)
	}
	if !strings.Contains(out, "Coverage: ") || !strings.Contains(out, "is below --min-coverage 50%") {
		t.Errorf("the console lacks the coverage and the gate:\n%s", out)
	}
	if readFile(t, summary) != readFile(t, md)+"\n" {
		t.Errorf("the step summary is not the Markdown report")
	}
}
