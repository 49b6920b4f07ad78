// Package chromiumtest finds the Chromium that browser tests drive: the
// dashboard's (mockserver/dashboard), the HTML report's
// (cmd/inventory-conformance) and the mock's CORS test (mockserver); Open
// gives the first two one tab that records what the page sent, threw and
// had refused. Where none is installed the test is skipped with a
// message, unless the environment variable RequireEnv is set, or CI is
// "true": there it fails, so that a broken install cannot pass as a skip.
// .ci/run installs Chromium and sets RequireEnv.
package chromiumtest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// RequireEnv, when set, makes a missing Chromium a test failure rather
// than a skip.
const RequireEnv = "INVENTORY_REQUIRE_CHROMIUM"

// names are the binaries looked for on PATH, in order.
var names = []string{"chromium", "chromium-browser", "google-chrome"}

// Path returns the path of a Chromium or Chrome binary on PATH. Where
// there is none it skips the test, or fails it where RequireEnv is set or
// CI is "true".
func Path(t testing.TB) string {
	t.Helper()
	path, required, err := find(exec.LookPath, os.Getenv)
	switch {
	case err == nil:
		return path
	case required:
		t.Fatal(err)
	default:
		t.Skip(err)
	}
	return ""
}

// find looks for a browser with lookPath, and tells from getenv whether a
// missing one is a failure. err says what is missing and why it matters.
func find(lookPath func(string) (string, error), getenv func(string) string) (path string, required bool, err error) {
	for _, name := range names {
		if p, err := lookPath(name); err == nil {
			return p, false, nil
		}
	}
	err = fmt.Errorf("no chromium, chromium-browser or google-chrome on PATH: the browser tests need one (apt-get install chromium; .ci/run installs it)")
	switch {
	case getenv(RequireEnv) != "":
		return "", true, fmt.Errorf("%w, and $%s is set", err, RequireEnv)
	case getenv("CI") == "true":
		return "", true, fmt.Errorf("%w, and $CI is true", err)
	}
	return "", false, err
}

// TempEnv returns the environment variable that gives one Chromium a
// temporary directory of the test's own: Chromium leaves a directory of
// its own in $TMPDIR (org.chromium.Chromium.*) at every start, which the
// test's cleanup then removes.
func TempEnv(t testing.TB) string {
	t.Helper()
	return "TMPDIR=" + t.TempDir()
}
