package dashboard_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/dashboard/chromiumtest"
)

// The keys of the mocks under test. The admin key is not an API key, as
// with --admin-key.
const (
	adminKey = "admin-key-for-the-dashboard-test"
	apiKey   = "api-key-for-the-dashboard-test"
)

// startMock serves a mock of the embedded contract and its 64 fixture
// pets on loopback; wrap, if given, wraps its handler, and records, if
// given, replaces the fixtures.
func startMock(t *testing.T, wrap func(http.Handler) http.Handler, records ...fixtures.Record) (*mockserver.Server, *httptest.Server) {
	t.Helper()
	return mockserver.StartTest(t, mockserver.Config{Records: records, APIKeys: []string{apiKey}, AdminKey: adminKey, JournalSize: mockserver.DefaultJournalSize}, wrap)
}

// A tab is one headless Chromium, started for one test, with one tab that
// records every request it sends, every exception its scripts throw and
// every violation of the page's Content-Security-Policy.
type tab struct {
	t   *testing.T
	ctx context.Context

	mu         sync.Mutex // guards requests and exceptions
	requests   []*network.Request
	exceptions []string
}

// openTab starts Chromium with the flags this machine needs (its closed
// network refuses the connections Chromium makes in the background) and
// a fresh profile, at 1280x800.
func openTab(t *testing.T) *tab {
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
		chromedp.WindowSize(1280, 800),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tb := &tab{t: t}
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithListener(tb.listen))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	tb.ctx = ctx
	// The first run starts the browser and ties it to the context it is
	// given: this one, which lives as long as the test.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	tb.do(
		chromedp.EmulateViewport(1280, 800),
		func(ctx context.Context, target *chromedp.Target) (chromedp.Void, error) {
			// Before any script of the page: scripts the protocol adds are
			// not subject to the page's policy.
			_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: `window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`,
			})
			return chromedp.Void{}, err
		},
	)
	return tb
}

// listen runs in the tab's event loop: it only records.
func (tb *tab) listen(ev any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		tb.requests = append(tb.requests, e.Request)
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		tb.exceptions = append(tb.exceptions, text)
	}
}

// do runs actions, failing the test on an error.
func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("chromium: %v", err)
	}
}

// eval evaluates a JavaScript expression into v. The protocol's
// evaluation is not subject to the page's policy, which forbids eval.
func (tb *tab) eval(expr string, v any) {
	tb.t.Helper()
	raw, err := chromedp.Run(tb.ctx, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		tb.t.Fatalf("evaluating %s: %v", expr, err)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			tb.t.Fatalf("evaluating %s: %v: %s", expr, err, raw)
		}
	}
}

func (tb *tab) text(expr string) string {
	tb.t.Helper()
	var s string
	tb.eval(expr, &s)
	return s
}

// waitFor evaluates expr until it is true; after 10 s it fails the test,
// saying what it waited for and what the page showed. chromedp's Poll
// builds its predicate with new Function, which the page's policy
// forbids, so this polls from Go.
func (tb *tab) waitFor(what, expr string) {
	tb.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ok bool
		tb.eval("!!("+expr+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("waited 10 s for %s (%s); the page shows:\n%s", what, expr, tb.text(`document.body.innerText.slice(0, 1500)`))
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// sent returns the requests the tab has sent.
func (tb *tab) sent() []*network.Request {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]*network.Request(nil), tb.requests...)
}

// checkClean fails the test if a script threw, the policy refused
// anything, or a request left the mock's origin.
func (tb *tab) checkClean(origin string) {
	tb.t.Helper()
	tb.mu.Lock()
	exceptions := tb.exceptions
	tb.mu.Unlock()
	if len(exceptions) > 0 {
		tb.t.Errorf("the page's scripts threw: %v", exceptions)
	}
	var violations []string
	tb.eval(`window.__violations`, &violations)
	if len(violations) > 0 {
		tb.t.Errorf("the Content-Security-Policy refused: %v", violations)
	}
	for _, r := range tb.sent() {
		if !strings.HasPrefix(r.URL, origin+"/") {
			tb.t.Errorf("the page sent a request to another origin: %s %s", r.Method, r.URL)
		}
	}
}

// screenshot captures the viewport; it writes it to testdata when
// UPDATE_SCREENSHOT=1 (the READMEs' picture), and to DASHBOARD_SHOTS, a
// folder, when that is set, for a look at every layout.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	png, err := chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.t.Fatalf("screenshot: %v", err)
	}
	if len(png) < 1000 {
		tb.t.Fatalf("screenshot: %d bytes", len(png))
	}
	if name == "dashboard.png" && os.Getenv("UPDATE_SCREENSHOT") == "1" {
		if err := os.WriteFile(filepath.Join("testdata", name), png, 0o644); err != nil {
			tb.t.Fatal(err)
		}
	}
	if dir := os.Getenv("DASHBOARD_SHOTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			tb.t.Fatal(err)
		}
	}
}

// call sends one request to the mock from outside the page, as the app
// under development would.
func call(t *testing.T, srv *httptest.Server, method, path, body string, header ...string) (int, string) {
	t.Helper()
	r, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+apiKey)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// js quotes a Go string for JavaScript.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// logIn opens the dashboard and gives it the admin key.
func (tb *tab) logIn(srv *httptest.Server) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(srv.URL + "/__admin/"))
	tb.waitFor("the key prompt", `document.activeElement && document.activeElement.id === 'key'`)
	tb.do(chromedp.SendKeys(chromedp.ID("key"), adminKey+kb.Enter))
	tb.waitFor("the dashboard", `!document.getElementById('app').hidden && document.querySelectorAll('#records-body tr[data-key]').length > 0`)
}

// choose picks an option of a select, as a person would: the select
// changes, and says so.
func (tb *tab) choose(id, value string) {
	tb.t.Helper()
	var options []string
	tb.eval(`[...document.getElementById(`+js(id)+`).options].map(o => o.value)`, &options)
	if !slices.Contains(options, value) {
		tb.t.Fatalf("select #%s has no option %q; it has %q", id, value, options)
	}
	tb.do(chromedp.Focus(chromedp.ID(id)), chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById(`+js(id)+`);
		s.value = `+js(value)+`; s.dispatchEvent(new Event('change', {bubbles: true})); })()`))
}
