//go:build unix

package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pb33f/go-yaml"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// compositeAction is what TestAction reads of conformance/action.yml.
type compositeAction struct {
	Inputs map[string]struct {
		Description string
		Required    bool
		Default     string
	}
	Outputs map[string]struct {
		Description string
		Value       string
	}
	Runs struct {
		Using string
		Steps []struct {
			Name, ID, Shell, Run, If string
			Env                      map[string]string
		}
	}
}

// readAction reads conformance/action.yml and checks its shape: a
// composite action whose inputs and outputs are the documented ones, each
// described, whose steps run bash and put no expression in a script's
// text (an input reaches a script only through its environment).
func readAction(t *testing.T) compositeAction {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "conformance/action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a compositeAction
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatalf("conformance/action.yml is not YAML: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using = %q; want composite", a.Runs.Using)
	}
	var inputs, outputs []string
	for name, in := range a.Inputs {
		inputs = append(inputs, name)
		if in.Description == "" {
			t.Errorf("input %s has no description", name)
		}
	}
	for name, out := range a.Outputs {
		outputs = append(outputs, name)
		if out.Description == "" {
			t.Errorf("output %s has no description", name)
		}
	}
	slices.Sort(inputs)
	slices.Sort(outputs)
	if want := []string{"allow-mutations", "api-key", "base-url", "min-coverage", "reports-dir", "spec", "version"}; !slices.Equal(inputs, want) {
		t.Errorf("inputs %v; want %v", inputs, want)
	}
	if want := []string{"coverage", "exit-code"}; !slices.Equal(outputs, want) {
		t.Errorf("outputs %v; want %v", outputs, want)
	}
	for _, s := range a.Runs.Steps {
		if s.Shell != "bash" || s.Run == "" {
			t.Errorf("step %q: shell %q; want a run step with shell bash", s.Name, s.Shell)
		}
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %q has an expression in its script; pass it through env", s.Name)
		}
		if s.If != "" {
			t.Errorf("step %q has an if, which this test does not evaluate", s.Name)
		}
	}
	return a
}

// An actionRun is what one run of the action left: the action's outputs,
// whether its steps all passed, what they printed, the job summary and
// the reports directory.
type actionRun struct {
	outputs map[string]string
	failed  bool
	out     string // stdout and stderr of every step
	summary string // $GITHUB_STEP_SUMMARY
	files   []string
	reports string // the reports-dir
}

// runAction runs the action's steps one after the other as a GitHub runner
// runs a composite action: each script with bash --noprofile --norc -eo
// pipefail, in the workspace, with the step's env (its expressions
// evaluated), a fresh $GITHUB_OUTPUT per step, one $GITHUB_STEP_SUMMARY
// for the job, and GITHUB_ACTIONS=true. A step that fails ends the run.
func runAction(t *testing.T, a compositeAction, with map[string]string, env ...string) actionRun {
	t.Helper()
	actionPath, err := filepath.Abs(filepath.Join(root, "conformance"))
	if err != nil {
		t.Fatal(err)
	}
	work, runnerTemp := t.TempDir(), t.TempDir()
	r := actionRun{outputs: map[string]string{}, summary: filepath.Join(runnerTemp, "step_summary.md")}
	steps := map[string]map[string]string{} // step id: its outputs
	expr := regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)
	eval := func(s string) string {
		return expr.ReplaceAllStringFunc(s, func(m string) string {
			e := expr.FindStringSubmatch(m)[1]
			switch {
			case strings.HasPrefix(e, "inputs."):
				name := strings.TrimPrefix(e, "inputs.")
				in, ok := a.Inputs[name]
				if !ok {
					t.Fatalf("the action reads inputs.%s, which it does not declare", name)
				}
				if v, ok := with[name]; ok {
					return v
				}
				if in.Required {
					t.Fatalf("input %s is required and the test gives none", name)
				}
				return in.Default
			case e == "github.action_path":
				return actionPath
			case e == "github.action_ref": // uses: ./conformance, a path, has none
				return ""
			case e == "github.action_repository":
				return "petstore/inventory-kit"
			case strings.HasPrefix(e, "steps."):
				f := strings.Split(e, ".")
				if len(f) != 4 || f[2] != "outputs" {
					t.Fatalf("expression %q: want steps.ID.outputs.NAME", e)
				}
				return steps[f[1]][f[3]]
			}
			t.Fatalf("the action uses the expression %q, which this test does not know", e)
			return ""
		})
	}
	// The runner's environment: no INVENTORY_ or GITHUB_ settings of the
	// developer's.
	base := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "INVENTORY_") || strings.HasPrefix(kv, "GITHUB_") || strings.HasPrefix(kv, "RUNNER_")
	})
	base = append(base, "GITHUB_ACTIONS=true", "GITHUB_WORKSPACE="+work, "GITHUB_STEP_SUMMARY="+r.summary,
		"RUNNER_TEMP="+runnerTemp, "RUNNER_OS=Linux", "RUNNER_ARCH=X64")
	base = append(base, env...)
	var out bytes.Buffer
	for i, s := range a.Runs.Steps {
		output := filepath.Join(runnerTemp, "output_"+strconv.Itoa(i))
		if err := os.WriteFile(output, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(runnerTemp, "step_"+strconv.Itoa(i)+".sh")
		if err := os.WriteFile(script, []byte(s.Run), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = work
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.Env = append(slices.Clone(base), "GITHUB_OUTPUT="+output)
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+eval(v))
		}
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("step %q did not end in 3 minutes:\n%s", s.Name, &out)
		}
		b, rerr := os.ReadFile(output)
		if rerr != nil {
			t.Fatal(rerr)
		}
		steps[s.ID] = map[string]string{}
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if l == "" {
				continue
			}
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				t.Fatalf("step %q wrote %q to $GITHUB_OUTPUT; want NAME=VALUE lines", s.Name, l)
			}
			steps[s.ID][k] = v
		}
		if err != nil {
			processStatus(t, err) // a step that could not start fails the test
			r.failed = true
			break
		}
	}
	for name, o := range a.Outputs {
		r.outputs[name] = eval(o.Value)
	}
	r.out = out.String()
	if b, err := os.ReadFile(r.summary); err == nil {
		r.summary = string(b)
	} else {
		r.summary = ""
	}
	r.reports = filepath.Join(work, with["reports-dir"])
	if with["reports-dir"] == "" {
		r.reports = filepath.Join(work, a.Inputs["reports-dir"].Default)
	}
	entries, _ := os.ReadDir(r.reports)
	for _, e := range entries {
		r.files = append(r.files, e.Name())
	}
	return r
}

// processStatus returns the exit status of a child that Run returned err
// for; a child that could not run fails the test.
func processStatus(t *testing.T, err error) int {
	t.Helper()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// TestAction runs conformance/action.yml's steps with bash, as a runner
// runs a composite action, with version source (no release can be
// downloaded here) against a mock, and checks the outputs, the job
// summary, the annotations and the reports, and that the key shows
// nowhere: not in what the steps print (but the ::add-mask:: command,
// which the runner consumes), the outputs, the summary or a report.
func TestAction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds inventory-conformance and runs it")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	a := readAction(t)
	url, _ := newMock(t, nil)
	reportFiles := []string{"conformance.html", "conformance.json", "conformance.md", "conformance.xml"}
	tests := []struct {
		name     string
		with     map[string]string
		exit     string
		coverage bool     // a coverage figure
		files    []string // in the reports directory
		out      []string // in what the steps print
	}{
		{"passes, with writes", map[string]string{"base-url": url, "api-key": testKey, "allow-mutations": "true", "reports-dir": "out/reports"},
			"0", true, reportFiles, []string{"inventory-conformance "}},
		{"coverage below the gate", map[string]string{"base-url": url, "api-key": testKey, "min-coverage": "90"},
			"1", true, reportFiles, []string{"::error title=", "below --min-coverage 90"}},
		{"the key is refused", map[string]string{"base-url": url, "api-key": "not-the-key-5d2e9a7c"},
			"2", false, reportFiles, nil},
		{"the secret did not arrive", map[string]string{"base-url": url, "api-key": ""},
			"2", false, nil, []string{"::error title=inventory-conformance::the api-key input is empty"}},
		{"allow-mutations neither true nor false", map[string]string{"base-url": url, "api-key": testKey, "allow-mutations": "yes"},
			"2", false, nil, []string{`allow-mutations is "yes"; want true or false`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAction(t, a, tt.with)
			if r.outputs["exit-code"] != tt.exit || r.failed != (tt.exit != "0") {
				t.Errorf("exit-code = %q, the step failed: %v; want %s, %v\n%s", r.outputs["exit-code"], r.failed, tt.exit, tt.exit != "0", r.out)
			}
			cov, err := strconv.ParseFloat(r.outputs["coverage"], 64)
			if tt.coverage != (err == nil && cov > 0 && cov <= 100) || !tt.coverage && r.outputs["coverage"] != "" {
				t.Errorf("coverage = %q; want a percentage: %v", r.outputs["coverage"], tt.coverage)
			}
			if tt.coverage && !strings.Contains(r.summary, "#### Coverage: "+r.outputs["coverage"]+"%") {
				t.Errorf("the job summary does not give the coverage output, %s%%:\n%.2000s", r.outputs["coverage"], r.summary)
			}
			if slices.Equal(tt.files, reportFiles) && !strings.HasPrefix(r.summary, "### ") {
				t.Errorf("the job summary = %.300q; want the suite's Markdown summary", r.summary)
			}
			if !slices.Equal(r.files, tt.files) {
				t.Errorf("reports %v; want %v", r.files, tt.files)
			}
			for _, want := range tt.out {
				if !strings.Contains(r.out, want) {
					t.Errorf("the steps printed no %q:\n%s", want, r.out)
				}
			}
			key := tt.with["api-key"]
			if key == "" {
				return
			}
			masked := 0
			for _, l := range strings.Split(r.out, "\n") {
				if l == "::add-mask::"+key {
					masked++
				} else if strings.Contains(l, key) {
					t.Errorf("a step printed the key: %q", l)
				}
			}
			if masked != 1 {
				t.Errorf("::add-mask:: of the key printed %d times; want once, before the run", masked)
			}
			if strings.Contains(r.summary, key) || strings.Contains(r.outputs["coverage"], key) {
				t.Error("the job summary or an output holds the key")
			}
			for _, f := range r.files {
				if b, _ := os.ReadFile(filepath.Join(r.reports, f)); bytes.Contains(b, []byte(key)) {
					t.Errorf("%s holds the key", f)
				}
			}
		})
	}
}

// TestActionRelease runs the action's install the way a user's workflow
// does, with a release tag: it downloads the linux/amd64 archive and
// checksums.txt from a release server (an httptest server in place of
// github.com, GITHUB_SERVER_URL pointing at it, serving the snapshot
// release .ci/run builds into $INVENTORY_RELEASE_DIST), checks the
// checksum, and runs the suite against a mock. An archive that does not
// match its checksum, a release without the archive and a tag that is no
// release each stop the step with exit 2 and say why, before anything
// runs. Without $INVENTORY_RELEASE_DIST it skips;
// INVENTORY_REQUIRE_GORELEASER=1 makes that a failure.
func TestActionRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a release's binary")
	}
	dist := os.Getenv("INVENTORY_RELEASE_DIST")
	if dist == "" {
		why := "no release to download: set INVENTORY_RELEASE_DIST to a goreleaser dist (.ci/run builds one with goreleaser release --snapshot)"
		if os.Getenv("INVENTORY_REQUIRE_GORELEASER") != "" {
			t.Fatal(why + ", and INVENTORY_REQUIRE_GORELEASER is set")
		}
		t.Skip(why)
	}
	for _, tool := range []string{"bash", "curl", "tar", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	archives, _ := filepath.Glob(filepath.Join(dist, "inventory-conformance_*_linux_amd64.tar.gz"))
	if len(archives) != 1 {
		t.Fatalf("%s holds %d linux/amd64 archives of inventory-conformance; want 1", dist, len(archives))
	}
	name := filepath.Base(archives[0])
	version := strings.TrimSuffix(strings.TrimPrefix(name, "inventory-conformance_"), "_linux_amd64.tar.gz")
	tag := "v" + version
	archive, err := os.ReadFile(archives[0])
	if err != nil {
		t.Fatal(err)
	}
	checksums, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}

	a := readAction(t)
	url, _ := newMock(t, nil)
	tests := []struct {
		name  string
		tag   string
		files map[string][]byte // the release's files, by name
		exit  string
		out   []string
	}{
		{"the release's archive", tag, map[string][]byte{name: archive, "checksums.txt": checksums},
			"0", []string{"Downloading http://", "/petstore/inventory-kit/releases/download/" + tag + "/" + name, name + ": OK", "inventory-conformance " + version}},
		{"an archive that is not the one released", tag, map[string][]byte{name: append(slices.Clone(archive), 0), "checksums.txt": checksums},
			"", []string{name + " does not match its checksum in checksums.txt"}},
		{"a release without the runner's archive", tag, map[string][]byte{name: archive, "checksums.txt": []byte("0123 other.tar.gz\n")},
			"", []string{"checksums.txt of " + tag + " lists no " + name}},
		{"a tag that is no release", "v0.0.0-none", map[string][]byte{},
			"", []string{"could not download", "is v0.0.0-none a release?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := "/petstore/inventory-kit/releases/download/" + tt.tag + "/"
			var asked []string
			var mu sync.Mutex
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				asked = append(asked, r.URL.Path)
				mu.Unlock()
				b, ok := tt.files[strings.TrimPrefix(r.URL.Path, prefix)]
				if !ok || !strings.HasPrefix(r.URL.Path, prefix) {
					http.NotFound(w, r)
					return
				}
				w.Write(b)
			}))
			defer srv.Close()
			r := runAction(t, a, map[string]string{"base-url": url, "api-key": testKey, "version": tt.tag},
				"GITHUB_SERVER_URL="+srv.URL)
			if tt.exit == "0" {
				if r.failed || r.outputs["exit-code"] != "0" {
					t.Errorf("exit-code = %q, failed %v; want 0\n%s", r.outputs["exit-code"], r.failed, r.out)
				}
			} else if !r.failed || r.outputs["exit-code"] != "" {
				t.Errorf("the install step passed (exit-code %q); want it to stop the action\n%s", r.outputs["exit-code"], r.out)
			} else if strings.Contains(r.out, "Running Suite") || len(r.files) > 0 {
				t.Errorf("the suite ran after a failed install:\n%s", r.out)
			}
			for _, want := range tt.out {
				if !strings.Contains(r.out, want) {
					t.Errorf("the steps printed no %q:\n%s", want, r.out)
				}
			}
			if tt.exit != "0" && !strings.Contains(r.out, "::error title=inventory-conformance::") {
				t.Errorf("a failed install printed no ::error annotation:\n%s", r.out)
			}
			if len(asked) == 0 {
				t.Error("the install asked the release server for nothing")
			}
		})
	}
}
