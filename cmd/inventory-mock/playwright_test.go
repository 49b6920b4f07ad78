package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/mockserver/dashboard/chromiumtest"
)

// requireNodeEnv, when set (as .ci/run sets it), makes a missing Node.js
// a test failure rather than a skip.
const requireNodeEnv = "INVENTORY_REQUIRE_NODE"

// TestPlaywright runs the Playwright example of testdata/playwright: eight
// tests in eight parallel workers against one mock run with
// --require-session, each in a session of its own chosen by the
// mock-session cookie, from a page on another origin (the app server
// below) that fetches with credentials: 'include', allowed by
// --cors-origin. Each test writes the same pet and forces a fault for its
// own session, and asserts only its own values. It needs Node.js and npm
// (npm ci fetches @playwright/test, which downloads no browser) and
// Debian's Chromium; it skips without them, and fails under
// INVENTORY_REQUIRE_NODE or INVENTORY_REQUIRE_CHROMIUM.
func TestPlaywright(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Playwright example starts eight browsers")
	}
	npx := lookNode(t)
	chromium := chromiumtest.Path(t)
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "playwright"))
	if err != nil {
		t.Fatal(err)
	}
	installed := filepath.Join(dir, "node_modules", "@playwright", "test", "package.json")
	if _, err := os.Stat(installed); err != nil {
		// .ci/run installs it first; a developer's first run does it here.
		npmCI(t, dir)
	}

	app := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(app.Close)
	addr, stop := start(t, []string{"--require-session", "--cors-origin", app.URL, "--journal-size", "50"}, env(nil), io.Discard)
	t.Cleanup(func() { stop() })

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npx, "playwright", "test", "--workers", "8")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"MOCK_URL=http://"+addr, "APP_URL="+app.URL, "MOCK_API_KEY=inventory-dev-key",
		"CHROMIUM="+chromium, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "CI=1",
		chromiumtest.TempEnv(t))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("npx playwright test --workers 8:\n%s", out.String())
	if err != nil {
		t.Fatalf("the Playwright example failed: %v", err)
	}
	if !strings.Contains(out.String(), "8 passed") {
		t.Errorf("want 8 passed tests in the output")
	}
}

// lookNode returns the path of npx, or skips the test where Node.js is
// missing (fails under INVENTORY_REQUIRE_NODE or CI=true).
func lookNode(t *testing.T) string {
	t.Helper()
	npx, err := exec.LookPath("npx")
	if err == nil {
		if _, err = exec.LookPath("node"); err == nil {
			return npx
		}
	}
	msg := "no node and npx on PATH: the Playwright example needs Node.js (apt-get install nodejs npm)"
	if os.Getenv(requireNodeEnv) != "" || os.Getenv("CI") == "true" {
		t.Fatalf("%s, and $%s or $CI is set", msg, requireNodeEnv)
	}
	t.Skip(msg)
	return ""
}

// npmCI installs the example's packages from its package-lock.json, with
// no browser download.
func npmCI(t *testing.T, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--prefer-offline")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}
