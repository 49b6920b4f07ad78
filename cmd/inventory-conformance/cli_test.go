package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

// TestHelpToStdout: --help goes to stdout with exit 0, and names every
// flag with the double dash.
func TestHelpToStdout(t *testing.T) {
	code, out, errOut := runInProcess([]string{"--help"}, nil)
	if code != cli.ExitOK || errOut != "" {
		t.Errorf("--help: exit %d, stderr %q; want 0 and nothing on stderr", code, errOut)
	}
	for _, want := range []string{"--spec FILE", "--strict", "--explore-steps N", "--seed N", "--list", "--max-response-bytes SIZE", "--max-run-bytes SIZE", "--max-retry-wait DURATION", "--version", "Exit status"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// TestBadFlagOneLine: a bad flag is one line on stderr with a hint, not
// the usage.
func TestBadFlagOneLine(t *testing.T) {
	for _, args := range [][]string{{"--nope"}, {"--timeout", "soon"}, {"--max-run-bytes", "lots"}, {"-pet-id", "x"}} {
		code, out, errOut := runInProcess(args, nil)
		if code != cli.ExitCannotRun || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "see --help") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line with a hint", args, code, out, errOut)
		}
		// The flag is named as --help names it, never with Go's one dash.
		name := strings.TrimLeft(args[0], "-")
		if !strings.Contains(errOut, "--"+name) || strings.Contains(strings.ReplaceAll(errOut, "--"+name, ""), "-"+name) {
			t.Errorf("%v: stderr %q; want the flag named --%s", args, errOut, name)
		}
	}
}

// TestVersion: --version says what cli.Version says, as the mock's does.
func TestVersion(t *testing.T) {
	code, out, _ := runInProcess([]string{"--version"}, nil)
	if want := "inventory-conformance " + cli.Version(version) + "\n"; code != cli.ExitOK || out != want || strings.Contains(out, "(devel)") {
		t.Errorf("--version: exit %d, %q; want 0 and %q", code, out, want)
	}
}

// TestList lists the checks of a variant without a target: a new
// operation brings its checks.
// --list runs nothing, so it leaves a report named on its command line
// as it was.
func TestList(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(junit, []byte("<earlier/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runChild(t, "--list", "--spec", "../../testdata/specs/get-one-record.yaml", "--junit-report", junit)
	if code != cli.ExitOK || !strings.Contains(out, "operations: getInventoryItem: with the key") || !strings.Contains(out, "[auth]") {
		t.Errorf("--list: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(junit); string(b) != "<earlier/>" {
		t.Errorf("--list wrote %s", b)
	}
}

// TestReadmeFlagTable: the flag table in conformance/README.md is the
// --help list, line for line.
func TestReadmeFlagTable(t *testing.T) {
	b, err := os.ReadFile("../../conformance/README.md")
	if err != nil {
		t.Fatal(err)
	}
	var table []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "| flag | meaning |"):
			in = true
		case in && strings.HasPrefix(l, "|---"):
		case in && strings.HasPrefix(l, "| `--"):
			table = append(table, l)
		case in:
			in = false
		}
	}
	var want []string
	for _, l := range helpLines(suiteParser(&options{})) {
		want = append(want, "| `"+l[0]+"` | "+strings.ReplaceAll(l[1], "|", `\|`)+" |")
	}
	if strings.Join(table, "\n") != strings.Join(want, "\n") {
		t.Errorf("conformance/README.md's flag table differs from --help; it should read:\n%s\n\nit reads:\n%s", strings.Join(want, "\n"), strings.Join(table, "\n"))
	}
}
