package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/mockserver/dashboard/chromiumtest"
)

// screenshotPath is the HTML report's picture in the README, written by
// TestHTMLReportInChromium when UPDATE_SCREENSHOT=1.
const screenshotPath = "../../spec/report/testdata/html-report.png"

// lostStatus is a mock that lists its third pet with a status the
// contract does not allow, and answers 401 without a challenge: a run
// fails on the records' schema and warns on the RFC.
func lostStatus(h http.Handler) http.Handler {
	return withoutChallenge(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/inventory" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var items []map[string]any
		if rec.Code == http.StatusOK && json.Unmarshal(body, &items) == nil && len(items) > 2 {
			items[2]["status"] = "lost"
			body, _ = json.Marshal(items)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(body)
	}))
}

// A browser is a report open in one headless Chromium
// (chromiumtest.Tab), started for one test.
type browser struct {
	*chromiumtest.Tab
	t *testing.T
}

// openBrowser starts Chromium at 1280x1000.
func openBrowser(t *testing.T) *browser {
	t.Helper()
	return &browser{Tab: chromiumtest.Open(t, 1280, 1000), t: t}
}

// visible returns the text the page shows: what a person reads, closed
// <details> left out.
func (b *browser) visible() string {
	b.t.Helper()
	var s string
	b.Eval(`document.body.innerText`, &s)
	return s
}

// open loads a report file and checks that the page sent no request but
// its own load, ran nothing, and that its policy refused nothing.
func (b *browser) open(path string) {
	b.t.Helper()
	b.Forget()
	abs, _ := filepath.Abs(path)
	b.Do(chromedp.Navigate("file://" + abs))
	if violations := b.Violations(); len(violations) > 0 {
		b.t.Errorf("%s: the Content-Security-Policy refused %v", filepath.Base(path), violations)
	}
	if exceptions := b.Exceptions(); len(exceptions) > 0 {
		b.t.Errorf("%s: scripts threw %v", filepath.Base(path), exceptions)
	}
	for _, r := range b.Requests() {
		if r.URL != "file://"+abs {
			b.t.Errorf("%s: the page sent a request: %s", filepath.Base(path), r.URL)
		}
	}
}

// TestHTMLReportInChromium opens the HTML reports of a failing suite run
// and of a HAR check in headless Chromium, from their files, as a person
// does: each shows its verdict and its failures by cause, the first
// failure of each cause open with its curl line, which a click folds
// and unfolds; the page sends no request but its own load and runs nothing.
// With UPDATE_SCREENSHOT=1 it writes the README's picture of the suite's.
func TestHTMLReportInChromium(t *testing.T) {
	b := openBrowser(t)
	url, _ := newMock(t, lostStatus)
	dir := t.TempDir()
	suite := filepath.Join(dir, "suite.html")
	code, out := runChild(t, "--base-url", url, "--allow-mutations", "--explore-steps", "30", "--seed", "4", "--html-report", suite, "--min-coverage", "80")
	if code != cli.ExitFailed {
		t.Fatalf("exit %d; want 1\n%s", code, out)
	}
	b.open(suite)
	text := b.visible()
	for _, want := range []string{"Pet Store Inventory conformance", "failed", "Failures by cause", "response-body-schema",
		"THE CONTRACT WANTS", "curl -sS -i '" + url + "/inventory'", "$INVENTORY_API_KEY", `"lost"`, "Warnings", "RFC 9110 section 11.6.1", "Coverage:", "not exercised"} {
		if !strings.Contains(text, want) {
			t.Errorf("the suite's page does not show %q:\n%.3000s", want, text)
		}
	}
	if strings.Contains(text, testKey) {
		t.Error("the page shows the key")
	}
	// A failure folds and unfolds: one whose request shows a curl line,
	// clicked, hides that line, and clicked again shows it.
	var title string
	b.Eval(`(() => {
		const d = [...document.querySelectorAll('#failures details.failure[open]')].find(d => d.textContent.includes('curl -sS -i '));
		if (!d) return '';
		d.id = 'with-curl';
		return d.querySelector('summary').innerText;
	})()`, &title)
	if title == "" {
		t.Fatal("no open failure in the failures section shows a curl line")
	}
	before := strings.Count(text, "curl -sS -i ")
	b.Do(chromedp.Click(chromedp.CSS(`#with-curl > summary`)))
	if folded := strings.Count(b.visible(), "curl -sS -i "); folded != before-1 {
		t.Errorf("folding %q shows %d curl lines, %d before; want one fewer", title, folded, before)
	}
	b.Do(chromedp.Click(chromedp.CSS(`#with-curl > summary`)))
	if unfolded := strings.Count(b.visible(), "curl -sS -i "); unfolded != before {
		t.Errorf("unfolding %q again shows %d curl lines; want %d", title, unfolded, before)
	}
	if os.Getenv("UPDATE_SCREENSHOT") == "1" {
		b.Do(chromedp.Navigate("file://" + suite)) // as it opens, the first failure of each cause open
		png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
		if err != nil || len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(screenshotPath, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	har := filepath.Join(dir, "har.html")
	code, out, errOut := runInProcess([]string{"--har", "testdata/browser.har", "--html-report", har}, map[string]string{"INVENTORY_API_KEY": testKey})
	if code != cli.ExitFailed {
		t.Fatalf("--har: exit %d; want 1\n%s%s", code, out, errOut)
	}
	b.open(har)
	text = b.visible()
	for _, want := range []string{"inventory-conformance --har browser.har", "response-body-schema", "curl -sS -i ", `"on-hold"`, "Coverage:"} {
		if !strings.Contains(text, want) {
			t.Errorf("the HAR check's page does not show %q:\n%.3000s", want, text)
		}
	}
	if strings.Contains(text, "har-browser-token-0a1b2c") {
		t.Error("the page shows the recording's token")
	}
}
