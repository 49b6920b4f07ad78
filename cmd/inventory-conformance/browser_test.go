package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/mockserver/dashboard/chromiumtest"
)

// screenshotPath is the HTML report's picture in the README, written by
// TestHTMLReportInChromium when UPDATE_SCREENSHOT=1.
const screenshotPath = "../../conformance/report/testdata/html-report.png"

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

// A browser is one headless Chromium with one tab, started for one test,
// that records every request the tab sends, every exception a script
// throws and every refusal of the page's Content-Security-Policy.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu         sync.Mutex // guards requests and exceptions
	requests   []string
	exceptions []string
}

// openBrowser starts Chromium as the dashboard's tests do (no network in
// the background, a fresh profile) at 1280x1000; it skips the test where
// there is none (chromiumtest.Path).
func openBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumtest.Path(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Env(chromiumtest.TempEnv(t)),
		chromedp.WindowSize(1280, 1000),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{t: t}
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithListener(b.listen))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b.ctx = ctx
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	b.do(chromedp.EmulateViewport(1280, 1000),
		func(ctx context.Context, target *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: `window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`,
			})
			return chromedp.Void{}, err
		})
	return b
}

func (b *browser) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, e.Request.URL)
	case *runtime.EventExceptionThrown:
		b.exceptions = append(b.exceptions, e.ExceptionDetails.Text)
	}
}

func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("chromium: %v", err)
	}
}

// eval evaluates a JavaScript expression into v; the protocol's
// evaluation is not subject to the page's policy.
func (b *browser) eval(expr string, v any) {
	b.t.Helper()
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		b.t.Fatalf("evaluating %s: %v: %s", expr, err, raw)
	}
}

// visible returns the text the page shows: what a person reads, closed
// <details> left out.
func (b *browser) visible() string {
	b.t.Helper()
	var s string
	b.eval(`document.body.innerText`, &s)
	return s
}

// open loads a report file and checks that the page sent no request but
// its own load, ran nothing, and that its policy refused nothing.
func (b *browser) open(path string) {
	b.t.Helper()
	b.mu.Lock()
	b.requests = nil
	b.mu.Unlock()
	abs, _ := filepath.Abs(path)
	b.do(chromedp.Navigate("file://" + abs))
	var violations []string
	b.eval(`window.__violations`, &violations)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(violations) > 0 {
		b.t.Errorf("%s: the Content-Security-Policy refused %v", filepath.Base(path), violations)
	}
	if len(b.exceptions) > 0 {
		b.t.Errorf("%s: scripts threw %v", filepath.Base(path), b.exceptions)
	}
	for _, u := range b.requests {
		if u != "file://"+abs {
			b.t.Errorf("%s: the page sent a request: %s", filepath.Base(path), u)
		}
	}
}

// TestHTMLReportInChromium opens the HTML reports of a failing suite run
// and of a HAR check in headless Chromium, from their files, as a person
// does: each shows its verdict and its failures by cause, the first
// failure of each cause open with its curl line, the others open on a
// click; the page sends no request but its own load and runs nothing.
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
	var closed int
	b.eval(`document.querySelectorAll('details.failure:not([open])').length`, &closed)
	if closed == 0 {
		t.Fatalf("no closed failure to open")
	}
	var title string
	b.eval(`document.querySelector('details.failure:not([open]) > summary').innerText`, &title)
	before := strings.Count(text, "curl -sS -i ")
	b.do(chromedp.Click(chromedp.CSS(`details.failure:not([open]) > summary`)))
	if after := strings.Count(b.visible(), "curl -sS -i "); after != before+1 {
		t.Errorf("opening %q shows %d curl lines, %d before; want one more", title, after, before)
	}
	if os.Getenv("UPDATE_SCREENSHOT") == "1" {
		b.do(chromedp.Navigate("file://" + suite)) // as it opens, the first failure of each cause open
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
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
