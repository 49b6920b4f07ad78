//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/pb33f/go-yaml"
)

// workflow is what TestCIRecipe reads of a GitHub Actions workflow.
type workflow struct {
	Concurrency struct {
		Group            string
		CancelInProgress *bool `yaml:"cancel-in-progress"`
	}
	Permissions map[string]string
	Jobs        map[string]struct {
		Steps []struct {
			Name string
			Uses string
			If   string
			Run  string
			Env  map[string]string
			With map[string]string
		}
	}
}

// minMajors are the action majors the recipe must use at least: the
// current ones when it was last checked (see the README, In CI).
var minMajors = map[string]int{
	"actions/checkout":             7,
	"actions/setup-go":             7,
	"actions/upload-artifact":      7,
	"mikepenz/action-junit-report": 6,
}

// ciRecipe returns the README's GitHub Actions workflow for the proxy.
func ciRecipe(t *testing.T) (workflow, string) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### In CI\n")
	if !ok {
		t.Fatal("README.md has no section In CI")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("In CI holds no yaml block")
	}
	var w workflow
	if err := yaml.Unmarshal([]byte(m[1]), &w); err != nil {
		t.Fatalf("the workflow is not YAML: %v", err)
	}
	return w, m[1]
}

// TestCIRecipe checks the README's GitHub Actions workflow for the proxy as
// far as it can be without GitHub: one run at a time on the shared
// backend, the permission the checks view needs, current action majors,
// reports kept and shown even when the tests fail, and only flags and
// variables the mock has. Then it runs the workflow's script, with bash -e
// as GitHub does and a stand-in for npm, against a mock as the backend.
func TestCIRecipe(t *testing.T) {
	w, _ := ciRecipe(t)
	if w.Concurrency.Group == "" || w.Concurrency.CancelInProgress == nil || *w.Concurrency.CancelInProgress {
		t.Errorf("concurrency = %+v; want a group, cancel-in-progress: false", w.Concurrency)
	}
	if w.Permissions["checks"] != "write" || w.Permissions["contents"] != "read" {
		t.Errorf("permissions = %v; want checks: write (the checks view) and contents: read (checkout)", w.Permissions)
	}
	if len(w.Jobs) != 1 {
		t.Fatalf("%d jobs; want one", len(w.Jobs))
	}
	var script, junit string
	var env map[string]string
	used := map[string]bool{}
	for _, job := range w.Jobs {
		for _, step := range job.Steps {
			if step.Uses != "" {
				action, ref, _ := strings.Cut(step.Uses, "@")
				major, err := strconv.Atoi(strings.TrimPrefix(ref, "v"))
				if min, ok := minMajors[action]; !ok || err != nil || major < min {
					t.Errorf("uses %s; want one of %v at its current major or later", step.Uses, minMajors)
				}
				used[action] = true
				if action != "actions/checkout" && action != "actions/setup-go" && !strings.Contains(step.If, "!cancelled()") && !strings.Contains(step.If, "always()") {
					t.Errorf("%s runs only when the tests pass (if: %q); want it after a failure too", action, step.If)
				}
			}
			if strings.Contains(step.Run, "./inventory-mock --") {
				script, env = step.Run, step.Env
			}
			if strings.HasPrefix(step.Uses, "mikepenz/action-junit-report@") {
				junit = step.With["report_paths"]
				if step.With["check_name"] == "" {
					t.Error("the JUnit report has no check_name")
				}
			}
		}
	}
	for action := range minMajors {
		if !used[action] {
			t.Errorf("the workflow does not use %s", action)
		}
	}
	if script == "" {
		t.Fatal("no step runs ./inventory-mock")
	}
	if junit == "" || !strings.Contains(script, "--junit-report "+junit) {
		t.Errorf("the JUnit step reads %q, which the proxy does not write", junit)
	}
	// Only flags and variables the mock has.
	fs := newParser(&options{})
	for _, m := range regexp.MustCompile(`(?m)\s--([a-z][a-z-]*)`).FindAllStringSubmatch(script, -1) {
		if !fs.Has(m[1]) {
			t.Errorf("the script passes --%s, which inventory-mock does not have", m[1])
		}
	}
	for k := range env {
		known := false
		for _, name := range fs.Names() {
			known = known || envName(name) == k
		}
		if strings.HasPrefix(k, "INVENTORY_MOCK_") && !known {
			t.Errorf("env %s is no variable of inventory-mock", k)
		}
	}
	if testing.Short() {
		return
	}
	runCIScript(t, script)
}

// runCIScript runs the workflow's script in a work directory holding the
// mock built as the Dockerfile builds it, on a free port instead of 8181,
// with an npm that sends the requests a case asks for, in front of a mock
// serving as the backend.
func runCIScript(t *testing.T, script string) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		missing(t, "INVENTORY_REQUIRE_CURL", "curl is not installed: the script uses it")
	}
	bin := buildAsDockerfile(t, "v-ci")
	backend, _ := start(t, nil, env(nil), &bytes.Buffer{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	script = strings.ReplaceAll(script, "127.0.0.1:8181", "127.0.0.1:"+port)

	// npm run test:e2e stands for the frontend's tests: it sends the
	// requests in $E2E_REQUESTS (curl arguments, one request a line) to
	// $API_BASE_URL, then exits with $E2E_STATUS.
	tools := t.TempDir()
	npm := `#!/bin/sh
printf '%s\n' "$E2E_REQUESTS" | while read -r method path body; do
  [ -n "$method" ] || continue
  curl -s -o /dev/null -X "$method" -H 'Authorization: Bearer inventory-dev-key' \
    -H 'Content-Type: application/json' ${body:+--data "$body"} "$API_BASE_URL$path"
done
exit "${E2E_STATUS:-0}"
`
	if err := os.WriteFile(filepath.Join(tools, "npm"), []byte(npm), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		requests string
		e2e      int
		apiKeys  string
		status   int
		reports  bool // the JUnit report is written
	}{
		{"tests pass, traffic keeps the contract", "GET /inventory\nPATCH /inventory/3 {\"quantity\":4}", 0, "k-ci", 0, true},
		{"tests fail", "GET /inventory", 3, "k-ci", 3, true},
		{"tests pass, traffic breaks the contract", "PATCH /inventory/3 {\"quantity\":\"many\"}", 0, "k-ci", 1, true},
		{"the key's secret did not arrive", "GET /inventory", 0, "", 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := t.TempDir()
			if err := os.Symlink(bin, filepath.Join(work, "inventory-mock")); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			// GitHub runs a run: step with bash --noprofile --norc -eo pipefail.
			cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
			cmd.Dir = work
			// The script and what it starts in a process group of their own,
			// killed at the end: a script that ends early must not leave its
			// proxy running.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			cmd.WaitDelay = 5 * time.Second
			cmd.Env = append(os.Environ(),
				"PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH"),
				"INVENTORY_MOCK_PROXY_TO=http://"+backend+"/v1",
				"INVENTORY_MOCK_API_KEYS="+tt.apiKeys,
				"INVENTORY_MOCK_ADMIN_KEY=adm-ci",
				"E2E_REQUESTS="+tt.requests,
				fmt.Sprintf("E2E_STATUS=%d", tt.e2e),
				"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+filepath.Join(work, "summary.md"))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Start()
			if err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			if syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) == nil {
				t.Errorf("the script left a process running (the proxy?):\n%s", &out)
			}
			if ctx.Err() != nil {
				t.Fatalf("the script did not end in 60 s:\n%s", &out)
			}
			status := processStatus(t, err)
			if status != tt.status {
				t.Errorf("exit status = %d; want %d\n%s", status, tt.status, &out)
			}
			_, err = os.Stat(filepath.Join(work, "reports/contract-proxy.xml"))
			if tt.reports != (err == nil) {
				t.Errorf("reports/contract-proxy.xml written = %v; want %v\n%s", err == nil, tt.reports, &out)
			}
			summary, _ := os.ReadFile(filepath.Join(work, "summary.md"))
			if tt.reports != bytes.Contains(summary, []byte("### ")) || tt.reports && !bytes.Contains(summary, []byte("Coverage: ")) {
				t.Errorf("the job summary = %q; want the proxy's Markdown summary, with its coverage, where it writes reports", summary)
			}
			// The tests that fail exercise too little; the traffic that
			// breaks the contract breaks a rule.
			if want := tt.status != 0 && tt.reports; want != strings.Contains(out.String(), "::error title=") {
				t.Errorf("exit %d, error annotations %v; want %v:\n%s", tt.status, !want, want, &out)
			}
			if strings.Contains(out.String(), "k-ci") || strings.Contains(out.String(), "adm-ci") {
				t.Errorf("the output holds a key:\n%s", &out)
			}
		})
	}
}

// TestCIShellRecipeStops runs the README's shell recipe for CI with a
// secret that did not arrive, so the proxy refuses to start: the script
// must end with status 2 at once, not wait for /healthz forever.
func TestCIShellRecipeStops(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		missing(t, "INVENTORY_REQUIRE_CURL", "curl is not installed: the script uses it")
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n### In CI\n")
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("In CI holds no sh block")
	}
	script := regexp.MustCompile(`(?m)^go build .*$`).ReplaceAllString(m[1], "")
	if !strings.Contains(script, "kill -0") {
		t.Errorf("the recipe's wait has no kill -0 guard:\n%s", script)
	}
	work := t.TempDir()
	if err := os.Symlink(buildAsDockerfile(t, "v-ci"), filepath.Join(work, "inventory-mock")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = work
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = append(os.Environ(), "STAGING_URL=http://127.0.0.1:1/v1", "STAGING_API_KEY=", "PROXY_ADMIN_KEY=adm")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the script still waited after 30 s for a proxy that refused to start:\n%s", out)
	}
	if status := processStatus(t, err); status != 2 || !strings.Contains(string(out), "an empty API key") {
		t.Errorf("exit status %d; want 2, after the proxy's message:\n%s", status, out)
	}
}

// TestActionVersionsAgree checks that the GitHub Actions recipes of
// README.md and conformance/README.md pin the same version of each action.
func TestActionVersionsAgree(t *testing.T) {
	uses := regexp.MustCompile(`uses: ([\w.-]+/[\w.-]+)@(\S+)`)
	seen := map[string]string{} // action: "version (file)"
	for _, file := range []string{"README.md", "conformance/README.md"} {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range uses.FindAllStringSubmatch(string(b), -1) {
			v, ok := seen[m[1]]
			switch {
			case !ok:
				seen[m[1]] = m[2] + " (" + file + ")"
			case !strings.HasPrefix(v, m[2]+" "):
				t.Errorf("%s uses %s@%s; another recipe pins %s", file, m[1], m[2], v)
			}
		}
	}
	if len(seen) == 0 {
		t.Error("no recipe uses an action")
	}
}

// readmeLineBudget is the most lines the top README may have: it is a
// newcomer's page, and the reference lives in the READMEs of the packages.
const readmeLineBudget = 400

// TestReadmeLineBudget keeps the top README within its budget.
func TestReadmeLineBudget(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > readmeLineBudget {
		t.Errorf("README.md has %d lines; want at most %d: move reference to the README of the package it describes and link it", n, readmeLineBudget)
	}
}

// TestReadmeQuickStart runs the top README's commands from its text, as a
// newcomer pastes them: the mock command of its first block, then, against
// that mock on a free port, every curl line of its sh blocks (each must exit
// 0 with the status its comment gives, such as "# 404: ..."), the
// dashboard's address, and the conformance command (its comment gives the
// exit status, such as "# exit 0"). The recipes under In CI are left to
// TestCIRecipe and TestCIShellRecipeStops. Assignments (K=..., export ...)
// carry from line to line and block to block, as in one terminal.
func TestReadmeQuickStart(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	blocks := shBlocks(readme)
	if len(blocks) == 0 {
		t.Fatal("README.md holds no sh block")
	}
	first := blocks[0]
	if len(first) < 2 || !strings.HasPrefix(first[0].cmd, "go run ./cmd/inventory-mock") || first[1].cmd != "go test -race ./..." {
		t.Fatalf("the README's first block is %q; want the mock's go run command, then go test -race ./...", first)
	}
	mockArgs := strings.Fields(strings.TrimPrefix(first[0].cmd, "go run ./cmd/inventory-mock"))

	// Every inventory-mock command of the README names only flags it has.
	fs := newParser(&options{})
	mockCmd := regexp.MustCompile(`(^|\s)(go run \./cmd/|\./)?inventory-mock\s`)
	for _, block := range blocks {
		for _, l := range block {
			if !mockCmd.MatchString(l.cmd) {
				continue
			}
			for _, m := range regexp.MustCompile(`(?:^|\s)--([a-z][a-z-]*)`).FindAllStringSubmatch(l.cmd, -1) {
				if !fs.Has(m[1]) {
					t.Errorf("the README runs %q; inventory-mock has no --%s", l.cmd, m[1])
				}
			}
		}
	}

	// The commands that address the mock, outside In CI.
	notCI := readme
	if before, after, ok := strings.Cut(notCI, "\n### In CI\n"); ok {
		_, rest, _ := strings.Cut(after, "\n## ")
		notCI = before + "\n## " + rest
	}
	var curls, conformance []line
	var prelude []string
	assign := regexp.MustCompile(`^(export\s+)?[A-Za-z_][A-Za-z0-9_]*=`)
	for _, block := range shBlocks(notCI) {
		for _, l := range block {
			switch {
			case assign.MatchString(l.cmd):
				prelude = append(prelude, l.cmd)
			case strings.HasPrefix(l.cmd, "curl "):
				l.prelude = slices.Clone(prelude)
				curls = append(curls, l)
			case strings.Contains(l.cmd, "inventory-conformance --base-url http://127.0.0.1:8080/v1"):
				l.prelude = slices.Clone(prelude)
				conformance = append(conformance, l)
			}
		}
	}
	if len(curls) < 5 {
		t.Errorf("the README has %d curl lines for the mock; want the quick start's", len(curls))
	}
	if len(conformance) == 0 {
		t.Error("the README has no inventory-conformance --base-url http://127.0.0.1:8080/v1 command")
	}
	const dashboard = "http://127.0.0.1:8080/__admin/"
	if !strings.Contains(readme, "<"+dashboard+">") {
		t.Errorf("the README does not link the dashboard, <%s>", dashboard)
	}
	if testing.Short() {
		t.Skip("starts the mock and builds inventory-conformance")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		missing(t, "INVENTORY_REQUIRE_CURL", "curl is not installed: the README's commands use it")
	}

	var logs syncBuffer
	addr, _ := start(t, mockArgs, env(nil), &logs)
	defer func() {
		if t.Failed() {
			t.Logf("the mock's log:\n%s", logs.String())
		}
	}()
	// sh runs a line as a terminal would, after the assignments before it,
	// in an environment without the developer's INVENTORY_* settings.
	environ := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "INVENTORY_") })
	sh := func(l line, cmd string) (string, int) {
		t.Helper()
		script := strings.ReplaceAll(strings.Join(append(l.prelude, cmd), "\n"), "127.0.0.1:8080", addr)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, "sh", "-c", script)
		c.Dir, c.Env = t.TempDir(), environ
		var out, stderr bytes.Buffer
		c.Stdout, c.Stderr = &out, &stderr
		err := c.Run()
		if ctx.Err() != nil {
			t.Fatalf("%s did not end in 2 minutes", l.cmd)
		}
		status := processStatus(t, err)
		if status != 0 {
			out.WriteString(stderr.String())
		}
		return out.String(), status
	}
	wantStatus := regexp.MustCompile(`^(\d{3})\b`)
	for _, l := range curls {
		m := wantStatus.FindStringSubmatch(l.comment)
		if m == nil {
			t.Errorf("%s: its comment %q does not start with the status it answers", l.cmd, l.comment)
			continue
		}
		out, status := sh(l, "curl -sS -o /dev/null -w '%{http_code}' "+strings.TrimPrefix(l.cmd, "curl "))
		if status != 0 || out != m[1] {
			t.Errorf("%s\n  exit status %d, answered %q; want exit 0 and %s, as the README says", l.cmd, status, out, m[1])
		}
	}
	resp, err := http.Get(strings.ReplaceAll(dashboard, "127.0.0.1:8080", addr))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET %s = %d %s; want the dashboard's page", dashboard, resp.StatusCode, resp.Header.Get("Content-Type"))
	}

	bin := buildAsDockerfileCmd(t, "", "inventory-conformance")
	command := regexp.MustCompile(`^(go run \./cmd/|\./)?inventory-conformance\b`)
	wantExit := regexp.MustCompile(`^exit (\d)\b`)
	for _, l := range conformance {
		m := wantExit.FindStringSubmatch(l.comment)
		if m == nil || !command.MatchString(l.cmd) {
			t.Errorf("%s: want a command starting inventory-conformance, go run ./cmd/inventory-conformance or ./inventory-conformance, commented with its exit status (# exit 0: ...)", l.cmd)
			continue
		}
		out, status := sh(l, command.ReplaceAllString(l.cmd, bin))
		if strconv.Itoa(status) != m[1] {
			t.Errorf("%s\n  exit status %d; want %s, as the README says:\n%s", l.cmd, status, m[1], out)
		}
	}
}

// A line is one command of a README's sh block: continuation lines joined,
// its comment apart, and the assignments before it.
type line struct {
	cmd, comment string
	prelude      []string
}

// shBlocks returns the commands of each sh block of a Markdown document.
func shBlocks(doc string) [][]line {
	var blocks [][]line
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(doc, -1) {
		var block []line
		joined := strings.ReplaceAll(m[1], "\\\n", " ")
		for _, text := range strings.Split(joined, "\n") {
			cmd, comment := splitComment(text)
			if cmd != "" {
				block = append(block, line{cmd: cmd, comment: comment})
			}
		}
		blocks = append(blocks, block)
	}
	return blocks
}

// splitComment splits a shell line at the # that starts its comment: one
// outside quotes, at the start or after a space.
func splitComment(text string) (cmd, comment string) {
	var quote rune
	for i, r := range text {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || text[i-1] == ' ' || text[i-1] == '\t'):
			return strings.TrimSpace(text[:i]), strings.TrimSpace(text[i+1:])
		}
	}
	return strings.TrimSpace(text), ""
}

// TestReadmeLinks checks every relative link of every README.md: the file
// it names exists, and so does the heading its #anchor names (as GitHub
// makes anchors of headings).
func TestReadmeLinks(t *testing.T) {
	anchors := map[string][]string{} // file: its headings' anchors
	headings := func(file string) []string {
		if a, ok := anchors[file]; ok {
			return a
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		var a []string
		fence := false
		for _, text := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(text, "```") {
				fence = !fence
			}
			m := regexp.MustCompile(`^#{1,6} (.*)$`).FindStringSubmatch(text)
			if fence || m == nil {
				continue
			}
			slug := strings.Map(func(r rune) rune {
				switch {
				case r == ' ':
					return '-'
				case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
					return unicode.ToLower(r)
				}
				return -1
			}, strings.TrimSpace(m[1]))
			if n := seen[slug]; n > 0 {
				a = append(a, fmt.Sprintf("%s-%d", slug, n))
			} else {
				a = append(a, slug)
			}
			seen[slug]++
		}
		anchors[file] = a
		return a
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	err := filepath.WalkDir(root, func(file string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "README.md" {
			return nil
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		fence := false
		for _, text := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(text, "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(text, -1) {
				target, anchor, _ := strings.Cut(m[1], "#")
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				to := file
				if target != "" {
					to = filepath.Join(filepath.Dir(file), target)
				}
				if _, err := os.Stat(to); err != nil {
					t.Errorf("%s links %s, which does not exist", file, m[1])
					continue
				}
				if anchor != "" && strings.HasSuffix(to, ".md") && !slices.Contains(headings(to), anchor) {
					t.Errorf("%s links %s: %s has no heading with the anchor #%s", file, m[1], to, anchor)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
